"""contest.schema.json: generated from the contest file's models, shipped in the package, and what editors check contest files with."""

from __future__ import annotations

import json
import tomllib
from datetime import date, datetime, time
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conftest import run
from podium.contest.model import json_schema

REPOSITORY = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((REPOSITORY / "examples" / "contests").glob("*/contest.toml"))


def shipped() -> dict[str, Any]:
    return json.loads(resources.files("podium").joinpath("schemas/contest.schema.json").read_text(encoding="utf-8"))


def as_json(value: Any) -> Any:
    """A parsed TOML value as an editor's JSON Schema check sees it: dates and times as ISO 8601 strings."""
    if isinstance(value, dict):
        return {key: as_json(v) for key, v in value.items()}
    if isinstance(value, list):
        return [as_json(v) for v in value]
    return value.isoformat() if isinstance(value, (datetime, date, time)) else value


def test_the_shipped_schema_is_the_one_the_models_generate() -> None:
    """Regenerate with: podium contest schema > src/podium/schemas/contest.schema.json"""
    assert json.loads(json_schema()) == shipped()
    assert (REPOSITORY / "src" / "podium" / "schemas" / "contest.schema.json").read_text(
        encoding="utf-8"
    ) == json_schema()
    code, output = run("contest", "schema")
    assert code == 0 and json.loads(output) == shipped()


def test_the_schema_is_draft_2020_12_with_every_key_described() -> None:
    schema = shipped()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    tables = [schema, *schema["$defs"].values()]
    for table in tables:
        assert table["additionalProperties"] is False, table["title"]
        for key, field in table["properties"].items():
            assert field.get("description") and field.get("title"), key
    assert set(schema["properties"]) == {
        "id",
        "title",
        "challenge",
        "truth",
        "timezone",
        "phase",
        "images",
        "parameters",
        "split",
        "limits",
        "quota",
        "ranking",
        "service",
        "track",
        "kit",
        "pages",
        "data",
    }
    assert schema["required"] == ["id", "title", "phase"]
    assert schema["anyOf"] == [
        {"required": ["challenge", "truth"]},
        {"required": ["track"]},
        {"required": ["challenge"], "properties": {"phase": {"items": {"required": ["truth"]}}}},
    ]  # what it scores: at the top, in [[track]] tables, or a truth in each [[phase]]


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.parent.name for p in EXAMPLES])
def test_every_example_contest_validates_against_the_schema(path: Path) -> None:
    jsonschema.Draft202012Validator(shipped()).validate(as_json(tomllib.loads(path.read_text(encoding="utf-8"))))


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda c: c["quota"].update(per_day="5"), ["quota", "per_day"]),
        (lambda c: c["quota"].update(per_day=True), ["quota", "per_day"]),
        (lambda c: c["service"].update(upload_gb=1), ["service"]),
        (lambda c: c["phase"][0].update(submissions="zip"), ["phase", 0, "submissions"]),
        (lambda c: c["ranking"].update(decimals=20), ["ranking", "decimals"]),
        (lambda c: c.update(id="a b"), ["id"]),
        (lambda c: c.update(challenge="glass"), ["challenge"]),
        (lambda c: c.pop("truth"), []),
        (lambda c: c.update(phase=[]), ["phase"]),
    ],
)
def test_a_contest_of_the_wrong_shape_fails_the_schema(change: Any, path: list[str | int]) -> None:
    contest = as_json(
        tomllib.loads((REPOSITORY / "examples" / "contests" / "demo" / "contest.toml").read_text(encoding="utf-8"))
    )
    jsonschema.Draft202012Validator(shipped()).validate(contest)
    change(contest)
    errors = list(jsonschema.Draft202012Validator(shipped()).iter_errors(contest))
    assert errors and [list(e.absolute_path) for e in errors] == [path], errors


def test_pydantic_is_imported_only_when_a_contest_file_is_read() -> None:
    """podium starts without pydantic (the contest file's models load with the first contest file)."""
    import subprocess
    import sys

    code = "import sys, podium.cli, podium.contest; print('pydantic' in sys.modules)"
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
        == "False"
    )


def _taplo() -> str:
    """The Taplo command line (pip's taplo, a test dependency): the checker of Even Better TOML and Taplo's language server."""
    import shutil
    import sys

    from conftest import require

    found = shutil.which("taplo", path=str(Path(sys.executable).parent)) or shutil.which("taplo")
    require("taplo", None if found else "taplo is missing (pip install taplo, in the test extra)")
    assert found is not None
    return found


def test_taplo_checks_contest_files_with_the_schema(tmp_path: Path) -> None:
    """What an editor does with a #:schema line: the examples pass, a wrong type and an unknown key are marked on their lines."""
    import subprocess

    schema = resources.files("podium").joinpath("schemas/contest.schema.json")
    for path in EXAMPLES:
        (tmp_path / f"{path.parent.name}.toml").write_text(
            f"#:schema {schema}\n" + path.read_text(encoding="utf-8"), encoding="utf-8"
        )
    demo = (tmp_path / "demo.toml").read_text(encoding="utf-8")
    (tmp_path / "wrong.toml").write_text(
        demo.replace("per_day = 10", 'per_day = "10"').replace("upload_mb = 20", "upload_gb = 20"), encoding="utf-8"
    )
    taplo = _taplo()
    good = subprocess.run(
        [taplo, "check", *(f"{p.parent.name}.toml" for p in EXAMPLES)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert good.returncode == 0, good.stderr
    wrong = subprocess.run([taplo, "check", "wrong.toml"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    text = (tmp_path / "wrong.toml").read_text().splitlines()
    per_day, upload = (
        next(i for i, line in enumerate(text, 1) if key in line) for key in ('per_day = "10"', "upload_gb")
    )
    assert (
        wrong.returncode == 1
        and '"10" is not of type "integer"' in wrong.stderr
        and "'upload_gb' was unexpected" in wrong.stderr
    )
    assert f"wrong.toml:{per_day}:" in wrong.stderr and f"wrong.toml:{upload}:" in wrong.stderr, wrong.stderr
