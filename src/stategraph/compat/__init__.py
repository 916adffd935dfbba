"""Running code written for LangGraph on stategraph, unchanged.

:func:`install_langgraph_alias` makes ``import langgraph...`` resolve to stategraph, so
libraries built on LangGraph (langgraph-swarm, langgraph-supervisor, LangChain 1.x's
``langchain.agents.create_agent``) run on stategraph without edits. Put it first in
the application, before anything imports them::

    import stategraph.compat
    stategraph.compat.install_langgraph_alias()

    from langchain.agents import create_agent      # now built on stategraph

It is opt-in and refuses to run when LangGraph itself is installed (two libraries
would then answer to one name). Nothing in stategraph imports this package.
"""

from __future__ import annotations

from stategraph.compat._alias import (
    LangGraphInstalledError,
    alias_installed,
    install_langgraph_alias,
    uninstall_langgraph_alias,
)

__all__ = [
    "LangGraphInstalledError",
    "alias_installed",
    "install_langgraph_alias",
    "uninstall_langgraph_alias",
]
