"""Turn a program spec (see ``graphs.generate``) into Python source.

``emit(spec)`` returns the source of ``build(ns, rt)``; ``load(spec)`` compiles it;
``standalone(spec, lib)`` is a self-contained script for a bug report.
"""

from __future__ import annotations

import json
import operator
from typing import Annotated, Any, TypedDict

IND = "    "


def _lit(target: str) -> str:
    return {"__end__": "END", "__start__": "START"}.get(target, repr(target))


def _opt_src(opt: Any, labels: dict[str, str] | None) -> str:
    if isinstance(opt, dict):
        return f"Send({opt['send']!r}, {opt['arg']!r})"
    if isinstance(opt, list):
        return "[" + ", ".join(_opt_src(o, labels) for o in opt) + "]"
    if labels is not None:
        return repr(labels[opt])
    return _lit(opt)


def targets(opt: Any) -> list[str]:
    """Node names an option (name, END, list, Send) routes to."""
    if isinstance(opt, list):
        return [t for o in opt for t in targets(o)]
    if isinstance(opt, dict):
        return [opt["send"]]
    return [opt]


def _pick_src(router: dict, labels: dict[str, str] | None) -> list[str]:
    opts = [_opt_src(o, labels) for o in router["options"]]
    k = f"state.get({router['counter']!r}, 0)"
    if router["kind"] == "bound":
        return [f"return {opts[0]} if {k} < {router['limit']} else {opts[1]}"]
    return [f"opts = [{', '.join(opts)}]", f"return opts[{k} % {len(opts)}]"]


def _trace_src(name: str, node: dict, rs: bool) -> str:
    entry = f"rt.tag({name!r}, state)"
    if rs and node.get("read_rs"):
        entry += " + '#' + str(state.get('rs'))"
    if node.get("interrupt"):
        entry += " + '=' + str(ans)"
    return entry


def _writes_src(name: str, node: dict, idx: int, trace: str) -> str:
    parts = [f"'trace': [{trace}]"]
    for key, kind in node["writes"].items():
        if kind == "name":
            parts.append(f"{key!r}: [{name!r}]")
        elif kind == "ow":
            parts.append(f"{key!r}: Overwrite([{name!r}])")
        elif kind == "expr":
            parts.append(f"{key!r}: state.get('c0', 0) * 10 + {idx}")
        else:
            parts.append(f"{key!r}: {kind!r}")
    return "{" + ", ".join(parts) + "}"


def _emit_sub(out: list[str], node: dict) -> str:
    sub, name = node["sub"], node["name"]
    tkey = "trace" if sub["share_trace"] else "strace"
    out.append(f"{IND}class Sub_{name}(TypedDict, total=False):")
    out.append(f"{IND}    {tkey}: Annotated[list, operator.add]")
    if sub["share_counter"]:
        out.append(f"{IND}    {sub['counter']}: Annotated[int, operator.add]")
    out.append(f"{IND}    s0: int")
    last = sub["nodes"][-1]
    for j, inner in enumerate(sub["nodes"]):
        full = f"{name}/{inner}"
        out.append(f"{IND}def {name}_{inner}(state):")
        out.append(f"{IND}    rt.hit({full!r}, state)")
        entry = f"rt.tag({full!r}, state)"
        if sub["interrupt"] and j == 0:
            out.append(f"{IND}    ans = interrupt({{'q': {full!r}}})")
            entry += " + '=' + str(ans)"
        if inner == last and sub.get("parent_goto"):
            goto = _opt_src(sub["parent_goto"], None)
            out.append(
                f"{IND}    return Command(graph=Command.PARENT, goto={goto}, "
                f"update={{'trace': [{entry}]}})"
            )
            continue
        upd = f"{{{tkey!r}: [{entry}], 's0': state.get('s0', 0) + 1"
        if sub["share_counter"]:
            upd += f", {sub['counter']!r}: 1"
        out.append(f"{IND}    return {upd}}}")
    out.append(f"{IND}sg_{name} = StateGraph(Sub_{name})")
    for inner in sub["nodes"]:
        out.append(f"{IND}sg_{name}.add_node({inner!r}, {name}_{inner})")
    for src, dst in sub["edges"]:
        out.append(f"{IND}sg_{name}.add_edge({_lit(src)}, {_lit(dst)})")
    out.append(f"{IND}sub_{name} = sg_{name}.compile()")
    if not sub["wrapped"]:
        return f"sub_{name}"
    out.append(f"{IND}def node_{name}(state):")
    out.append(f"{IND}    rt.hit({name!r}, state)")
    out.append(f"{IND}    res = sub_{name}.invoke(state)")
    out.append(
        f"{IND}    return {{'trace': [rt.tag({name!r}, state)] + res.get({tkey!r}, [])[-1:]}}"
    )
    return f"node_{name}"


def _emit_node(out: list[str], node: dict, idx: int, rs: bool) -> str:
    name = node["name"]
    if node["kind"] == "sub":
        return _emit_sub(out, node)
    asyn = "async " if node.get("async") else ""
    out.append(f"{IND}{asyn}def node_{name}(state):")
    out.append(f"{IND}    rt.hit({name!r}, state)")
    if node.get("async"):
        out.append(f"{IND}    await asyncio.sleep(0)")
    if "fail" in node:
        f = node["fail"]
        out.append(f"{IND}    rt.flaky(rt.tag({name!r}, state), {f['times']}, {f['exc']!r})")
    if node.get("interrupt"):
        out.append(f"{IND}    ans = interrupt({{'q': rt.tag({name!r}, state)}})")
    if node.get("interrupt") == 2:
        out.append(f"{IND}    ans = str(ans) + interrupt({{'q': rt.tag({name!r}, state) + '!'}})")
    if node["ret"] == "none":
        out.append(f"{IND}    return None")
        return f"node_{name}"
    if node["ret"] == "bad":
        out.append(f"{IND}    return 'not a dict'")
        return f"node_{name}"
    upd = _writes_src(name, node, idx, _trace_src(name, node, rs))
    if node["ret"] == "dict":
        out.append(f"{IND}    return {upd}")
        return f"node_{name}"
    out.append(f"{IND}    def goto():")
    out.extend(f"{IND}        {line}" for line in _pick_src(node["goto"], None))
    if node.get("cmd_tuples"):
        upd = f"list({upd}.items())"
    out.append(f"{IND}    return Command(update={upd}, goto=goto())")
    return f"node_{name}"


def _labels(router: dict) -> dict[str, str]:
    return {t: f"to_{t.strip('_')}" for o in router["options"] for t in targets(o)}


def _add_node_src(n: dict, action: str) -> str:
    opts = []
    if n["defer"]:
        opts.append("defer=True")
    if "retry" in n:
        rp = n["retry"]
        ro = ", retry_on=rt.Flaky" if rp["retry_on"] == "Flaky" else ""
        opts.append(
            f"retry_policy=RetryPolicy(max_attempts={rp['max_attempts']}, "
            f"initial_interval=0.001, jitter=False{ro})"
        )
    extra = "".join(", " + o for o in opts)
    return f"{IND}g.add_node({n['name']!r}, {action}{extra})"


def emit(spec: dict) -> str:
    """Python source of ``build(ns, rt)`` for ``spec``."""
    out = ["def build(ns, rt):"]
    out.append(
        f"{IND}StateGraph, START, END, Send, Command = "
        "ns.StateGraph, ns.START, ns.END, ns.Send, ns.Command"
    )
    out.append(
        f"{IND}RetryPolicy, interrupt, Overwrite = ns.RetryPolicy, ns.interrupt, ns.Overwrite"
    )
    out.append(f"{IND}class State(TypedDict, total=False):")
    out.append(f"{IND}    trace: Annotated[list, operator.add]")
    keys = spec["keys"]
    for p in keys["plain"]:
        out.append(f"{IND}    {p}: int")
    for lk in keys["lists"]:
        out.append(f"{IND}    {lk}: Annotated[list, operator.add]")
    for c in keys["counters"]:
        out.append(f"{IND}    {c}: Annotated[int, operator.add]")
    rs = bool(keys.get("remaining"))
    if rs:
        out.append(f"{IND}    rs: ns.RemainingSteps")
    actions = {n["name"]: _emit_node(out, n, i, rs) for i, n in enumerate(spec["nodes"])}
    out.append(f"{IND}g = StateGraph(State)")
    for n in spec["nodes"]:
        out.append(_add_node_src(n, actions[n["name"]]))
    for src, dst in spec["edges"]:
        s = "[" + ", ".join(map(repr, src)) + "]" if isinstance(src, list) else _lit(src)
        out.append(f"{IND}g.add_edge({s}, {_lit(dst)})")
    for j, cond in enumerate(spec["conds"]):
        pm, router = cond["path_map"], cond["router"]
        labels = _labels(router) if pm == "dict" else None
        out.append(f"{IND}def route_{j}(state):")
        out.extend(f"{IND}    {line}" for line in _pick_src(router, labels))
        pm_src = ""
        if pm == "dict" and labels is not None:
            pm_src = ", {" + ", ".join(f"{v!r}: {_lit(k)}" for k, v in labels.items()) + "}"
        elif pm == "list":
            names = dict.fromkeys(targets(router["options"]))
            pm_src = ", [" + ", ".join(_lit(t) for t in names) + "]"
        out.append(f"{IND}g.add_conditional_edges({_lit(cond['src'])}, route_{j}{pm_src})")
    cp = "ns.InMemorySaver()" if spec["checkpointer"] else "None"
    ib = spec.get("interrupt_before") or []
    ia = spec.get("interrupt_after") or []
    out.append(
        f"{IND}return g.compile(checkpointer={cp}, interrupt_before={ib!r}, interrupt_after={ia!r})"
    )
    return "\n".join(out) + "\n"


def load(spec: dict) -> Any:
    """Compile the source of ``spec`` and return its ``build`` function."""
    import asyncio

    glb: dict[str, Any] = {
        "__name__": f"program_{spec['seed']}",
        "TypedDict": TypedDict,
        "Annotated": Annotated,
        "operator": operator,
        "asyncio": asyncio,
    }
    code = compile(emit(spec), f"<program {spec['seed']}>", "exec", dont_inherit=True)
    exec(code, glb)
    return glb["build"]


def standalone(spec: dict, lib: str = "stategraph") -> str:
    """A self-contained script (source of ``build``) reproducing ``spec`` on ``lib``."""
    head = [
        "# run from the repository root: python this_file.py",
        "import asyncio, operator, sys",
        "from typing import Annotated, TypedDict",
        "",
        "sys.path.insert(0, 'tools/differential')",
        "from graphs import Runtime, namespace",
        "",
        f"# spec: {json.dumps(spec)}",
    ]
    tail = [
        "",
        f"graph = build(namespace({lib!r}), Runtime())",
        f"print(graph.invoke({spec['inputs'][0]!r}, {{'configurable': {{'thread_id': '1'}}}}))",
    ]
    return "\n".join(head) + "\n" + emit(spec) + "\n".join(tail) + "\n"
