"""ToolNode error handling: handle_tool_errors variants, unknown tools, invalid arguments."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from stategraph.prebuilt import (
    ToolInvocationError,
    ToolNode,
)

from .helpers import Runner, add, as_tuples, call, fail, run_tools


# ---------------------------------------------------------------------- errors
def test_unknown_tool_always_yields_an_error_message(run: Runner) -> None:
    out = run_tools(run, ToolNode([add, fail], handle_tool_errors=False), call("nope", {}, "9"))
    assert as_tuples(out) == [
        ("Error: nope is not a valid tool, try one of [add, fail].", "nope", "9", "error")
    ]


def test_default_reports_invalid_arguments(run: Runner) -> None:
    out = run_tools(run, ToolNode([add]), call("add", {"a": "x", "b": 1}, "1"))
    assert as_tuples(out) == [
        (
            "Error invoking tool 'add' with kwargs {'a': 'x', 'b': 1} with error:\n"
            " a: Input should be a valid integer, unable to parse string as an integer\n"
            " Please fix the error and try again.",
            "add",
            "1",
            "error",
        )
    ]


def test_default_lets_execution_errors_propagate(run: Runner) -> None:
    with pytest.raises(ValueError, match="bad input"):
        run_tools(run, ToolNode([fail]), call("fail", {"reason": "input"}))


@pytest.mark.parametrize(
    ("flag", "content"),
    [
        (True, "Error: ValueError('bad x')\n Please fix your mistakes."),
        ("Tool failed, try again.", "Tool failed, try again."),
        (lambda e: f"handled: {e}", "handled: bad x"),
        (ValueError, "Error: ValueError('bad x')\n Please fix your mistakes."),
        ((KeyError, ValueError), "Error: ValueError('bad x')\n Please fix your mistakes."),
    ],
    ids=["true", "str", "callable", "type", "tuple"],
)
def test_handled_errors_become_error_messages(run: Runner, flag: Any, content: str) -> None:
    out = run_tools(
        run,
        ToolNode([fail, add], handle_tool_errors=flag),
        call("fail", {"reason": "x"}, "1"),
        call("add", {"a": 1, "b": 1}, "2"),
    )
    assert as_tuples(out) == [(content, "fail", "1", "error"), ("2", "add", "2", "success")]


def test_true_also_wraps_invalid_arguments(run: Runner) -> None:
    out = run_tools(run, ToolNode([add], handle_tool_errors=True), call("add", {"a": 1}, "1"))
    assert out[0].status == "error"
    assert out[0].content.startswith("Error: ToolInvocationError(\"Error invoking tool 'add'")
    assert out[0].content.endswith("\n Please fix your mistakes.")


def only_key_errors(e: KeyError) -> str:
    return "key handled"


def value_or_type_errors(e: ValueError | TypeError) -> str:
    return f"handled {type(e).__name__}"


@pytest.mark.parametrize(
    "flag",
    [False, (KeyError,), KeyError, only_key_errors],
    ids=["false", "tuple", "type", "annotated"],
)
def test_unhandled_errors_propagate(run: Runner, flag: Any) -> None:
    with pytest.raises(ValueError, match="bad x"):
        run_tools(run, ToolNode([fail], handle_tool_errors=flag), call("fail", {"reason": "x"}))


def test_handler_annotation_with_a_union(run: Runner) -> None:
    out = run_tools(
        run,
        ToolNode([fail], handle_tool_errors=value_or_type_errors),
        call("fail", {"reason": "x"}),
    )
    assert out[0].content == "handled ValueError"


def test_false_raises_invalid_arguments_as_tool_invocation_error(run: Runner) -> None:
    with pytest.raises(ToolInvocationError, match="Error invoking tool 'add'"):
        run_tools(run, ToolNode([add], handle_tool_errors=False), call("add", {"a": "x", "b": 1}))


def test_first_unhandled_error_in_call_order_wins(run: Runner) -> None:
    def first() -> str:
        """Fails slowly."""
        threading.Event().wait(0.03)
        raise KeyError("first")

    def second() -> str:
        """Fails fast."""
        raise IndexError("second")

    with pytest.raises(KeyError, match="first"):
        run_tools(
            run,
            ToolNode([first, second], handle_tool_errors=False),
            call("first", id="1"),
            call("second", id="2"),
        )


def test_bad_handler_value_is_reported(run: Runner) -> None:
    with pytest.raises(TypeError, match="handle_tool_errors=3 is not supported"):
        run_tools(run, ToolNode([fail], handle_tool_errors=3), call("fail", {"reason": "x"}))  # type: ignore[arg-type]
