"""``stategraph studio``: a local web inspector for threads, checkpoints and interrupts.

An ASGI application (Starlette, served by Uvicorn; the ``studio`` extra) over a
checkpoint database: threads, checkpoint timelines, state diffs, pending writes and
interrupts, the graph drawing, the store, and, with ``--allow-writes`` and a graph,
actions (answer an interrupt, update the state, fork, start runs watched live). Its
HTTP API follows LangGraph Server's for the part it implements, so
:class:`~stategraph.pregel.remote.RemoteGraph` can drive a graph it serves.

Build the application with :func:`stategraph.studio.app.create_app`.
"""
