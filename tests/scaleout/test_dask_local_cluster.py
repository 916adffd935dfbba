"""``DaskExecutor()`` with no client and no address starts a local cluster (issue 24),
as ``RayExecutor()`` starts a local Ray, and closes it with the executor."""

from __future__ import annotations

import operator
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from stategraph.graph import START, StateGraph

pytestmark = pytest.mark.slow


class S(TypedDict, total=False):
    items: Annotated[list[int], operator.add]


def double(state: S) -> S:
    return {"items": [2]}


def test_dask_executor_without_a_client_starts_a_local_cluster() -> None:
    distributed = pytest.importorskip("distributed")
    from stategraph.executors.dask import DaskExecutor

    with pytest.raises(ValueError):
        distributed.get_client()  # no client around: the executor must make one
    executor = DaskExecutor()
    try:
        assert executor.client.cluster is not None
        assert type(executor.client.cluster).__name__ == "LocalCluster"
        builder = StateGraph(S)
        builder.add_node("double", double)
        builder.add_edge(START, "double")
        graph = builder.compile(executor=executor)
        assert graph.invoke({"items": [1]}) == {"items": [1, 2]}
    finally:
        executor.close()
    assert executor.client.status in ("closed", "closing")
