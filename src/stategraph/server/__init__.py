"""``stategraph serve``: an agent server speaking LangGraph Server's HTTP API.

An application over the library (nothing in the library imports it): assistants,
threads, runs on a durable queue, crons, webhooks, the store and auth, embedded on
SQLite by default or on PostgreSQL. Start it with ``stategraph serve``; see
``docs/server.md``.
"""
