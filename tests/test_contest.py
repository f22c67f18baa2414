"""Contest files: every kind of error located by line, the summary, and the commands that take --contest."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import run
from podium.challenges import get
from podium.contest import ContestError, load
from podium.contest.split import draw_public, public_count
from podium.runner.disk import DEFAULT_DISK_MB

GLAS_CONTEST = """\
id = "glas-demo"
title = "GlaS demo"
challenge = "glas"
truth = "truth"
timezone = "Europe/Paris"

[parameters]
parts = ["testA", "testB"]

[split]
public = 0.5
seed = 2015

[[phase]]
name = "development"
start = 2026-01-05T00:00:00Z
end = 2026-02-01T00:00:00+01:00
submissions = "files"

[[phase]]
name = "final"
start = "2026-02-01T00:00:00+01:00"
end = "2026-02-08T12:00:00+01:00"
submissions = "files"

[quota]
per_day = 5
total = 50

[ranking]
decimals = 3
final = "best"
"""


@pytest.fixture(scope="module")
def glas_demo(tmp_path_factory: pytest.TempPathFactory):
    return get("glas").write_demo(tmp_path_factory.mktemp("glas"))


@pytest.fixture
def glas_folder(tmp_path: Path, glas_demo) -> Path:
    shutil.copytree(glas_demo.truth, tmp_path / "truth")
    shutil.copytree(glas_demo.submission, tmp_path / "submission")
    (tmp_path / "contest.toml").write_text(GLAS_CONTEST)
    return tmp_path


def check(folder: Path, text: str) -> tuple[int, str]:
    (folder / "contest.toml").write_text(text)
    return run("contest", "check", str(folder / "contest.toml"))


def test_a_valid_contest_is_summarized_in_utc_and_local_time(glas_folder: Path) -> None:
    code, output = run("contest", "check", str(glas_folder / "contest.toml"))
    assert code == 0, output
    assert "6 units" in output and "3 public, 3 private units" in output
    # 2026-02-01T00:00:00+01:00 is 2026-01-31T23:00:00Z; the first phase ends where the second starts
    assert "development (files): 2026-01-05T00:00:00Z to 2026-01-31T23:00:00Z UTC" in output
    assert "2026-01-05T01:00:00+01:00 to 2026-02-01T00:00:00+01:00 local" in output
    code, output = run("contest", "check", str(glas_folder / "contest.toml"), "--json")
    summary = json.loads(output)
    assert summary["split"]["public_units"] == 3 and summary["parameters"] == {"parts": "testA,testB"}
    assert summary["phases"][1]["end_utc"] == "2026-02-08T11:00:00Z"


def _line_of(text: str, marker: str) -> int:
    """The line holding ``marker``; ``marker#2``: the second such line."""
    marker, _, nth = marker.partition("#")
    return [i for i, line in enumerate(text.splitlines(), start=1) if marker in line][int(nth or 1) - 1]


# (old, new, the line reported: a marker in the new text, or None for the file itself, the message fragment)
ERRORS = [
    ('title = "GlaS demo"', 'title = "GlaS demo', 'title = "GlaS demo', "Illegal character"),
    ('title = "GlaS demo"', 'titel = "GlaS demo"', "titel", "did you mean title?"),
    ('id = "glas-demo"\n', "", None, "id is missing"),
    ('id = "glas-demo"', 'id = "glas demo"', 'id = "glas demo"', "must be an id of 1 to 64 letters"),
    (
        'id = "glas-demo"',
        "id = 7",
        "id = 7",
        "id must be an id of 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit, not an integer",
    ),
    ('challenge = "glas"', 'challenge = "glass"', 'challenge = "glass"', "did you mean glas?"),
    ('truth = "truth"', 'truth = "thruth"', 'truth = "thruth"', "no path 'thruth'"),
    ('timezone = "Europe/Paris"', 'timezone = "Europe/Pariss"', "Pariss", "not an IANA time zone name"),
    ('parts = ["testA", "testB"]', 'partz = ["testA"]', "partz", "did you mean parts?"),
    ('parts = ["testA", "testB"]', 'binary = "maybe"', "binary", "must be one of auto, label, objects"),
    ('parts = ["testA", "testB"]', "binary = true", "binary", "must be a string, a number or a list of strings"),
    ("public = 0.5\n", 'public = 0.5\npublic_list = "p.txt"\n', "[split]", "either public"),
    ("public = 0.5", "public = 1.5", "public = 1.5", "strictly between 0 and 1"),
    ("seed = 2015\n", "", "[split]", "split.seed is missing"),
    ("public = 0.5", "public = 0.01", "[split]", "the public split is empty: 0 of 6"),
    ("public = 0.5", "publik = 0.5", "publik", "did you mean public?"),
    ("start = 2026-01-05T00:00:00Z", "start = 2026-01-05T00:00:00", "start = 2026-01-05T00:00:00", "has no time zone"),
    (
        "start = 2026-01-05T00:00:00Z",
        "start = 2026-01-05",
        "start = 2026-01-05",
        "needs a date, a time and a time zone",
    ),
    ('start = "2026-02-01T00:00:00+01:00"', 'start = "2026-02-01 noon"', "noon", "is not an ISO 8601 date and time"),
    (
        'end = "2026-02-08T12:00:00+01:00"',
        'end = "2026-01-08T12:00:00+01:00"',
        'end = "2026-01-08',
        "ends (2026-01-08T12:00:00+01:00) before it starts",
    ),
    (
        'start = "2026-02-01T00:00:00+01:00"',
        'start = "2026-01-31T23:59:59+01:00"',
        "2026-01-31T23:59:59",
        "starts before phase development ends",
    ),
    ('name = "final"', 'name = "development"', 'name = "development"#2', "is also phase 1's"),
    (
        'submissions = "files"\n\n[quota]',
        'submissions = "zip"\n\n[quota]',
        'submissions = "zip"',
        "must be files or programs",
    ),
    ("[quota]\nper_day = 5", "[quota]\nper_day = 0", "per_day = 0", "must be a positive integer"),
    (
        "[quota]\nper_day = 5",
        "[service]\nmax_team_size = 0\n\n[quota]\nper_day = 5",
        "max_team_size = 0",
        "must be a positive integer",
    ),
    (
        "[quota]\nper_day = 5",
        '[service]\nregistration_end = "2026-03-01 noon"\n\n[quota]\nper_day = 5',
        "noon",
        "is not an ISO 8601 date and time",
    ),
    ("total = 50", 'total = 50\ncount_failed = "yes"', "count_failed", "must be true or false, not a string"),
    ("decimals = 3", 'decimals = 3\nby = "dice"', 'by = "dice"', "is not a score of glas"),
    ("decimals = 3", "decimals = 20", "decimals = 20", "from 0 to 15"),
    ('final = "best"', 'final = "first"', 'final = "first"', "must be best (by public score), last or selected"),
    ('final = "best"', 'final = "selected"', 'final = "selected"', "needs max_selected"),
    (
        'final = "best"',
        'final = "best"\n\n[limits]\nmemory_mb = 1000',
        "[limits]",
        "applies to programs, but no phase takes programs",
    ),
    (
        'submissions = "files"\n\n[quota]',
        'submissions = "programs"\n\n[quota]',
        "[[phase]]#1",
        "glas has no program contract",
    ),
    ("total = 50", "total = 50\nconcurrent = 0", "concurrent = 0", "must be a positive integer"),
    ('final = "best"', 'final = "best"\n\n[service]\nupload_mb = -1', "upload_mb = -1", "must be a positive number"),
    (
        'final = "best"',
        'final = "best"\n\n[service]\nself_registration = "yes"',
        "self_registration",
        "must be true or false, not a string",
    ),
    ('final = "best"', 'final = "best"\n\n[service]\nupload_gb = 1', "upload_gb", "did you mean upload_mb?"),
    (
        'timezone = "Europe/Paris"',
        'timezone = "Europe/Paris"\nservice = 3',
        "service = 3",
        "service must be a table [service]",
    ),
]


@pytest.mark.parametrize(("old", "new", "marker", "fragment"), ERRORS, ids=[e[3][:40] for e in ERRORS])
def test_each_kind_of_error_is_located(glas_folder: Path, old: str, new: str, marker: str, fragment: str) -> None:
    assert old in GLAS_CONTEST
    text = GLAS_CONTEST.replace(old, new, 1)
    code, output = check(glas_folder, text)
    assert code == 2, output
    located = [row for row in output.splitlines() if fragment in row]
    assert located, output
    assert ("contest.toml: " if marker is None else f"contest.toml:{_line_of(text, marker)}: ") in located[0], output


def test_every_problem_is_listed_at_once(glas_folder: Path) -> None:
    text = (
        GLAS_CONTEST.replace("decimals = 3", "decimals = 20")
        .replace("per_day = 5", "per_day = -1")
        .replace('id = "glas-demo"', 'id = "?"')
    )
    code, output = check(glas_folder, text)
    assert code == 2 and "has 3 problems" in output
    assert all(f"contest.toml:{_line_of(text, m)}:" in output for m in ("decimals = 20", "per_day = -1", 'id = "?"'))


def test_a_public_list_is_checked_line_by_line(glas_folder: Path) -> None:
    (glas_folder / "public.txt").write_text("# the public images\ntestA_1\n\ntestA_9\ntestB_2\ntestA_1\n")
    text = GLAS_CONTEST.replace("public = 0.5\nseed = 2015", 'public_list = "public.txt"')
    code, output = check(glas_folder, text)
    assert code == 2
    assert "public.txt:4: 'testA_9' is not a unit of the test set" in output
    assert "public.txt:6: repeats 'testA_1' of line 2" in output
    (glas_folder / "public.txt").write_text("testA_1\ntestB_2\n")
    contest = load(glas_folder / "contest.toml")
    assert contest.split is not None and contest.split.count("public") == 2 and contest.split.count("private") == 4
    assert contest.split.stamp()["public_list"] == "public.txt"


def faces_contest(folder: Path, submissions: str) -> str:
    """The text of a face-clustering contest on the demo set written in ``folder`` (a program contest reads its images)."""
    demo = get("face-clustering").write_demo(folder)
    images = 'images = "images"\n' if submissions == "programs" else ""
    return (
        f'id = "faces"\ntitle = "Faces"\nchallenge = "face-clustering"\ntruth = "{demo.truth.name}"\n{images}\n'
        "[parameters]\nth1_s = 600\nth2_s = 1200\nram_max_mb = 4096\n\n"
        f'[[phase]]\nname = "test"\nstart = 2026-01-01T00:00:00Z\nend = 2026-02-01T00:00:00Z\nsubmissions = "{submissions}"\n'
    )


def test_face_clustering_contests_must_set_the_thresholds_and_no_measurement(tmp_path: Path) -> None:
    base = faces_contest(tmp_path, "files")
    assert check(tmp_path, base)[0] == 0
    code, output = check(tmp_path, base.replace("ram_max_mb = 4096\n", ""))
    assert code == 2 and "contest.toml:6: a face-clustering contest must set ram_max_mb" in output
    code, output = check(tmp_path, base.replace("ram_max_mb = 4096\n", "ram_max_mb = 4096\ntime_s = 5\n"))
    assert code == 2 and "contest.toml:10: time_s is measured for each submission" in output
    code, output = check(tmp_path, base.replace("th2_s = 1200", "th2_s = -3"))
    assert code == 2 and "contest.toml:8: parameter th2_s = -3: must be a finite number > 0" in output


def test_a_missing_or_unreadable_contest_file(tmp_path: Path) -> None:
    (tmp_path / "contest.toml").write_bytes(b"\xff\xfe")
    code, output = run("contest", "check", str(tmp_path / "contest.toml"))
    assert code == 2 and "not UTF-8" in output
    with pytest.raises(ContestError):
        load(tmp_path / "contest.toml")


@pytest.mark.parametrize(
    ("fraction", "units", "count"),
    [(0.3, 10, 3), (0.25, 10, 3), (0.35, 10, 4), (0.5, 3, 2), (0.05, 10, 1), (0.04, 10, 0), (0.15, 10, 2)],
)
def test_public_count_rounds_halves_up_exactly(fraction: float, units: int, count: int) -> None:
    assert public_count(fraction, units) == count  # 0.15 x 10 is 1.5000000000000002 in floats; exactly 1.5 here


def test_the_draw_depends_on_seed_and_units_only() -> None:
    units = [f"image_{i:03d}" for i in range(200)]
    drawn = draw_public(units, 0.3, 7)
    assert len(drawn) == 60 and drawn == draw_public(list(reversed(units)), 0.3, 7)
    assert drawn != draw_public(units, 0.3, 8)
    grown = draw_public(units + [f"extra_{i}" for i in range(10)], 0.3, 7)
    assert len(drawn - grown) <= 10  # new units move only those near the cut


def test_evaluate_with_a_contest_scores_both_splits_and_the_whole(glas_folder: Path) -> None:
    contest = str(glas_folder / "contest.toml")
    code, output = run(
        "evaluate",
        "--contest",
        contest,
        "--submission",
        str(glas_folder / "submission"),
        "--json",
        "-",
        "--workers",
        "1",
    )
    assert code == 0, output
    doc = json.loads(output)
    assert set(doc["splits"]) == {"public", "private"} and doc["splits"]["public"]["units"] == 3
    assert "f1/testA" in doc["splits"]["private"]["scores"] and doc["scores"]["f1"] is not None
    assert doc["signature"]["contest"]["id"] == "glas-demo" and doc["signature"]["contest"]["split"]["public"] == 0.5
    assert doc["parameters"]["parts"] == ["testA", "testB"]
    code, output = run("evaluate", "--contest", contest, "--submission", str(glas_folder / "submission"))
    assert code == 0 and "public" in output and "private" in output and "whole" in output


def test_the_public_view_holds_no_private_number(glas_folder: Path) -> None:
    contest = str(glas_folder / "contest.toml")
    code, output = run(
        "evaluate",
        "--contest",
        contest,
        "--submission",
        str(glas_folder / "submission"),
        "--json",
        "-",
        "--workers",
        "1",
    )
    full = json.loads(output)
    code, output = run(
        "evaluate",
        "--contest",
        contest,
        "--submission",
        str(glas_folder / "submission"),
        "--json",
        "-",
        "--view",
        "public",
    )
    public = json.loads(output)
    assert public["view"] == "public" and public["scores"] == {} and public["details"] == {}
    assert set(public["splits"]) == {"public"} and public["splits"]["public"] == full["splits"]["public"]
    private_images = set(full["splits"]["private"]["details"]["per_image"])
    assert private_images and not private_images & set(public["splits"]["public"]["details"]["per_image"])
    shown = set(_numbers(public))
    hidden = {*_numbers(full["splits"]["private"]), *_numbers(full["scores"]), *_numbers(full["details"])} - set(
        _numbers(full["splits"]["public"])
    )
    assert hidden and not shown & {v for v in hidden if isinstance(v, float)}
    assert not any(image in json.dumps(public) for image in private_images)
    code, output = run(
        "evaluate", "--contest", contest, "--submission", str(glas_folder / "submission"), "--view", "public"
    )
    assert code == 0 and "public" in output and "private" not in output and "whole" not in output


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--truth", "TRUTH"], "--truth: the contest file fixes it"),
        (["--set", "binary=label"], "--set binary: the contest file fixes the parameters"),
        (["fuzzy-jaccard"], "is a glas contest, not fuzzy-jaccard"),
    ],
)
def test_options_the_contest_fixes_are_refused(glas_folder: Path, extra: list[str], fragment: str) -> None:
    extra = [str(glas_folder / "truth") if e == "TRUTH" else e for e in extra]
    code, output = run(
        "evaluate",
        *extra,
        "--contest",
        str(glas_folder / "contest.toml"),
        "--submission",
        str(glas_folder / "submission"),
    )
    assert code == 2 and fragment in output, output


def _numbers(value: object) -> list[float | int]:
    if isinstance(value, dict):
        return [n for v in value.values() for n in _numbers(v)]
    if isinstance(value, list):
        return [n for v in value for n in _numbers(v)]
    return [value] if isinstance(value, (int, float)) and not isinstance(value, bool) else []


def test_program_limits_take_a_disk_budget_with_a_default(tmp_path: Path) -> None:
    base = faces_contest(tmp_path, "programs") + "\n[limits]\nmemory_mb = 2048\n"
    (tmp_path / "contest.toml").write_text(base)
    assert load(tmp_path / "contest.toml").limits.disk_mb == DEFAULT_DISK_MB == 1024
    (tmp_path / "contest.toml").write_text(base + "disk_mb = 0.5\n")
    assert load(tmp_path / "contest.toml").limits.disk_mb == 0.5
    code, output = check(tmp_path, base + "disk_mb = 0\n")
    assert code == 2 and "contest.toml:20: limits.disk_mb = 0: must be a positive number" in output
    code, output = check(tmp_path, base + 'disk_mb = "lots"\n')
    assert code == 2 and "contest.toml:20: limits.disk_mb must be a positive number, not a string" in output


def test_the_caps_of_the_second_security_pass_refuse_what_is_not_a_positive_number(tmp_path: Path) -> None:
    """[quota] failed_per_day and rejected_per_hour, [service] unpack_ratio: a zero, a negative or a text is refused with its line."""
    base = faces_contest(tmp_path, "programs") + "\n[limits]\nmemory_mb = 2048\n"
    for table, key, bad in (
        ("quota", "failed_per_day", "0"),
        ("quota", "rejected_per_hour", "-3"),
        ("service", "unpack_ratio", '"big"'),
    ):
        code, output = check(tmp_path, base + f"[{table}]\n{key} = {bad}\n")
        assert (
            code == 2 and f"{table}.{key}" in output and "must be a positive" in output and "contest.toml:2" in output
        ), output


def test_a_trusted_proxy_must_be_an_address_or_a_network() -> None:
    from podium.core.errors import UsageError
    from podium.service.proxies import parse_proxies

    assert [str(n) for n in parse_proxies("127.0.0.1, 10.0.0.0/8")] == ["127.0.0.1/32", "10.0.0.0/8"]
    with pytest.raises(UsageError, match=r"--trusted-proxy 'proxy\.example': give an IP address or a network"):
        parse_proxies(["127.0.0.1", "proxy.example"])


@pytest.mark.parametrize(
    ("old", "new", "fragment"),
    [
        ("per_day = 5", "per_day = true", "quota.per_day must be a positive integer, not a boolean"),
        ("per_day = 5", 'per_day = "5"', "quota.per_day must be a positive integer, not a string"),
        ("per_day = 5", "per_day = 5.0", "quota.per_day must be a positive integer, not a number"),
        ("decimals = 3", "decimals = false", "ranking.decimals must be an integer from 0 to 15, not a boolean"),
        ("seed = 2015", 'seed = "2015"', "split.seed must be an integer, not a string"),
        (
            'final = "best"',
            "final = true",
            "ranking.final must be best (by public score), last or selected, not a boolean",
        ),
        (
            'submissions = "files"\n\n[quota]',
            'submissions = "files"\nopens = 1\n\n[quota]',
            "unknown key phase[2].opens",
        ),
        ('name = "final"', "name = 3", "phase[2].name must be the phase's name, not an integer"),
    ],
)
def test_types_are_strict_as_toml_writes_them(glas_folder: Path, old: str, new: str, fragment: str) -> None:
    """No "5" for 5, no true for 1, no 5.0 for an integer: the TOML type is part of the contest file's meaning."""
    code, output = check(glas_folder, GLAS_CONTEST.replace(old, new, 1))
    assert code == 2 and fragment in output and "Traceback" not in output, output


def test_problems_of_every_table_and_rule_are_listed_at_once(glas_folder: Path) -> None:
    """Type errors, unknown keys and rules between keys of different tables, all in one answer, each on its line."""
    text = (
        GLAS_CONTEST.replace('end = "2026-02-08T12:00:00+01:00"', 'end = "2026-01-08T12:00:00+01:00"')
        .replace('final = "best"', 'final = "selected"')
        .replace('timezone = "Europe/Paris"', 'timezone = "Mars/Olympus"\nimages = 3')
        + "\n[service]\nupload_gb = 1\n"
    )
    code, output = check(glas_folder, text)
    assert code == 2 and "has 5 problems" in output, output
    for marker, fragment in (
        ('end = "2026-01-08', "ends (2026-01-08T12:00:00+01:00) before it starts"),
        ('final = "selected"', "needs max_selected"),
        ("Mars/Olympus", "not an IANA time zone name"),
        (
            "images = 3",
            "images must be the folder of test images that programs read, relative to this file, not an integer",
        ),
        ("upload_gb", "did you mean upload_mb?"),
    ):
        assert any(
            f"contest.toml:{_line_of(text, marker)}: " in row and fragment in row for row in output.splitlines()
        ), (fragment, output)
