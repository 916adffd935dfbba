"""The kept state views (pregel._views): node inputs, values chunks and outputs built from
them are exactly what reading every channel would give."""

from __future__ import annotations

import operator
import random
from typing import Annotated, Any, TypedDict

from stategraph.channels.base import MISSING
from stategraph.channels.binop import BinaryOperatorAggregate
from stategraph.channels.last_value import LastValue
from stategraph.channels.topic import Topic
from stategraph.graph import END, START, StateGraph
from stategraph.pregel._algo import plain_value_channel, read_channels
from stategraph.pregel._views import ReadSets, StateViews, read_sets


def test_views_match_read_channels_through_random_changes() -> None:
    rng = random.Random(23)
    names = [f"k{i}" for i in range(8)]
    for _trial in range(300):
        chans: dict[str, Any] = {n: LastValue(int, n) for n in names}
        select = list(names)
        rng.shuffle(select)
        views = StateViews(chans, ReadSets())
        for _step in range(12):
            got = views.read(select)
            want = read_channels(chans, select)
            assert list(got.items()) == list(want.items())
            changed = rng.sample(names, rng.randint(0, 3))
            for n in changed:
                chans[n].value = rng.choice([1, 2, [3], MISSING])
            views.changed(changed)


def test_each_reader_gets_its_own_dict() -> None:
    chans: dict[str, Any] = {"a": LastValue(int, "a"), "b": LastValue(int, "b")}
    chans["a"].value = 1
    views = StateViews(chans, ReadSets())
    first = views.read(["a", "b"])
    first["a"] = 99
    first["zzz"] = 0
    assert views.read(["a", "b"]) == {"a": 1}


def test_lists_with_the_same_names_share_a_number() -> None:
    sets = ReadSets()
    one, two, other = ["a", "b"], ["a", "b"], ["b", "a"]
    assert sets.number(one) == sets.number(two) == 0
    assert sets.number(other) == 1
    assert sets.position(1, "a") == 1


def test_a_list_with_a_topic_is_read_afresh_each_time() -> None:
    topic = Topic(int, "t")
    topic.update([1])
    chans: dict[str, Any] = {"t": topic, "a": LastValue(int, "a")}
    assert not plain_value_channel(Topic)
    assert plain_value_channel(LastValue)
    assert plain_value_channel(BinaryOperatorAggregate)
    views = StateViews(chans, ReadSets())
    first = views.read(["a", "t"])
    first["t"].append(2)  # a Topic hands out a new list per read
    assert views.read(["a", "t"]) == {"t": [1]}
    assert views.values == {}


def _wide(k: int) -> Any:
    schema = TypedDict("Wide", {f"k{i}": int for i in range(k)})  # type: ignore[misc]
    seen: list[dict[str, Any]] = []

    def writer(i: int) -> Any:
        def node(state: dict[str, Any]) -> dict[str, Any]:
            seen.append(dict(state))
            state["k0"] = -1  # changing the input changes nothing else
            # keys 0, 7, 2, 9, 4, 11, 6, 1, 8, 3 in turn: some appear after every key
            # the state holds, some before its last one, the last one is rewritten
            return {f"k{(i * 7) % k}": i}

        return node

    builder = StateGraph(schema)
    prev = START
    for i in range(10):
        builder.add_node(f"n{i}", writer(i))
        builder.add_edge(prev, f"n{i}")
        prev = f"n{i}"
    builder.add_edge(prev, END)
    return builder.compile(), seen


def test_node_inputs_and_values_follow_the_writes_in_key_order() -> None:
    graph, seen = _wide(12)
    chunks = list(graph.stream({"k3": 3}, stream_mode="values"))
    state: dict[str, Any] = {"k3": 3}
    expected_inputs = []
    expected_chunks = [dict(state)]
    for i in range(10):
        expected_inputs.append({k: state[k] for k in sorted(state, key=lambda s: int(s[1:]))})
        state[f"k{(i * 7) % 12}"] = i
        expected_chunks.append({k: state[k] for k in sorted(state, key=lambda s: int(s[1:]))})
    assert [list(s.items()) for s in seen] == [list(s.items()) for s in expected_inputs]
    assert [list(c.items()) for c in chunks] == [list(c.items()) for c in expected_chunks]
    final = graph.invoke({"k3": 3})
    assert list(final.items()) == list(expected_chunks[-1].items())
    # a second run starts from fresh views
    seen.clear()
    graph.invoke({"k1": 1})
    assert seen[0] == {"k1": 1}


class _Counter(TypedDict):
    items: Annotated[list[int], operator.add]
    note: str


def test_reducer_and_router_see_the_current_state() -> None:
    def add(state: _Counter) -> dict[str, Any]:
        return {"items": [len(state["items"])], "note": f"n{len(state['items'])}"}

    builder = StateGraph(_Counter)
    builder.add_node("add", add)
    builder.add_edge(START, "add")
    builder.add_conditional_edges("add", lambda s: END if len(s["items"]) >= 4 else "add")
    graph = builder.compile()
    assert graph.invoke({"items": []}) == {"items": [0, 1, 2, 3], "note": "n3"}
    assert read_sets(graph).by_names  # the graph's read lists were numbered
