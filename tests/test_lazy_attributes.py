"""``stategraph._lazy.lazy_attributes``: package names imported on first use."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest

from stategraph._lazy import lazy_attributes


def test_first_access_imports_and_caches() -> None:
    namespace: dict[str, object] = {"__all__": ["dumps", "loads"]}
    getattr_, dir_ = lazy_attributes("pkg", {"dumps": "json", "loads": "json"}, namespace)
    import json

    assert getattr_("dumps") is json.dumps
    assert namespace["dumps"] is json.dumps
    assert dir_() == ["dumps", "loads"]
    with pytest.raises(AttributeError, match="module 'pkg' has no attribute 'nope'"):
        getattr_("nope")


def test_packages_stay_lazy() -> None:
    code = (
        "import sys, stategraph.prebuilt, stategraph.models\n"
        "assert 'stategraph.prebuilt.tool_node' not in sys.modules\n"
        "assert 'stategraph.models._base' not in sys.modules\n"
        "from stategraph.prebuilt import ToolNode\n"
        "assert 'stategraph.prebuilt.tool_node' in sys.modules\n"
        "import stategraph.models as m\n"
        "assert m.ChatModel.__name__ == 'ChatModel' and 'ChatModel' in dir(m)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_missing_name_names_the_package() -> None:
    import stategraph.prebuilt

    assert isinstance(stategraph.prebuilt, types.ModuleType)
    with pytest.raises(AttributeError, match=r"module 'stategraph\.prebuilt' has no attribute"):
        stategraph.prebuilt.not_there
