"""requires_extra: a missing optional package is reported with the extra that brings it."""

from __future__ import annotations

import pytest

from stategraph._optional import requires_extra


def test_missing_package_raises_the_message_chained_to_the_import_error() -> None:
    with pytest.raises(ImportError) as info:
        with requires_extra('X needs nosuchpkg: pip install "stategraph[x]"'):
            import nosuchpkg_for_stategraph_tests  # type: ignore[import-not-found]  # noqa: F401
    assert str(info.value) == 'X needs nosuchpkg: pip install "stategraph[x]"'
    assert isinstance(info.value.__cause__, ModuleNotFoundError)
    assert info.value.__cause__.name == "nosuchpkg_for_stategraph_tests"


def test_present_package_imports_normally() -> None:
    with requires_extra("never shown"):
        import json
    assert json.loads("[1]") == [1]


def test_other_errors_pass_through_unchanged() -> None:
    with pytest.raises(ValueError, match="not an import"):
        with requires_extra("never shown"):
            raise ValueError("not an import")
