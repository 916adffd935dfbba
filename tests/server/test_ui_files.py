"""``stategraph serve --ui DIR``: a built web page served under ``/app`` beside the API."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient
from tests.server.conftest import ServerProcess

from stategraph.cli._main import main
from stategraph.server._ui_files import UI_PATH, UiFolderError, check_ui_dir, ui_app

pytestmark = pytest.mark.server

APP = Path(__file__).resolve().parents[2] / "tools" / "server_differential" / "app" / "graphs.py"
INDEX = "<!doctype html><title>chat</title><div id=root></div>"


@pytest.fixture
def built(tmp_path: Path) -> Path:
    """A build folder as Vite leaves it: index.html and hashed assets."""
    dist = tmp_path / "dist"
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text(INDEX)
    (dist / "assets" / "index-abc123.js").write_text("console.log('page')")
    return dist


def test_the_page_its_assets_and_its_client_side_routes(built: Path) -> None:
    client = TestClient(ui_app(built))
    moved = client.get(UI_PATH, follow_redirects=False)
    assert moved.status_code == 307 and moved.headers["location"].endswith("/app/")
    home = client.get("/app/")
    assert home.status_code == 200 and home.text == INDEX
    assert "text/html" in home.headers["content-type"]
    asset = client.get("/app/assets/index-abc123.js")
    assert asset.status_code == 200 and asset.text == "console.log('page')"
    assert "javascript" in asset.headers["content-type"]
    # a client-side route answers the page, a missing asset stays a 404
    assert client.get("/app/threads/42").text == INDEX
    assert client.get("/app/assets/gone.js").status_code == 404
    assert client.post("/app/threads/42").status_code == 405


def test_only_the_build_folder_is_served(built: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("not for the web")
    client = TestClient(ui_app(built))
    assert client.get("/app/../secret.txt").status_code == 404
    assert client.get("/app/%2e%2e/secret.txt").status_code == 404


def test_a_folder_without_a_build_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UiFolderError, match="no such folder"):
        check_ui_dir(tmp_path / "dist")
    with pytest.raises(UiFolderError, match=r"has no index\.html"):
        check_ui_dir(tmp_path)
    (tmp_path / "index.html").write_text(INDEX)
    assert check_ui_dir(tmp_path / "sub" / "..") == tmp_path.resolve()


@pytest.mark.parametrize(
    ("folder", "message"), [("missing", "no such folder"), (".", "has no index.html")]
)
def test_serve_refuses_a_bad_ui_folder_before_starting(
    folder: str,
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["serve", f"{APP}:agent", "--ui", folder]) == 2
    err = capsys.readouterr().err
    assert f"--ui {folder}" in err and message in err


@pytest.fixture
def served(built: Path, tmp_path: Path) -> Iterator[ServerProcess]:
    proc = ServerProcess(tmp_path / "data", extra=["--ui", str(built)])
    yield proc
    proc.stop()
    shutil.rmtree(tmp_path / "data", ignore_errors=True)


def test_the_server_serves_the_page_beside_the_api_and_the_studio(
    served: ServerProcess,
) -> None:
    page = httpx.get(served.url + "/app/", timeout=30)
    assert page.status_code == 200 and page.text == INDEX
    assert httpx.get(served.url + "/app/assets/index-abc123.js", timeout=30).status_code == 200
    made = httpx.post(served.url + "/threads", json={"metadata": {"from": "page"}}, timeout=30)
    assert made.status_code == 200 and made.json()["metadata"]["from"] == "page"
    assert httpx.get(served.url + "/ok", timeout=30).json()["ok"] is True
    assert "text/html" in httpx.get(served.url + "/", timeout=30).headers["content-type"]
    assert "the page in" in served.log.read_text()
