"""What pip and PyPI show of the installed distribution: classifiers, links, entry points."""

from __future__ import annotations

import importlib
import importlib.metadata as metadata
from pathlib import Path


def test_classifiers_name_every_supported_python_and_the_status() -> None:
    info = metadata.metadata("stategraph")
    classifiers = set(info.get_all("Classifier") or [])
    for version in ("3.10", "3.11", "3.12", "3.13"):
        assert f"Programming Language :: Python :: {version}" in classifiers
    assert any(c.startswith("Development Status :: ") for c in classifiers)
    assert {"Typing :: Typed", "Framework :: Pytest"} <= classifiers
    assert info["Requires-Python"] == ">=3.10"


def test_project_urls() -> None:
    urls = dict(
        entry.split(", ", 1) for entry in metadata.metadata("stategraph").get_all("Project-URL")
    )
    assert {"Homepage", "Documentation", "Source", "Issues", "Changelog"} <= set(urls)
    assert all(url.startswith("https://") for url in urls.values())


def test_runtime_dependencies_are_the_four_allowed() -> None:
    required = [
        req.split(";")[0].split(">")[0].split("=")[0].strip()
        for req in metadata.requires("stategraph") or []
        if "extra ==" not in req
    ]
    assert sorted(required) == ["ormsgpack", "pydantic", "typing-extensions", "xxhash"]


def test_console_script_and_pytest_plugin_entry_points() -> None:
    entry_points = metadata.entry_points()
    (script,) = [e for e in entry_points.select(group="console_scripts") if e.name == "stategraph"]
    assert script.value == "stategraph.cli._main:console" and callable(script.load())
    (plugin,) = [e for e in entry_points.select(group="pytest11") if e.name == "stategraph"]
    module = plugin.load()
    assert module is importlib.import_module("stategraph.testing.pytest_plugin")
    for fixture in ("thread_config", "checkpointer", "async_checkpointer", "deterministic_ids"):
        assert callable(getattr(module, fixture)), fixture


def test_the_package_ships_py_typed() -> None:
    """The PEP 561 marker exists and the build includes it as package data."""
    root = Path(__file__).resolve().parents[2]
    assert (root / "src" / "stategraph" / "py.typed").is_file()
    pyproject = (root / "pyproject.toml").read_text()
    section = pyproject.split("[tool.setuptools.package-data]\n", 1)[1]
    entry = section.splitlines()[0]
    assert entry.startswith("stategraph = [") and '"py.typed"' in entry
