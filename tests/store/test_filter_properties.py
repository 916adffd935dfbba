"""Property test: filtered searches agree across stores and with the Python reference.

SqliteStore narrows rows with an SQL pre-filter before applying the Python filter;
this checks, on random values and filters, that the narrowing never drops a row the
Python filter accepts (every store returns exactly the reference result).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stategraph.store._filters import matches
from stategraph.store.memory import InMemoryStore
from stategraph.store.sqlite import SqliteStore

KEYS = ["a", "b", "a.b", "c-d", "0", "é"]
FILTER_KEYS = [*KEYS, "a.0", "b.a", "missing", "a.b.c"]
OPS = ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=3),
    st.integers(min_value=2**62, max_value=2**65),
    st.floats(min_value=-3, max_value=3, allow_nan=False),
    st.sampled_from(["", "a", "b", "ab", 'q"', "é"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(KEYS), inner, max_size=3),
    ),
    max_leaves=6,
)
documents = st.dictionaries(st.sampled_from(KEYS), values, max_size=4)
conditions = st.one_of(
    scalars,
    st.dictionaries(st.sampled_from(OPS), scalars, min_size=1, max_size=2),
    st.dictionaries(st.sampled_from(["a", "b"]), scalars, min_size=1, max_size=1),
)
filters = st.dictionaries(st.sampled_from(FILTER_KEYS), conditions, min_size=1, max_size=2)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=st.lists(documents, min_size=1, max_size=6), flt=filters)
def test_filtered_search_matches_reference(docs, flt):
    expected = sorted(str(i) for i, doc in enumerate(docs) if matches(doc, flt))
    memory = InMemoryStore()
    sqlite = SqliteStore(":memory:")
    try:
        for store in (memory, sqlite):
            for i, doc in enumerate(docs):
                store.put(("p",), str(i), doc)
            found = sorted(r.key for r in store.search(("p",), filter=flt, limit=100))
            assert found == expected, (type(store).__name__, docs, flt)
    finally:
        sqlite.close()
