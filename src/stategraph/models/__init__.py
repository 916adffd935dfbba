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

from typing import TYPE_CHECKING

from stategraph._lazy import lazy_attributes

__all__ = ["ChatModel", "ChatModelProtocol", "tool_spec"]

_LAZY = {
    "ChatModel": "stategraph.models._base",
    "ChatModelProtocol": "stategraph.models._base",
    "tool_spec": "stategraph.models._tools",
}

if TYPE_CHECKING:
    from stategraph.models._base import ChatModel, ChatModelProtocol
    from stategraph.models._tools import tool_spec


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())
