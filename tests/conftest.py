"""Shared test helpers: writing images with Pillow (independent of podium's decoder)."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from podium.cli import cli
from suite_order import pytest_collection_modifyitems, pytest_configure  # noqa: F401  (this suite's hooks, registered here)

SHARED = Path(__file__).resolve().parents[2] / "shared"


def _sandbox() -> str:
    from podium.runner.sandbox import bwrap_problem

    return "bwrap" if bwrap_problem() is None else "none"


SANDBOX = _sandbox()


@pytest.fixture(scope="session", autouse=True)
def _a_cache_folder_of_the_runs_own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The organizer's file digests (``core.provenance.digests_file``) remembered in this test run's folder, not the user's."""
    before = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if before is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = before


def save_png(path: Path, pixels: np.ndarray, mode: str | None = None) -> Path:
    """Write ``pixels`` as PNG with Pillow; ``mode`` forces e.g. 'P', 'LA', 'RGB'."""
    path.parent.mkdir(parents=True, exist_ok=True)
    image = Image.fromarray(pixels)
    if mode == "P":
        image = image.convert("P")
    elif mode is not None:
        image = image.convert(mode)
    image.save(path, format="PNG")
    return path


@functools.cache
def _validator() -> Any:
    """The shipped schema's validator, its ``$ref``s inlined: the same rules, without a reference lookup per item."""
    from jsonschema import Draft202012Validator

    from podium.core.result import schema

    shipped = schema()
    Draft202012Validator.check_schema(shipped)
    return Draft202012Validator(_inlined(shipped, shipped["$defs"]), format_checker=Draft202012Validator.FORMAT_CHECKER)


def _inlined(node: Any, definitions: dict[str, Any]) -> Any:
    """``node`` with each ``{"$ref": "#/$defs/NAME"}`` replaced by that definition, inlined in turn (the schema has no cycle)."""
    if isinstance(node, list):
        return [_inlined(item, definitions) for item in node]
    if not isinstance(node, dict):
        return node
    inlined = {key: _inlined(value, definitions) for key, value in node.items() if key != "$ref"}
    if "$ref" not in node:
        return inlined
    target = _inlined(definitions[node["$ref"].removeprefix("#/$defs/")], definitions)
    return target if not inlined else {**inlined, "allOf": [*inlined.get("allOf", []), target]}


def meets_the_schema(document: dict) -> dict:
    """``document`` after validating it against the shipped JSON Schema (for documents made in a subprocess)."""
    _validator().validate(document)
    return document


@pytest.fixture(autouse=True, scope="session")
def _every_document_meets_the_schema() -> Iterator[None]:
    """Every result document a test makes in this process (``to_dict``, ``public_view``) is validated against the schema."""
    from podium.core.result import Result

    patch = pytest.MonkeyPatch()
    valid: set[bytes] = set()  # the digests of the documents validated
    for name in ("to_dict", "public_view"):
        made = getattr(Result, name)

        def checked(self: Result, made: Callable[[Result], dict] = made) -> dict:
            document = made(self)
            text = json.dumps(document, default=str)
            digest = hashlib.blake2b(text.encode(), digest_size=16).digest()
            if digest not in valid:  # a document made again (a result shown on several pages) is the same document
                meets_the_schema(json.loads(text))
                valid.add(digest)
            return document

        patch.setattr(Result, name, checked)
    yield
    patch.undo()


@pytest.fixture
def pool_always(monkeypatch: pytest.MonkeyPatch) -> None:
    """A local pool starts whenever there are workers, as if it cost nothing (the engine scores small jobs in its own process)."""
    from podium.scoring import engine

    monkeypatch.setattr(engine, "POOL_START_S", 0.0)
    monkeypatch.setattr(engine, "SERVER_START_S", 0.0)


@pytest.fixture
def shared() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"shared data not found at {SHARED}")
    return SHARED


def run(*args: str) -> tuple[int, str]:
    """Exit code and everything the CLI printed (stdout and stderr)."""
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def run_json(challenge: str, truth: Path, submission: Path, *extra: str, command: str = "evaluate") -> tuple[int, dict]:
    """Exit code and the result document of ``podium COMMAND CHALLENGE ... --json -``."""
    args = [command, challenge, "--truth", str(truth), "--submission", str(submission), "--json", "-", "--workers", "1"]
    result = CliRunner().invoke(cli, args + list(extra))
    return result.exit_code, json.loads(result.stdout)


def require(component: str, problem: str | None) -> None:
    """Skip when a system component is missing, with the reason; in CI (``CI=true``) fail instead."""
    if problem is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{component} is required in CI: {problem}")
    pytest.skip(f"{component} is not available: {problem}")


@pytest.fixture
def sandbox() -> None:
    """bubblewrap, able to make a sandbox here."""
    from podium.runner.sandbox import bwrap_problem

    require("bubblewrap", bwrap_problem())


def sandbox_options(sandbox: str | None = None) -> list[str]:
    """``podium run`` options: the sandbox, showing the program this Python (its environment and its base).

    bubblewrap where it works, else none, so that the contracts are tested everywhere;
    test_runner_sandbox.py requires bubblewrap in CI.
    """
    return [
        "--sandbox",
        sandbox or SANDBOX,
        *[arg for prefix in sorted({sys.prefix, sys.base_prefix}) for arg in ("--visible", prefix)],
    ]


def cgroup_problem() -> str | None:
    from podium.runner import cgroups

    group = cgroups.open_group(f"podium-test-{os.getpid()}", cgroups.Limits(memory_bytes=2**30, pids=100))
    if group is None:
        return "podium cannot make a cgroup with memory and process limits here (it needs root, or --cgroup)"
    group.remove()
    return None


@pytest.fixture
def run_cgroup() -> None:
    """A cgroup per run, with kernel-enforced limits and exact peak memory."""
    require("cgroups", cgroup_problem())


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Any]:
    """A PostgreSQL server started for this test session (skipped where none can be, failed in CI)."""
    import postgres_server as pg

    require("postgresql", pg.problem())
    server = pg.Server()
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def dask_cluster() -> Iterator[Any]:
    """A Dask scheduler and two one-thread workers on 127.0.0.1, shared by the session's tests (see dask_cluster.py)."""
    from dask_cluster import Cluster

    cluster = Cluster(workers=2)
    yield cluster
    cluster.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new empty database of each kind: a SQLite file, and a database on the test PostgreSQL server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'podium.sqlite3'}"
    return request.getfixturevalue("postgres_server").new_database()
