"""``DaskExecutor()`` with no client and no address starts a local cluster (issue 24),
as ``RayExecutor()`` starts a local Ray, and closes it with the executor. Run in a
fresh interpreter: another test's Dask client would otherwise be the default."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

SCRIPT = textwrap.dedent(
    """
    import operator
    from typing import Annotated

    import distributed
    from typing_extensions import TypedDict

    from stategraph.executors.dask import DaskExecutor
    from stategraph.graph import START, StateGraph

    class S(TypedDict, total=False):
        items: Annotated[list[int], operator.add]

    def double(state):
        return {"items": [2]}

    if __name__ == "__main__":
        try:
            distributed.get_client()
            raise SystemExit("a default client exists already")
        except ValueError:
            pass
        executor = DaskExecutor()
        cluster = type(executor.client.cluster).__name__
        builder = StateGraph(S)
        builder.add_node("double", double)
        builder.add_edge(START, "double")
        out = builder.compile(executor=executor).invoke({"items": [1]})
        executor.close()
        print(cluster, out["items"], executor.client.status)
    """
)


def test_dask_executor_without_a_client_starts_a_local_cluster(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    script = tmp_path / "dask_local.py"
    script.write_text(SCRIPT)
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-2000:]
    line = done.stdout.strip().splitlines()[-1]
    assert line.startswith("LocalCluster [1, 2] ") and line.split()[-1] in ("closed", "closing")
