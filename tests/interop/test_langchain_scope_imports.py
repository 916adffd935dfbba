"""The LangChain task scope imports what its task-thread functions use when it loads.

Its functions (``enter_task``, ``enter_call``...) run on a task's thread. A stategraph
module imported there for the first time can meet another thread's import; under
pytest's assertion rewriting (our pytest plugin marks the package), Python 3.11 then
fails with "SystemError: AST constructor recursion depth mismatch" (seen in CI once
observer modules became lazy). So the scope module loads them itself.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("langchain_core")


def test_loading_the_scope_loads_the_observer_modules_its_task_functions_use() -> None:
    code = (
        "import sys\n"
        "import stategraph.interop.langchain._scope\n"
        "wanted = ['stategraph.observe._callbacks', 'stategraph.observe._events',\n"
        "          'stategraph.observe._model_calls', 'stategraph.config']\n"
        "print(sorted(m for m in wanted if m not in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "[]"
