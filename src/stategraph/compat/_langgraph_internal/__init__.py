"""Stand-ins for the private ``langgraph._internal`` modules that libraries built on
LangGraph import (reached as ``langgraph._internal...`` through the alias)."""
