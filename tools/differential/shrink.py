"""Smaller variants of a program spec, for shrinking a difference to a minimal repro."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any


def _drop_target(opt: Any, name: str) -> Any:
    """``opt`` without references to node ``name`` (None when nothing is left)."""
    if isinstance(opt, str):
        return None if opt == name else opt
    if isinstance(opt, dict):
        return None if opt["send"] == name else opt
    kept = [o for o in (_drop_target(x, name) for x in opt) if o is not None]
    return kept or None


def _fix_router(router: dict, name: str) -> dict | None:
    opts = [o for o in (_drop_target(x, name) for x in router["options"]) if o is not None]
    if not opts:
        return None
    out = dict(router, options=opts)
    if router["kind"] == "bound" and len(opts) < 2:
        out["kind"] = "mod"
    return out


def remove_node(spec: dict, name: str) -> dict:
    """``spec`` without node ``name`` and everything pointing at it."""
    s = copy.deepcopy(spec)
    s["nodes"] = [n for n in s["nodes"] if n["name"] != name]
    edges = []
    for src, dst in s["edges"]:
        if dst == name or src == name:
            continue
        if isinstance(src, list):
            src = [x for x in src if x != name]
            if not src:
                continue
        edges.append([src, dst])
    s["edges"] = edges
    conds = []
    for c in s["conds"]:
        if c["src"] == name:
            continue
        router = _fix_router(c["router"], name)
        if router is not None:
            conds.append(dict(c, router=router))
    s["conds"] = conds
    for n in s["nodes"]:
        if n["ret"] == "cmd":
            router = _fix_router(n["goto"], name)
            if router is None:
                n["ret"] = "dict"
                del n["goto"]
            else:
                n["goto"] = router
        if n["kind"] == "sub" and n["sub"].get("parent_goto") is not None:
            n["sub"]["parent_goto"] = _drop_target(n["sub"]["parent_goto"], name)
    for key in ("interrupt_before", "interrupt_after"):
        s[key] = [x for x in s.get(key, []) if x != name]
    if s.get("update") and s["update"]["as_node"] == name:
        s["update"] = dict(s["update"], as_node=None)
    for i, inp in enumerate(s["inputs"]):
        if isinstance(inp, dict) and "__command__" in inp:
            goto = _drop_target(inp["__command__"]["goto"], name)
            s["inputs"][i] = {"__command__": dict(inp["__command__"], goto=goto or "__end__")}
    return s


def _node_variants(node: dict) -> Iterator[dict]:
    simpler: list[tuple[str, Any]] = [
        ("defer", False),
        ("interrupt", False),
    ]
    for key, value in simpler:
        if node.get(key):
            yield dict(node, **{key: value})
    for key in ("fail", "retry"):
        if key in node:
            yield {k: v for k, v in node.items() if k != key}
    if node["kind"] == "sub":
        yield {k: v for k, v in node.items() if k != "sub"} | {"kind": "fn"}
        sub = node["sub"]
        for flag in ("share_trace", "share_counter", "wrapped", "interrupt", "parent_goto"):
            if sub.get(flag):
                yield dict(node, sub=dict(sub, **{flag: False if flag != "parent_goto" else None}))
        if len(sub["nodes"]) > 1:
            last = sub["nodes"][-1]
            edges = [e for e in sub["edges"] if last not in e]
            yield dict(node, sub=dict(sub, nodes=sub["nodes"][:-1], edges=edges))
    if node["ret"] != "dict":
        yield {k: v for k, v in node.items() if k != "goto"} | {"ret": "dict"}
    if node["ret"] == "cmd":
        opts = node["goto"]["options"]
        for i in range(len(opts)):
            if len(opts) > 1:
                rest = opts[:i] + opts[i + 1 :]
                yield dict(node, goto=dict(node["goto"], kind="mod", options=rest))
            yield from (
                dict(node, goto=dict(node["goto"], options=o)) for o in _simpler_opts(opts, i)
            )
    for key in node["writes"]:
        yield dict(node, writes={k: v for k, v in node["writes"].items() if k != key})


def _simpler_opts(opts: list, i: int) -> Iterator[list]:
    """Replace option ``i`` (a list or Send) by a smaller one."""
    opt = opts[i]
    if isinstance(opt, list) and len(opt) > 1:
        for j in range(len(opt)):
            yield [*opts[:i], opt[:j] + opt[j + 1 :], *opts[i + 1 :]]
    if isinstance(opt, list) and len(opt) == 1:
        yield [*opts[:i], opt[0], *opts[i + 1 :]]
    if isinstance(opt, dict) and len(opt["arg"]) > 1:
        yield [*opts[:i], dict(opt, arg={"pkt": opt["arg"]["pkt"]}), *opts[i + 1 :]]


def candidates(spec: dict) -> Iterator[dict]:
    """Smaller variants of ``spec``, biggest cuts first."""
    for node in reversed(spec["nodes"]):
        if len(spec["nodes"]) > 1:
            yield remove_node(spec, node["name"])
    for i in range(len(spec["edges"])):
        yield dict(spec, edges=spec["edges"][:i] + spec["edges"][i + 1 :])
    for i in range(len(spec["conds"])):
        yield dict(spec, conds=spec["conds"][:i] + spec["conds"][i + 1 :])
    if len(spec["inputs"]) > 1:
        yield dict(spec, inputs=spec["inputs"][:1])
    for i, edge in enumerate(spec["edges"]):
        if isinstance(edge[0], list) and len(edge[0]) > 1:
            for src in edge[0]:
                yield dict(
                    spec, edges=[*spec["edges"][:i], [src, edge[1]], *spec["edges"][i + 1 :]]
                )
    for i, cond in enumerate(spec["conds"]):
        opts = cond["router"]["options"]
        if cond["path_map"] is not None:
            c2 = dict(cond, path_map=None)
            yield dict(spec, conds=[*spec["conds"][:i], c2, *spec["conds"][i + 1 :]])
        for j in range(len(opts)):
            variants = list(_simpler_opts(opts, j))
            if len(opts) > 1:
                variants.insert(0, opts[:j] + opts[j + 1 :])
            for o in variants:
                kind = cond["router"]["kind"] if len(o) == len(opts) else "mod"
                c2 = dict(cond, router=dict(cond["router"], options=o, kind=kind))
                yield dict(spec, conds=[*spec["conds"][:i], c2, *spec["conds"][i + 1 :]])
    for i, node in enumerate(spec["nodes"]):
        for variant in _node_variants(node):
            yield dict(spec, nodes=[*spec["nodes"][:i], variant, *spec["nodes"][i + 1 :]])
    if spec["recursion_limit"] is not None:
        yield dict(spec, recursion_limit=None)
    for key in ("interrupt_before", "interrupt_after", "update", "durability"):
        if spec.get(key):
            yield dict(spec, **{key: [] if key.startswith("interrupt") else None})
    for i, n in enumerate(spec["nodes"]):
        if n.get("interrupt") == 2:
            yield dict(
                spec, nodes=[*spec["nodes"][:i], dict(n, interrupt=True), *spec["nodes"][i + 1 :]]
            )
    if spec["checkpointer"]:
        yield dict(
            spec,
            checkpointer=False,
            inputs=spec["inputs"][:1],
            interrupt_before=[],
            interrupt_after=[],
            update=None,
            durability=None,
        )
    if spec["inputs"][0] != {"c0": 0}:
        yield dict(spec, inputs=[{"c0": 0}, *spec["inputs"][1:]])
    keys = spec["keys"]
    for group in ("plain", "lists", "counters"):
        for k in keys[group]:
            if k != "c0":
                yield dict(spec, keys=dict(keys, **{group: [x for x in keys[group] if x != k]}))
