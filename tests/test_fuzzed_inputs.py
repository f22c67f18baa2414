"""Bad input is normal input: hostile variants of every challenge's demo never break podium.

Each case (``podium.testing.hostile``) changes one thing in a copy of the demo's submission
(or, for one case in five, its truth) the way a hostile participant or a careless organizer
would (or, for one case in twenty, gives ``podium rank`` or ``podium report`` a broken result document), and runs
podium on it in a forked child. No case may end in an internal error, an exit code its side
does not allow, a run over 10 CPU seconds (or 60 s waiting), a peak of more than 1 GB, or a read of the canary file that
the links in hostile inputs point to. ``PODIUM_FUZZ_CASES`` sets the number of cases
per challenge (default 120); ``benchmarks/fuzz.py`` runs 1,000 per challenge with inputs up to
300 MB and records time and memory. Hostile uploads for ``podium serve`` (archives,
``podium.testing.hostile.hostile_archive``) go through the unpacking the service does.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import sys
import time
from pathlib import Path

import pytest

from podium.api import evaluate
from podium.challenges import IDS, get
from podium.testing.hostile import make_case, run_case
from podium.testing.hostile_contest import TERMS, TERMS_DAMAGES, hostile_contest, hostile_terms

CASES = int(os.environ.get("PODIUM_FUZZ_CASES", "120"))
EXAMPLES = Path(__file__).parent.parent / "examples" / "contests"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="cases run in forked children")


# camera-traps runs twice: its tables' compiled scan and compiled matching run where Numba is loaded
# already (or on large inputs), so each way is chosen here rather than by what ran before in this process.
# ilsvrc2012-cls too: a command reads a small clean file without NumPy, which this process has loaded.
READERS = [(c, None) for c in IDS if c != "camera-traps"] + [
    ("camera-traps", "str"),
    ("camera-traps", "compiled"),
    ("ilsvrc2012-cls", "plain"),
]


def _plain_as_in_a_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """ILSVRC Task 1's plain path, chosen by size alone as in a command's process (NumPy not loaded)."""
    from podium.challenges import ilsvrc2012

    monkeypatch.setattr(ilsvrc2012, "plain_pays", lambda size: size <= ilsvrc2012.SMALL_BYTES)


@pytest.mark.parametrize(("challenge", "reader"), READERS)
def test_hostile_inputs_never_break_podium(
    tmp_path: Path, challenge: str, reader: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if reader == "plain":
        _plain_as_in_a_command(monkeypatch)
    elif reader is not None:
        from podium.formats import detection_table
        from podium.metrics import detection_points

        if reader == "compiled":
            import podium.scoring.kernels  # noqa: F401  # loaded before the children fork, as in a service worker
        monkeypatch.setattr(detection_table, "_scan_pays", lambda body: reader == "compiled")
        monkeypatch.setattr(detection_points, "_compiled_pays", lambda pred, truth: reader == "compiled")
    demo = get(challenge).write_demo(tmp_path / "demo")
    # The challenge's kernels loaded (or compiled, from an empty cache: the bounds-checked rerun's) before the
    # children fork, as in a service worker: the first case is timed for its input, not for Numba's compiler.
    assert not evaluate(challenge, demo.truth, demo.submission, **demo.settings).errors
    failures = []
    kinds = set()
    for number in range(CASES):
        case = make_case(challenge, demo, tmp_path / f"case{number}", number, big_mb=4)
        outcome = run_case(case, time_limit_s=10.0)
        kinds.add(case.kind)
        if outcome.peak_mb > 1024:
            failures.append(f"#{number} {case.side} {case.kind}: peak memory {outcome.peak_mb:.0f} MB")
        if outcome.problems:
            failures.append(
                f"#{number} {case.side} {case.kind} {case.target}: {', '.join(outcome.problems)}\n{outcome.output_tail}"
            )
        shutil.rmtree(tmp_path / f"case{number}", ignore_errors=True)
    assert not failures, f"{len(failures)} of {CASES} cases failed:\n" + "\n".join(failures[:10])
    assert len(kinds) >= 10, sorted(kinds)  # the cases cover many kinds of hostility


REWRITES = max(8, CASES // 10)


@pytest.mark.parametrize(("challenge", "reader"), [(c, None) for c in IDS] + [("ilsvrc2012-cls", "plain")])
def test_rewrites_the_format_allows_keep_the_score(
    tmp_path: Path, challenge: str, reader: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Numbers written another way, padding, line ends, a byte-order mark, rows or photos in another
    order, cluster numbers permuted, images encoded again, archives (``podium.synthetic.rewrites``):
    the scores stay the same to the last bit (0.8.5 read ``179.0  `` beside ``179.00`` as 17.9)."""
    if reader == "plain":
        _plain_as_in_a_command(monkeypatch)
    import json
    import random

    import podium
    from podium.synthetic.rewrites import rewrite

    demo = get(challenge).write_demo(tmp_path / "demo")
    expected = podium.evaluate(challenge, demo.truth, demo.submission, **demo.settings)
    assert not expected.errors
    failures = []
    for number in range(REWRITES):
        kinds, path = rewrite(
            challenge, demo.submission, tmp_path / f"rewrite{number}", random.Random(f"rewrite:{challenge}:{number}")
        )
        got = podium.evaluate(challenge, demo.truth, path, **demo.settings)
        if got.errors or json.dumps(got.scores, sort_keys=True) != json.dumps(expected.scores, sort_keys=True):
            changed = {k: (v, got.scores.get(k)) for k, v in expected.scores.items() if got.scores.get(k) != v}
            failures.append(f"#{number} {kinds}: {[e.message[:120] for e in got.errors[:2]]} {str(changed)[:300]}")
        shutil.rmtree(tmp_path / f"rewrite{number}")
    assert not failures, f"{len(failures)} of {REWRITES} rewrites changed the score:\n" + "\n".join(failures)


def test_hostile_uploads_never_break_unpacking(tmp_path: Path) -> None:
    """Uploads to podium serve: hostile archives end in a clear refusal or in files inside the upload's folder, nothing else."""
    import random

    from podium.formats.archives import ArchiveLimits, ArchiveProblem, unpack
    from podium.testing.hostile import hostile_archive

    demo = get("glas").write_demo(tmp_path / "demo")
    limits = ArchiveLimits(max_entries=300, max_bytes=16 << 20)
    failures, kinds = [], set()
    for number in range(CASES):
        kind, data = hostile_archive(random.Random(f"archive:{number}"), demo.submission)
        kinds.add(kind)
        root = tmp_path / f"case{number}"
        root.mkdir()
        (root / "upload").write_bytes(data)
        try:
            target = unpack(root / "upload", "upload", root / "out", limits)
        except ArchiveProblem as exc:
            assert str(exc) and "\n" not in str(exc).strip(), kind
        except Exception as exc:
            failures.append(f"#{number} {kind}: {type(exc).__name__}: {str(exc)[:300]}")
        else:
            if not target.resolve().is_relative_to((root / "out").resolve()):
                failures.append(f"#{number} {kind}: scored {target}, outside the upload's folder")
            try:
                [str(p).encode("utf-8") for p in (root / "out").rglob("*")]  # problems name files: they must be text
            except UnicodeEncodeError:
                failures.append(f"#{number} {kind}: a file name that is not UTF-8 was accepted")
        outside = {p.name for p in root.iterdir()} - {"upload", "out"}
        links = (
            [p for p in (root / "out").rglob("*") if p.is_symlink() or not (p.is_file() or p.is_dir())]
            if (root / "out").exists()
            else []
        )
        if outside or links:
            failures.append(
                f"#{number} {kind}: wrote {sorted(outside)} beside the folder, or links/special files {links[:3]}"
            )
        shutil.rmtree(root, ignore_errors=True)
    assert not (Path("/tmp") / "podium-escape.txt").exists()
    assert not failures, f"{len(failures)} of {CASES} cases failed:\n" + "\n".join(failures[:10])
    assert len(kinds) >= 10, sorted(kinds)


def test_hostile_archives_given_to_evaluate_end_in_a_score_or_a_rejection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``podium evaluate --submission ARCHIVE`` (and every platform entry, which scores the same way): exit 0 or 1, one clear story, no leftovers."""
    import random
    import tempfile

    from conftest import run
    from podium.testing.hostile import hostile_archive

    demo = get("glas").write_demo(tmp_path / "demo")
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(
        tempfile, "tempdir", str(tmp_path / "tmp")
    )  # where archives are unpacked: empty again after each case
    failures, kinds = [], set()
    for number in range(CASES // 4):
        kind, data = hostile_archive(random.Random(f"evaluate-archive:{number}"), demo.submission)
        kinds.add(kind)
        upload = tmp_path / f"case{number}.upload"
        upload.write_bytes(data)
        code, output = run(
            "evaluate", "glas", "--truth", str(demo.truth), "--submission", str(upload), "--workers", "1", "--quiet"
        )
        if code not in (0, 1) or "Traceback" in output or "internal error" in output:
            failures.append(f"#{number} {kind}: exit {code}: {output[-300:]}")
        if any((tmp_path / "tmp").iterdir()):
            failures.append(
                f"#{number} {kind}: left {sorted(p.name for p in (tmp_path / 'tmp').iterdir())} in the temporary folder"
            )
        upload.unlink()
    assert not failures, f"{len(failures)} of {CASES // 4} cases failed:\n" + "\n".join(failures[:10])
    assert len(kinds) >= 8, sorted(kinds)


@pytest.fixture(scope="module")
def tracks_contest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ILSVRC tasks example (three ``[[track]]`` tables, two ``[phase.quota]``) on the demo data, with a terms file, a content page and a public file."""
    folder = tmp_path_factory.mktemp("tracks")
    contest = folder / "examples" / "contests" / "ilsvrc2012-tasks"
    shutil.copytree(EXAMPLES / "ilsvrc2012-tasks", contest)
    for challenge in ("ilsvrc2012-cls", "ilsvrc2012-loc", "ilsvrc2012-fine"):
        get(challenge).write_demo(folder / "demo-data" / challenge)
    (contest / "terms.md").write_text(TERMS)
    (contest / "overview.md").write_text(TERMS)  # a content page, and a public file of the data page
    with (contest / "contest.toml").open("a") as file:
        file.write(
            '\n[service]\nterms = "terms.md"\n\n[pages]\noverview = "overview.md"\n\n[data]\nfiles = ["overview.md"]\n'
        )
    return contest / "contest.toml"


def _located(output: str, path: Path) -> bool:
    """Whether every problem podium printed names ``path`` and a line of it (a key missing from the file has no line)."""
    name = re.escape(str(path))
    problems = [row for row in output.splitlines() if row.startswith("error ")]
    if not problems:  # one problem with the whole file: its encoding, its size
        return re.search(rf"{name} (is not .*line \d+\)|is \d+ MB)", output) is not None
    return all(re.match(rf"error {name}(:\d+: |: \S+ is missing)", row) for row in problems)


def test_hostile_contest_files_with_tracks_and_phase_quotas_are_refused_line_by_line(tracks_contest: Path) -> None:
    """``podium contest check`` on a damaged contest file with tracks: valid (0) or every problem located by file and line (2); never a traceback, never slow."""
    from conftest import run

    text = tracks_contest.read_text()
    case = tracks_contest.with_name("case.toml")  # beside the original: its relative paths hold
    failures, kinds = [], set()
    for number in range(max(32, CASES // 3)):
        kind, data = hostile_contest(random.Random(f"contest:{number}"), text)
        kinds.add(kind)
        case.write_bytes(data)
        started = time.monotonic()
        code, output = run("contest", "check", str(case))
        took = time.monotonic() - started
        if code not in (0, 2) or "Traceback" in output or "internal error" in output or took > 10:
            failures.append(f"#{number} {kind}: exit {code} in {took:.1f} s: {output[-400:]}")
        elif code == 2 and not _located(output, case):
            failures.append(f"#{number} {kind}: a problem without its file and line: {output[-400:]}")
    assert not failures, f"{len(failures)} cases failed:\n" + "\n".join(failures[:10])
    assert len(kinds) >= 12, sorted(kinds)


def _active_html(html: str) -> list[str]:
    """What in ``html`` a browser would run, send or frame: script, form, frame, object and input tags, event handlers, ``javascript:`` addresses."""
    from html.parser import HTMLParser

    found: list[str] = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag in ("script", "form", "iframe", "frame", "object", "embed", "input", "style", "base", "meta"):
                found.append(f"<{tag}>")
            for name, value in attrs:
                if name.startswith("on") or (value or "").strip().lower().startswith(("javascript:", "data:")):
                    found.append(f"<{tag} {name}={value!r}>")

    Tags().feed(html)
    return found


def test_hostile_terms_files_are_refused_or_shown_inert(tracks_contest: Path) -> None:
    """A terms file that is not UTF-8 text of at most 200,000 bytes is refused naming the file and line (exit 2); text is shown with no script, form, frame or handler."""
    from conftest import run
    from podium.service.markdown import _rendered

    terms = tracks_contest.with_name("terms.md")
    failures, kinds = [], set()
    try:
        for number in range(max(28, CASES // 4)):
            kind, data = hostile_terms(number, random.Random(f"terms:{number}"))
            kinds.add(kind)
            terms.write_bytes(data)
            code, output = run("contest", "check", str(tracks_contest))
            if TERMS_DAMAGES[kind]:
                started = time.process_time()  # CPU, not wall: a loaded machine must not fail it, a slow renderer must
                html = _rendered.__wrapped__(str(terms), 0, 0, ".", (), 1)  # the terms page's rendering, uncached
                took = time.process_time() - started
                shown = _active_html(html)
                if code != 0 or shown or took > 2:
                    failures.append(
                        f"#{number} {kind}: exit {code}, rendered in {took:.1f} s with {shown[:3]}: {output[-300:]}"
                    )
            elif (
                code != 2
                or "Traceback" in output
                or not re.search(r"contest\.toml:\d+: service\.terms: terms\.md (line \d+: |is over)", output)
            ):
                failures.append(f"#{number} {kind}: exit {code}, not refused by file and line: {output[-300:]}")
    finally:
        terms.write_text(TERMS)
    assert not failures, f"{len(failures)} cases failed:\n" + "\n".join(failures[:10])
    assert kinds == set(TERMS_DAMAGES), sorted(set(TERMS_DAMAGES) - kinds)


@pytest.mark.parametrize("how", ["computes", "waits"])
def test_a_case_that_never_ends_is_a_hang(tmp_path: Path, how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hang is a child past the time limit in CPU seconds (a loaded machine is no hang), or past six
    times it in wall seconds when it waits without computing; the child is stopped either way."""
    from podium.cli import cli
    from podium.testing import hostile

    def forever(*args: object, **kwargs: object) -> None:
        while True:
            if how == "waits":
                time.sleep(1)

    monkeypatch.setattr(cli, "main", forever)
    (tmp_path / "canary.txt").write_text(hostile.CANARY_TEXT)
    case = hostile.Case("glas", 0, "submission", "test", "none", [], 0, tmp_path)
    outcome = hostile.run_case(case, time_limit_s=0.5)
    assert outcome.problems == ["hang"]
    if how == "waits":  # stopped by the wall clock at 6 x 0.5 s, the CPU limit never reached
        assert 3.0 <= outcome.seconds < 30
