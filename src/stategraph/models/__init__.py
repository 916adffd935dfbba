"""Chat models: the protocol stategraph uses, a base class, and provider adapters.

* :class:`ChatModelProtocol` — what ``create_react_agent``, ``ToolNode`` and your
  nodes need from a model (``invoke``/``ainvoke``/``stream``/``astream``/
  ``bind_tools``). LangChain chat models fit it as they are.
* :class:`ChatModel` — the base of stategraph's own models: write ``_stream`` and get
  the rest, including token streaming to ``stream_mode="messages"``.
* ``stategraph.models.openai.ChatOpenAI`` and ``stategraph.models.anthropic.
  ChatAnthropic`` wrap the vendors' SDK clients (optional extras ``openai`` and
  ``anthropic``); ``stategraph.testing.FakeChatModel`` replies from a script.

Names are imported lazily, so ``import stategraph.models`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["ChatModel", "ChatModelProtocol", "tool_spec"]

_LAZY = {
    "ChatModel": "stategraph.models.base",
    "ChatModelProtocol": "stategraph.models.base",
    "tool_spec": "stategraph.models._tools",
}

if TYPE_CHECKING:
    from stategraph.models._tools import tool_spec
    from stategraph.models.base import ChatModel, ChatModelProtocol


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'stategraph.models' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
