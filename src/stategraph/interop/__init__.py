"""Bridges to other libraries' models, messages and tools (each optional).

* :mod:`stategraph.interop.langchain` — LangChain chat models, tools and message
  classes inside stategraph graphs. It is loaded only once the application has
  imported ``langchain_core`` (see :mod:`stategraph._bridges`).
"""
