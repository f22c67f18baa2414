"""face-clustering end to end: the rules' CSV, every rejection, the final points."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import normalized_mutual_info_score

from conftest import run, run_json
from podium.challenges.face_clustering import final_points
from podium.formats import clustering_csv
from test_metric_clustering import IIR_PRED, IIR_TRUE

RULES_NAMES = [f"I{i}.jpg" for i in range(1, 6)]
RULES_EXAMPLE = "I1, 2\nI2, 1\nI3, 3\nI4, 1\nI5, 2\n"


def write_truth(path: Path, names, identities, header: bool = True) -> Path:
    path.write_text(("image,identity\n" if header else "") + "".join(f"{n},{i}\n" for n, i in zip(names, identities)))
    return path


@pytest.fixture
def rules(tmp_path: Path) -> tuple[Path, Path]:
    truth = write_truth(tmp_path / "truth.csv", RULES_NAMES, ["ali", "reza", "sara", "reza", "ali"])
    (tmp_path / "sub").mkdir()
    return truth, tmp_path / "sub" / "team.csv"


def evaluate(truth: Path, submission: Path, *extra: str) -> tuple[int, dict]:
    return run_json("face-clustering", truth, submission, *extra)


def test_rules_example_is_accepted_and_perfect(rules) -> None:
    truth, sub = rules
    sub.write_text(RULES_EXAMPLE)
    code, doc = evaluate(truth, sub)
    assert code == 0, doc["errors"]
    assert doc["scores"]["pairwise_f"] == 1.0 and doc["scores"]["nmi"] == 1.0
    assert doc["scores"]["clusters"] == 3 and doc["scores"]["final"] is None
    code, doc = evaluate(truth, sub.parent)  # the folder holding the team's CSV
    assert code == 0


def test_textbook_example_through_files(tmp_path: Path) -> None:
    names = [f"x{i:02d}.jpg" for i in range(17)]
    truth = write_truth(tmp_path / "t.csv", names, [f"c{t}" for t in IIR_TRUE], header=False)
    sub = tmp_path / "s.csv"
    sub.write_text("".join(f"{n},{p}\n" for n, p in zip(names, IIR_PRED)))
    code, doc = evaluate(truth, sub)
    assert code == 0
    s = doc["scores"]
    assert (s["pairwise_precision"], round(s["pairwise_recall"], 3), round(s["pairwise_f"], 3), round(s["nmi"], 2)) == (
        0.5,
        0.455,
        0.476,
        0.36,
    )
    assert doc["details"]["pairs"] == {"tp": 20, "fp": 20, "fn": 24, "tn": 72}


@pytest.mark.parametrize("seed", range(5))
def test_random_files_agree_with_sklearn(tmp_path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 300
    identity = rng.integers(0, 30, n)
    cluster = np.unique(np.where(rng.random(n) < 0.7, identity, rng.integers(0, 60, n)), return_inverse=True)[1] + 1
    names = [f"img{i}.png" for i in range(n)]  # natural order: img2 before img10
    truth = write_truth(tmp_path / "t.csv", names, identity)
    sub = tmp_path / "s.csv"
    sub.write_text("".join(f"img{i},{c}\n" for i, c in enumerate(cluster)))
    code, doc = evaluate(truth, sub, "--set", "nmi_average=geometric")
    assert code == 0, doc["errors"]
    expected = normalized_mutual_info_score(identity, cluster, average_method="geometric")
    assert doc["scores"]["nmi"] == pytest.approx(expected, abs=1e-12)


def test_tolerated_forms(rules) -> None:
    truth, sub = rules
    text = '\ufeffI1.jpg , 2\r\n"I2" ,1\r\n  I3,3  \r\n\r\nI4.jpg,  1\r\nI5, 2\r\n\r\n'
    sub.write_bytes(text.encode("utf-8"))
    code, doc = evaluate(truth, sub)
    assert code == 0, doc["errors"]
    assert doc["scores"]["nmi"] == 1.0


def expect(truth: Path, sub: Path, text: str, code_name: str, fragment: str, line: int | None) -> dict:
    sub.write_text(text)
    code, doc = evaluate(truth, sub)
    assert code == 1, doc
    matching = [e for e in doc["errors"] if e["code"] == code_name]
    assert matching, doc["errors"]
    assert any(fragment in e["message"] and e["line"] == line for e in matching), matching
    assert all(e["file"] == str(sub) for e in matching)
    return doc


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("NaN", "not a positive integer"),
        ("inf", "not a positive integer"),
        ("0", "not a positive integer"),
        ("-1", "not a positive integer"),
        ("2.5", "not a positive integer"),
        ("", "has no cluster number"),
        ("2.0", "must be written as an integer (e.g. 2)"),
        ("1_0", "not a positive integer"),
        ("٢", "not a positive integer"),
    ],
)
def test_bad_cluster_values(rules, value: str, fragment: str) -> None:
    truth, sub = rules
    expect(truth, sub, RULES_EXAMPLE.replace("I3, 3", f"I3, {value}"), "bad_cluster", fragment, 3)


def test_row_count_and_missing_image(rules) -> None:
    truth, sub = rules
    doc = expect(truth, sub, "I1, 1\nI2, 2\nI4, 2\nI5, 1\n", "missing", "has no row for 1 image: I3.jpg", None)
    assert any(
        e["code"] == "row_count" and "has 4 rows; the test set has 5 images" in e["message"] for e in doc["errors"]
    )


def test_duplicate_and_unknown_names(rules) -> None:
    truth, sub = rules
    text = "I1, 1\nI2, 2\nI2, 2\nI4, 2\nI9, 1\n"
    doc = expect(truth, sub, text, "duplicate", "repeats image 'I2.jpg' of line 2", 3)
    assert any(
        e["code"] == "unknown_image" and e["line"] == 5 and "'I9' is not in the test set" in e["message"]
        for e in doc["errors"]
    )


def test_ambiguous_name_without_extension(tmp_path: Path) -> None:
    truth = write_truth(tmp_path / "t.csv", ["a.jpg", "a.png", "b.jpg"], ["x", "x", "y"])
    expect(
        truth,
        tmp_path / "s.csv",
        "a, 1\na.png, 1\nb, 2\n",
        "unknown_image",
        "'a' is ambiguous without its extension",
        1,
    )


def test_cluster_numbers_must_run_1_to_k(rules) -> None:
    truth, sub = rules
    expect(
        truth, sub, "I1, 1\nI2, 4\nI3, 4\nI4, 1\nI5, 1\n", "cluster_numbering", "with K = 4, 2, 3 are never used", None
    )


def test_rows_out_of_order(rules) -> None:
    truth, sub = rules
    text = "I1, 1\nI3, 2\nI2, 2\nI4, 3\nI5, 1\n"
    expect(truth, sub, text, "order", "'I2.jpg' comes after 'I3.jpg'", 3)
    sub.write_text(text)
    code, doc = evaluate(truth, sub, "--set", "order=ignore")
    assert code == 0 and [w["code"] for w in doc["warnings"]] == ["order"]


def test_order_violation_is_named_where_the_natural_order_breaks(tmp_path: Path) -> None:
    names = ["I1.jpg", "I2.jpg", "I10.jpg"]
    truth = write_truth(tmp_path / "t.csv", names, ["x", "y", "z"])
    # I2 then I10 is natural order; the order breaks at line 3.
    expect(truth, tmp_path / "s.csv", "I2, 1\nI10, 2\nI1, 3\n", "order", "'I1.jpg' comes after 'I10.jpg'", 3)


@pytest.mark.parametrize("size", [200_000, 900_000])
def test_a_line_too_long_is_named(rules, size: int) -> None:
    truth, sub = rules
    sub.write_text("I1, 1\n" + "I" * size + ", 2")  # a giant name, the last line without newline
    expect(truth, sub, sub.read_text(), "unreadable", "line 2 is longer than 65,536 characters", 2)


def test_padding_is_removed_in_linear_time(rules) -> None:
    truth, sub = rules
    sub.write_text("I1," + "\t" * 300_000 + "2\nI2, 1\nI3, 3\nI4, 1\nI5, 2\n")
    start = time.process_time()  # CPU seconds (every thread's): a loaded machine stretches the wall clock, not these
    code, doc = evaluate(truth, sub)
    assert code == 1 and time.process_time() - start < 5  # the line is too long; quickly said
    sub.write_text("I1," + "\t" * 60_000 + "2\nI2, 1\nI3, 3\nI4, 1\nI5, 2\n")
    start = time.process_time()
    code, doc = evaluate(truth, sub)
    assert code == 0 and time.process_time() - start < 5, doc["errors"]


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("\n" * 500_000, "has 500,001 lines; a file for 5 images needs at most 1,010"),
        ("\n" * 3_000_000, "is 3.0 MB; a file for 5 images needs at most 1.0 MB"),
        ("I1, 1\n" * 300_000, "a file for 5 images needs at most 1.0 MB"),
    ],
)
def test_files_far_larger_than_the_test_set_are_refused_unread(rules, content: str, fragment: str) -> None:
    truth, sub = rules
    sub.write_text(content)
    expect(truth, sub, content, "unreadable", fragment, None)


def test_a_truth_of_more_lines_than_a_submission_may_hold_is_read(tmp_path: Path) -> None:
    """The organizer's truth is bounded by its bytes, not by the 2,000,000 lines meant for a
    participant's text files (issue 40.7; 5,000,000 rows through the command: benchmarks/end_to_end.py)."""
    n = 2_000_001
    truth = tmp_path / "truth.csv"
    truth.write_text("image,identity\n" + "".join(f"{k},{k % 1000}\n" for k in range(n)))
    table = clustering_csv.read_truth(truth)
    assert len(table.names) == n and table.names[-1] == "2000000" and len(set(table.identity[:2000].tolist())) == 1000


def test_malformed_rows(rules) -> None:
    truth, sub = rules
    doc = expect(truth, sub, "I1, 1, 7\nI2;2\nI3, 3\nI4, 1\nI5, 1\n", "malformed", "got 3 fields", 1)
    assert any(e["line"] == 2 and "separated by commas" in e["message"] for e in doc["errors"])


def test_huge_cluster_number_is_rejected_without_allocating(rules) -> None:
    truth, sub = rules
    expect(
        truth,
        sub,
        RULES_EXAMPLE.replace("I3, 3", "I3, 999999999999999999"),
        "cluster_numbering",
        "is more than the 5 images",
        None,
    )


def test_empty_submission_file(rules) -> None:
    truth, sub = rules
    doc = expect(truth, sub, "", "row_count", "has 0 rows; the test set has 5 images", None)
    assert any(e["code"] == "missing" for e in doc["errors"])


def test_odd_unicode_names_do_not_break_the_order_check(tmp_path: Path) -> None:
    names = ["b²", "a²", "²"]
    truth = write_truth(tmp_path / "t.csv", names, ["x", "y", "z"])
    expect(truth, tmp_path / "s.csv", "b², 1\na², 2\n², 3\n", "order", "'a²' comes after 'b²'", 2)


def test_symlinked_csv_in_a_folder_is_refused(rules, tmp_path: Path) -> None:
    truth, sub = rules
    (tmp_path / "elsewhere.csv").write_text(RULES_EXAMPLE)
    (sub.parent / "team.csv").symlink_to(tmp_path / "elsewhere.csv")
    code, doc = evaluate(truth, sub.parent)
    assert code == 1 and doc["errors"][0]["code"] == "not_a_file" and "symbolic link" in doc["errors"][0]["message"]


def test_fifo_submission_is_refused_without_blocking(rules) -> None:
    truth, sub = rules
    os.mkfifo(sub)
    code, doc = evaluate(truth, sub)
    assert code == 1 and doc["errors"][0]["code"] == "not_a_file"


def test_header_row_is_a_warning(rules) -> None:
    truth, sub = rules
    sub.write_text("image,cluster\n" + RULES_EXAMPLE)
    code, doc = evaluate(truth, sub)
    assert code == 0 and doc["warnings"][0]["code"] == "header" and doc["warnings"][0]["line"] == 1


@pytest.mark.parametrize(
    ("content", "fragment"),
    [(b"I1, 1\n\xff\xfe\n", "is not UTF-8 text (bad byte at line 2)"), (b"I1\x00, 1\n", "NUL bytes")],
)
def test_binary_files(rules, content: bytes, fragment: str) -> None:
    truth, sub = rules
    sub.write_bytes(content)
    code, doc = evaluate(truth, sub)
    assert code == 1 and fragment in doc["errors"][0]["message"]


def test_folder_without_one_csv(rules) -> None:
    truth, sub = rules
    code, doc = evaluate(truth, sub.parent)
    assert code == 1 and doc["errors"][0]["code"] == "no_file"
    (sub.parent / "a.csv").write_text(RULES_EXAMPLE)
    (sub.parent / "b.csv").write_text(RULES_EXAMPLE)
    code, doc = evaluate(truth, sub.parent)
    assert code == 1 and doc["errors"][0]["code"] == "several_files"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("image,identity\na.jpg,x\na.jpg,y\n", "repeats image 'a.jpg' of line 2"),
        ("a.jpg,x,z\n", "expected 'image,identity'"),
        ("a.jpg,\n", "expected 'image,identity'"),
        ("image,identity\n", "lists no image"),
    ],
)
def test_truth_problems_exit_2(tmp_path: Path, text: str, fragment: str) -> None:
    (tmp_path / "t.csv").write_text(text)
    (tmp_path / "s.csv").write_text("a, 1\n")
    code, output = run(
        "evaluate", "face-clustering", "--truth", str(tmp_path / "t.csv"), "--submission", str(tmp_path / "s.csv")
    )
    assert code == 2 and fragment in output, output


@pytest.mark.parametrize("prefix", ["", "person_"])
@pytest.mark.parametrize(
    "odd", [None, "07", "007", "00", "+7", "-7", "x", "7 ", "9" * 19, "\uff11", "", "_7"]
)  # "\uff11": a full-width 1
def test_identities_coded_by_integers_or_by_a_dictionary_alike(prefix: str, odd: str | None) -> None:
    """The truth's identities coded by their first image: a common prefix and integers written
    the one way go through NumPy; leading zeros, signs, words, spaces, another prefix and
    integers past int64 take the dictionary."""
    rng = np.random.default_rng(len(odd or ""))
    pool = [prefix + str(v) for v in [*rng.integers(0, 50, 20), 7, 0, 2**63 - 1, 10**18 - 1]]
    labels = [str(v) for v in rng.choice(pool, 300)]
    if odd is not None:
        labels[int(rng.integers(1, 300))] = prefix + odd
    elif prefix:
        labels[int(rng.integers(1, 300))] = labels[0].removeprefix(prefix)  # the same number without the prefix
    code_of: dict[str, int] = {}
    expected = [code_of.setdefault(label, row) for row, label in enumerate(labels)]
    assert clustering_csv.first_rows(labels).tolist() == expected


# --- final points ------------------------------------------------------------------------------

LIMITS = {"th1_s": 100.0, "th2_s": 200.0, "ram_max_mb": 1000.0, "w_f": 0.4, "w_nmi": 0.4, "w_time": 0.1, "w_ram": 0.1}


def test_final_points_formula() -> None:
    points = final_points(0.8, 0.6, time_s=25.0, ram_mb=250.0, **LIMITS)
    assert points.time_points == 0.75 and points.ram_points == 0.75
    assert points.final == pytest.approx(100 * (0.4 * 0.8 + 0.4 * 0.6 + 0.1 * 0.75 + 0.1 * 0.75), abs=1e-12)


@pytest.mark.parametrize(
    ("time_s", "time_points", "disqualified"),
    [
        (0.0, 1.0, False),
        (100.0, 0.0, False),
        (150.0, 0.0, False),
        (199.999, 0.0, False),
        (200.0, None, True),
        (500.0, None, True),
    ],
)
def test_time_thresholds_at_the_boundaries(time_s: float, time_points, disqualified: bool) -> None:
    points = final_points(1.0, 1.0, time_s=time_s, ram_mb=0.0, **LIMITS)
    assert (points.disqualified is not None) == disqualified
    if disqualified:
        assert points.final == 0.0
    else:
        assert points.time_points == time_points


def test_ram_points_floor_at_zero() -> None:
    assert final_points(1, 1, time_s=0, ram_mb=1000.0, **LIMITS).ram_points == 0.0
    assert final_points(1, 1, time_s=0, ram_mb=5000.0, **LIMITS).ram_points == 0.0


def test_final_through_the_cli(rules) -> None:
    truth, sub = rules
    sub.write_text(RULES_EXAMPLE)
    limits = ["--set", "th1_s=100", "--set", "th2_s=200", "--set", "ram_max_mb=1000"]
    code, doc = evaluate(truth, sub, "--set", "time_s=50", "--set", "ram_mb=500", *limits)
    assert code == 0 and doc["scores"]["final"] == pytest.approx(90.0, abs=1e-12)
    code, doc = evaluate(truth, sub, "--set", "time_s=200", "--set", "ram_mb=500", *limits)
    assert doc["status"] == "scored" and doc["scores"]["final"] == 0.0
    assert "reached Th2 = 200 s" in doc["details"]["disqualified"]
    code, doc = evaluate(truth, sub, "--set", "time_s=50", "--set", "ram_mb=500")
    assert doc["scores"]["final"] is None and doc["warnings"][0]["code"] == "final_incomplete"


@pytest.mark.parametrize(
    ("settings", "fragment"),
    [
        (["th1_s=200", "th2_s=100"], "must not be below th1_s"),
        (["w_f=0", "w_nmi=0", "w_time=0", "w_ram=0"], "must not all be 0"),
        (["time_s=-1"], "finite number >= 0"),
        (["beta=0"], "> 0"),
        (["nmi_average=median"], "must be one of arithmetic, geometric, min, max"),
    ],
)
def test_bad_settings_exit_2(rules, settings: list[str], fragment: str) -> None:
    truth, sub = rules
    sub.write_text(RULES_EXAMPLE)
    args = [a for s in settings for a in ("--set", s)]
    code, output = run("evaluate", "face-clustering", "--truth", str(truth), "--submission", str(sub), *args)
    assert code == 2 and fragment in output, output


@pytest.mark.parametrize("seed", range(20))
def test_stems_cut_every_names_last_extension(seed: int) -> None:
    """The one-replace path of TruthTable.stems gives what cutting each name at its last dot gives."""
    rng = np.random.default_rng(seed)
    pieces = ["a", "b.", ".jpg", "jpg", ".png", ".", "x y"]
    names = ["".join(rng.choice(pieces, size=int(rng.integers(1, 4)))) for _ in range(int(rng.integers(1, 30)))]
    if rng.random() < 0.7:
        names = [name + ".jpg" for name in names]
    table = clustering_csv.TruthTable(Path("t.csv"), names, np.zeros(len(names), np.int64))
    assert table.stems == [name.rpartition(".")[0] or name for name in names]
