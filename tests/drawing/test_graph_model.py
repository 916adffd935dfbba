"""The Graph / Node / Edge object model returned by get_graph()."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from stategraph.drawing import Edge, Graph, Node


def build(nodes: list[str], edges: list[tuple[str, str]]) -> Graph:
    g = Graph()
    for n in nodes:
        g.add_node(None, n)
    for s, t in edges:
        g.add_edge(g.nodes[s], g.nodes[t])
    return g


def test_nodes_are_a_dict_of_named_tuples_with_data_and_metadata():
    g = Graph()

    def tool(x: int) -> int:
        return x

    node = g.add_node(tool, "t", metadata={"k": 1})
    assert g.nodes == {"t": node}
    assert (node.id, node.name, node.data, node.metadata) == ("t", "tool", tool, {"k": 1})
    assert node.copy(id="u").id == "u" and node.copy(id="u").name == "tool"


def test_add_node_without_id_makes_a_unique_hex_id():
    g = Graph()
    a, b = g.add_node(None), g.add_node(None)
    assert a.id != b.id and len(a.id) == 32 and int(a.id, 16) >= 0


def test_duplicate_ids_and_foreign_edge_ends_are_rejected():
    g = build(["a"], [])
    with pytest.raises(ValueError, match="'a' already exists"):
        g.add_node(None, "a")
    with pytest.raises(ValueError, match="Source node 'zz'"):
        g.add_edge(Node("zz", "zz", None, None), g.nodes["a"])
    with pytest.raises(ValueError, match="Target node 'zz'"):
        g.add_edge(g.nodes["a"], Node("zz", "zz", None, None))


def test_edges_carry_label_and_conditional_flag():
    g = build(["a", "b"], [])
    e = g.add_edge(g.nodes["a"], g.nodes["b"], "go", conditional=True)
    assert (e.source, e.target, e.data, e.conditional) == ("a", "b", "go", True)
    assert e.copy(target="c") == Edge("a", "c", "go", True)


def test_remove_node_drops_its_edges():
    g = build(["a", "b", "c"], [("a", "b"), ("b", "c")])
    g.remove_node(g.nodes["b"])
    assert list(g.nodes) == ["a", "c"] and g.edges == []


def test_first_and_last_node_must_be_unique():
    g = build(["s", "a", "e"], [("s", "a"), ("a", "e")])
    assert g.first_node().id == "s" and g.last_node().id == "e"
    g.add_node(None, "lonely")
    assert g.first_node() is None and g.last_node() is None


def test_trim_removes_ends_only_when_another_node_takes_their_place():
    g = build(["s", "a", "e"], [("s", "a"), ("a", "e")])
    g.trim_first_node()
    g.trim_last_node()
    assert list(g.nodes) == ["a"]
    fan = build(["s", "a", "b"], [("s", "a"), ("s", "b")])
    fan.trim_first_node()  # two outgoing edges: stays
    assert "s" in fan.nodes
    loop = build(["s", "a", "b"], [("s", "a"), ("a", "b"), ("b", "a")])
    loop.trim_first_node()  # without s nothing would be first: stays
    assert "s" in loop.nodes


def test_extend_prefixes_ids_keeps_names_and_returns_the_ends():
    g = build(["x"], [])
    sub = build(["s", "p", "e"], [("s", "p"), ("p", "e")])
    first, last = g.extend(sub, prefix="sub")
    assert list(g.nodes) == ["x", "sub:s", "sub:p", "sub:e"]
    assert g.nodes["sub:p"].name == "p"
    assert (first.id, last.id) == ("sub:s", "sub:e")
    assert Edge("sub:s", "sub:p") in g.edges


def test_reid_gives_generated_ids_readable_names():
    g = Graph()
    a1, a2, b = g.add_node(None), g.add_node(None), g.add_node(None)
    g.nodes[a1.id] = a1._replace(name="a")
    g.nodes[a2.id] = a2._replace(name="a")
    g.nodes[b.id] = b._replace(name="b")
    g.nodes["kept"] = Node("kept", "other", None, None)
    g.edges = [Edge(a1.id, b.id), Edge(a2.id, "kept")]
    r = g.reid()
    assert list(r.nodes) == ["a_1", "a_2", "b", "kept"]
    assert r.edges == [Edge("a_1", "b"), Edge("a_2", "kept")]


class Schema(BaseModel):
    x: int


def test_to_json_shapes():
    g = Graph()
    g.add_node(Schema, "schema")
    g.add_node(None, "end", metadata={})
    g.edges = [Edge("schema", "end", "lbl", True), Edge("end", "schema")]
    js = g.to_json()
    assert js["nodes"] == [
        {"id": "schema", "type": "schema", "data": "Schema"},
        {"id": "end", "metadata": {}},
    ]
    assert js["edges"] == [
        {"source": "schema", "target": "end", "data": "lbl", "conditional": True},
        {"source": "end", "target": "schema"},
    ]
    with_schema = g.to_json(with_schemas=True)["nodes"][0]["data"]
    assert with_schema["properties"] == {"x": {"title": "X", "type": "integer"}}


def test_empty_graph_is_falsy():
    assert not Graph()
    assert build(["a"], [])
