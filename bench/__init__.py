"""stategraph's benchmark suite: the same workloads on stategraph and LangGraph.

Run ``python -m bench`` from the repository root (``--help`` for options). LangGraph is
benchmarked side by side when ``langgraph``, ``langchain_core`` and
``langgraph-checkpoint-sqlite`` are importable in the same interpreter.
"""
