"""pending_migrations: the migrations a database still needs, or a clear refusal."""

from __future__ import annotations

import pytest

from stategraph._migrations import pending_migrations

MIGRATIONS = (("CREATE TABLE a (x INT)",), ("ALTER TABLE a ADD y INT",), ("DROP TABLE b",))


def test_positions_left_to_apply() -> None:
    assert list(pending_migrations("The s schema", 0, MIGRATIONS)) == [0, 1, 2]
    assert list(pending_migrations("The s schema", 2, MIGRATIONS)) == [2]
    assert list(pending_migrations("The s schema", 3, MIGRATIONS)) == []


def test_a_newer_schema_is_refused_with_its_name() -> None:
    with pytest.raises(RuntimeError) as info:
        pending_migrations("The store schema in this database", 5, MIGRATIONS)
    assert str(info.value) == (
        "The store schema in this database is version 5, newer than this stategraph "
        "supports (3). Upgrade stategraph."
    )
