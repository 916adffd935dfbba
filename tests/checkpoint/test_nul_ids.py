"""One rule for NUL in ids, on every saver (issue 20 section 5).

PostgreSQL cannot store a NUL character in text; the savers used to differ (SQLite and
memory stored it, PostgreSQL raised a raw ``psycopg.DataError``). Every saver now
refuses a NUL in a thread id, checkpoint namespace or checkpoint id with
:class:`~stategraph.errors.InvalidIdentifierError` naming the argument, before writing.
"""

from __future__ import annotations

from typing import Any

import pytest
from saver_harness import Api

from stategraph.checkpoint.base import empty_checkpoint
from stategraph.errors import InvalidIdentifierError


def _cfg(thread_id: str, ns: str = "", checkpoint_id: str | None = None) -> dict[str, Any]:
    conf: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ns}
    if checkpoint_id is not None:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}


@pytest.mark.parametrize(
    ("config", "argument"),
    [
        (_cfg("a\x00b"), "thread_id"),
        (_cfg("t", "sub\x00graph"), "checkpoint_ns"),
        (_cfg("t", "", "1\x002"), "checkpoint_id"),
    ],
    ids=["thread_id", "checkpoint_ns", "checkpoint_id"],
)
async def test_nul_in_an_id_is_refused_before_anything_is_written(
    api: Api, config: dict[str, Any], argument: str
) -> None:
    good = await api.put(_cfg("t"), empty_checkpoint(), {"step": -1}, {})
    with pytest.raises(InvalidIdentifierError, match=argument) as info:
        await api.put(config, empty_checkpoint(), {"step": 0}, {})
    assert isinstance(info.value, ValueError) and "NUL" in str(info.value)
    writes_conf = dict(config["configurable"])
    writes_conf.setdefault("checkpoint_id", good["configurable"]["checkpoint_id"])
    with pytest.raises(InvalidIdentifierError, match=argument):
        await api.put_writes({"configurable": writes_conf}, [("ch", 1)], "task")
    with pytest.raises(InvalidIdentifierError, match=argument):
        await api.get_tuple(config)
    # nothing was written: the thread still has its one checkpoint
    assert [t.config for t in await api.list(_cfg("t"))] == [good]


async def test_nul_in_a_thread_id_given_directly_is_refused(api: Api) -> None:
    await api.put(_cfg("t"), empty_checkpoint(), {"step": -1}, {})
    with pytest.raises(InvalidIdentifierError, match="thread_id"):
        await api.delete_thread("t\x00")
    assert len(await api.list(_cfg("t"))) == 1


def test_the_shallow_postgres_saver_follows_the_same_rule() -> None:
    from saver_harness import PgSchema

    from stategraph.checkpoint.postgres.shallow import ShallowPostgresSaver

    schema = PgSchema()
    conn = schema.connect()
    try:
        saver = ShallowPostgresSaver(conn)
        saver.setup()
        with pytest.raises(InvalidIdentifierError, match="thread_id"):
            saver.put(_cfg("a\x00"), empty_checkpoint(), {"step": 0}, {})
        with pytest.raises(InvalidIdentifierError, match="checkpoint_ns"):
            saver.get_tuple(_cfg("t", "n\x00"))
        with pytest.raises(InvalidIdentifierError, match="thread_id"):
            saver.delete_thread("t\x00")
        assert list(saver.list(None)) == []
    finally:
        conn.close()
        schema.drop()
