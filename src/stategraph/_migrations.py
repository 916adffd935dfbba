"""Schema migrations: which numbered migrations a database still needs.

Savers and stores keep their schema as a tuple of migrations numbered by position and
record the last one applied; :func:`pending_migrations` is the step they share between
reading that number and running what is missing. This module imports nothing of
stategraph: savers and stores both use it.
"""

from __future__ import annotations

from collections.abc import Sized

__all__ = ["pending_migrations"]


def pending_migrations(schema: str, version: int, migrations: Sized) -> range:
    """The positions in ``migrations`` still to apply to a database at ``version``.

    Raises ``RuntimeError`` naming ``schema`` (e.g. ``"The store schema in this
    database"``) when ``version`` is newer than the migrations this stategraph knows.
    """
    if version > len(migrations):
        raise RuntimeError(
            f"{schema} is version {version}, newer than this "
            f"stategraph supports ({len(migrations)}). Upgrade stategraph."
        )
    return range(version, len(migrations))
