"""Differential harness: ``stategraph serve`` against LangGraph's ``langgraph dev``.

Starts both servers on the same graphs (``app/``; LangGraph's copy has its imports
rewritten), runs the same SDK scenarios (``scenarios.py``) on each with LangGraph's
own Python SDK, normalizes the answers and streams, and prints the differences.

    python tools/server_differential/run.py --lgdev /work/scratch/server/lgdev
    python tools/server_differential/run.py --only runs_multitask --show

``--lgdev`` is a venv with ``langgraph-cli[inmem]`` and ``langgraph-sdk`` (a black box,
runs offline); the stategraph server runs with this Python.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from normalize import TOLERATED, diff, normalize, tolerated  # noqa: E402

_REWRITES = (
    (r"from stategraph\.messages import", "from langchain_core.messages import"),
    (r"\bstategraph\.", "langgraph."),
)


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _copy_app(target: Path, langgraph: bool) -> None:
    shutil.copytree(HERE / "app", target)
    if langgraph:
        for path in target.glob("*.py"):
            text = path.read_text()
            for pattern, repl in _REWRITES:
                text = re.sub(pattern, repl, text)
            path.write_text(text)


def _wait(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{url} exited:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url + "/ok", timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"{url} did not start:\n{log.read_text()[-3000:]}")


def _start(
    cmd: list[str], cwd: Path, log: Path, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    with open(log, "wb") as out:
        return subprocess.Popen(
            cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
        )


def _scenarios(python: str, url: str, out: Path, only: list[str]) -> dict[str, Any]:
    subprocess.run([python, str(HERE / "scenarios.py"), url, str(out), *only], check=True)
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--lgdev", default=os.environ.get("LGDEV_VENV", "/work/scratch/server/lgdev")
    )
    parser.add_argument("--only", nargs="*", default=[], help="scenario names")
    parser.add_argument("--show", action="store_true", help="print every difference line")
    parser.add_argument("--report", type=Path, help="write the report as JSON here")
    parser.add_argument("--raw", type=Path, help="keep both servers' raw answers in this folder")
    args = parser.parse_args()
    lg_python = str(Path(args.lgdev) / "bin" / "python")
    lg_cli = str(Path(args.lgdev) / "bin" / "langgraph")
    work = Path(tempfile.mkdtemp(prefix="server-diff-"))
    procs: list[subprocess.Popen[bytes]] = []
    try:
        _copy_app(work / "lg_app", langgraph=True)
        _copy_app(work / "sg_app", langgraph=False)
        lg_port, sg_port = _port(), _port()
        lg_url, sg_url = f"http://127.0.0.1:{lg_port}", f"http://127.0.0.1:{sg_port}"
        procs.append(
            _start(
                [lg_cli, "dev", "--no-browser", "--no-reload", "--port", str(lg_port)],
                work / "lg_app",
                work / "lg.log",
            )
        )
        procs.append(
            _start(
                [
                    sys.executable,
                    "-m",
                    "stategraph.cli._main",
                    "serve",
                    "--port",
                    str(sg_port),
                    "--data-dir",
                    str(work / "sgdata"),
                ],
                work / "sg_app",
                work / "sg.log",
            )
        )
        _wait(lg_url, procs[0], work / "lg.log")
        _wait(sg_url, procs[1], work / "sg.log")
        left = _scenarios(lg_python, lg_url, work / "lg.json", args.only)
        right = _scenarios(lg_python, sg_url, work / "sg.json", args.only)
        if args.raw:
            args.raw.mkdir(parents=True, exist_ok=True)
            for name in ("lg.json", "sg.json"):
                shutil.copy(work / name, args.raw / name)
    finally:
        for proc in procs:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
    report: dict[str, Any] = {"scenarios": {}, "tolerated": {}}
    same = differ = 0
    for name in left:
        lines = diff(normalize(left[name]), normalize(right.get(name, [])), "")
        real = [line for line in lines if tolerated(name, line) is None]
        kept = [line for line in lines if tolerated(name, line) is not None]
        if kept:
            report["tolerated"][name] = kept
        report["scenarios"][name] = real
        if real:
            differ += 1
            print(f"DIFF  {name}: {len(real)} difference(s)")
            for line in real if args.show else real[:3]:
                print(f"        {line}")
        else:
            same += 1
            print(f"same  {name}" + (" (tolerated differences only)" if kept else ""))
    total_lines = sum(len(v) for v in report["scenarios"].values())
    print(
        f"\n{same + differ} scenarios: {same} identical after normalization, {differ} differ "
        f"({total_lines} difference lines); tolerated: {sorted(report['tolerated'])}"
    )
    for key, why in TOLERATED.items():
        print(f"  tolerated {key}: {why}")
    if args.report:
        args.report.write_text(json.dumps(report, indent=1))
    shutil.rmtree(work, ignore_errors=True)
    return 0 if differ == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
