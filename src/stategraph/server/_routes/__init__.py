"""The HTTP routes of LangGraph Server's API, one module per resource."""
