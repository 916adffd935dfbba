"""LangGraph's JS SDK (``@langchain/langgraph-sdk``, from npm) driving the server with
the machine's Node.js. The package is installed once into a cache folder outside the
repository (``$STATEGRAPH_JS_CACHE``, default ``~/.cache/stategraph/js-sdk``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.server

SCRIPT = Path(__file__).parent / "js" / "sdk_checks.mjs"
CACHE = Path(
    os.environ.get("STATEGRAPH_JS_CACHE", Path.home() / ".cache" / "stategraph" / "js-sdk")
)
PACKAGE = "@langchain/langgraph-sdk"


@pytest.fixture(scope="module")
def js_dir() -> Path:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("Node.js and npm are needed for the JS SDK checks")
    marker = CACHE / "node_modules" / "@langchain" / "langgraph-sdk" / "package.json"
    if not marker.is_file():
        CACHE.mkdir(parents=True, exist_ok=True)
        (CACHE / "package.json").write_text(
            '{"name": "sg-js-sdk-checks", "private": true, "type": "module"}'
        )
        done = subprocess.run(
            ["npm", "install", "--silent", "--no-audit", "--no-fund", PACKAGE],
            cwd=CACHE,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0 or not marker.is_file():
            pytest.skip(f"npm could not install {PACKAGE}: {done.stderr[-500:]}")
    return CACHE


def test_js_sdk_drives_the_server(server: Any, js_dir: Path) -> None:
    script = js_dir / SCRIPT.name
    shutil.copyfile(SCRIPT, script)  # ESM resolves packages next to the script
    done = subprocess.run(
        ["node", str(script), server.url], capture_output=True, text=True, timeout=300
    )
    assert done.stdout.strip(), done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["failed"] == {}, json.dumps(report["failed"], indent=1)
    assert len(report["passed"]) == 9
