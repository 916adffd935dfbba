"""Finding the bridges to optional model libraries, without importing them.

stategraph works with LangChain's messages, models and tools when the application
uses them, but never imports ``langchain_core`` itself. When a layer needs the bridge
(the runtime, to let LangChain models stream into ``stream_mode="messages"``; the
message reducer and the prebuilt agents, to keep LangChain's message classes), it asks
:func:`langchain_bridge`, which answers only once the application has imported
``langchain_core``. The bridge lives in :mod:`stategraph.interop.langchain`; this is
the one place lower layers reach it, by name.
"""

from __future__ import annotations

import sys
from types import ModuleType

__all__ = ["langchain_bridge"]

_LANGCHAIN_BRIDGE = "stategraph.interop.langchain"


def langchain_bridge() -> ModuleType | None:
    """:mod:`stategraph.interop.langchain` if ``langchain_core`` is in use, else ``None``."""
    if "langchain_core" not in sys.modules:
        return None
    bridge = sys.modules.get(_LANGCHAIN_BRIDGE)
    if bridge is None:
        import importlib

        bridge = importlib.import_module(_LANGCHAIN_BRIDGE)
    return bridge
