"""Files of the face-clustering challenge.

Truth: CSV ``image,identity``, one row per image of the test folder (a header
row ``image,identity`` is optional); identity is any non-empty string.

Submission, as the rules define it: two columns, image name and cluster number,
one row per image, rows in ascending order of the image names, clusters
numbered 1..K with every number used (``I1, 2``). The name may be written with
or without its extension when that is unambiguous. A UTF-8 BOM, CRLF line ends,
spaces around values, blank lines and quoted fields are tolerated.

A clean file of at least :data:`ARROW_BYTES` (two fields on every line, no quote, no blank line)
is read by pyarrow's CSV reader (:mod:`podium.formats.arrow_tables`); any other file by the
``csv`` module row by row, which names every problem with its line. Both give the same rows
(tests/test_arrow_tables.py).
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import compress, count, pairwise, repeat
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from podium.core.errors import TruthError
from podium.core.issues import Issue, IssueLog, plural, summarize_names
from podium.formats.arrow_tables import clean_columns, filled, numbers, string_array
from podium.formats.files import FileProblem
from podium.formats.text import TRUSTED, TextLimits, decode_text, numeric_rows, read_text_bytes

if TYPE_CHECKING:
    import pyarrow as pa

HEADER_NAMES = {"image", "images", "file", "filename", "file_name", "name", "img", "image_name"}
HEADER_LABELS = {"identity", "id", "label", "person", "class", "name"}
HEADER_CLUSTERS = {"cluster", "clusters", "cluster_id", "cluster_number", "label", "id"}
POSITIVE_INTEGER = re.compile(r"0*[1-9][0-9]{0,17}")

INTEGRAL_FLOAT = re.compile(r"[+]?[0-9]+\.0*")
ARROW_BYTES = 3 << 18  # 768 KiB, ~28,000 rows: below it the row reader beats importing pyarrow (measured)
_DIGIT_RUNS = re.compile(r"([0-9]+)")


@dataclass(frozen=True, eq=False)
class TruthTable:
    """The test images in truth order, and their identities as integer codes (not consecutive)."""

    path: Path
    names: list[str]
    identity: NDArray[np.int64]  # code per image
    arrow_names: pa.Array | None = None  # the names as pyarrow read them (a clean truth)

    @cached_property
    def index_of(self) -> dict[str, int]:
        """Exact image name -> row."""
        return dict(zip(self.names, range(len(self.names))))

    @cached_property
    def ascending(self) -> bool:
        """Whether the truth lists the images in ascending name order."""
        return (self.arrow_names is not None and _arrow_ascending(self.arrow_names)) or _ascending(self.names)

    @cached_property
    def stems(self) -> list[str]:
        """Names without their extension (``a.b.jpg`` -> ``a.b``; ``.hidden`` stays).

        When every name ends with the first name's extension (the usual case), that
        extension is cut off the joined names in one ``str.replace``; else name by name.

        >>> TruthTable(Path("t.csv"), ["a.b.jpg", "c.jpg", ".jpg"], np.zeros(3, np.int64)).stems
        ['a.b', 'c', '.jpg']
        >>> TruthTable(Path("t.csv"), ["a.jpg", "b.jpg.jpg", "c.png", "d"], np.zeros(4, np.int64)).stems
        ['a', 'b.jpg', 'c', 'd']
        """
        if self._extension:
            joined = "\n".join(self.names) + "\n"
            return joined.replace(self._extension + "\n", "\n")[:-1].split("\n")  # a name has no line break
        return [name.rpartition(".")[0] or name for name in self.names]

    @cached_property
    def _extension(self) -> str:
        """The extension every name ends with, that none is alone (the first name's), or ``""``."""
        names = self.names
        extension = "." + names[0].rpartition(".")[2] if names and "." in names[0].lstrip(".") else ""
        joined = "\n".join(names) + "\n"
        alone = (
            joined.startswith(extension + "\n") or "\n" + extension + "\n" in joined
        )  # a name that is only the extension
        return extension if extension and joined.count(extension + "\n") == len(names) and not alone else ""

    @cached_property
    def column(self) -> pa.Array:
        """The names as a pyarrow string array (for a submission pyarrow read)."""
        return string_array(self.names) if self.arrow_names is None else self.arrow_names

    @cached_property
    def stem_column(self) -> pa.Array:
        """:attr:`stems` as a pyarrow string array; the common extension cut in C++."""
        import pyarrow.compute as pc

        if self._extension:
            return pc.utf8_slice_codeunits(self.column, 0, -len(self._extension))
        return string_array(self.stems)

    @cached_property
    def name_bytes(self) -> int:
        """The names' length in UTF-8 bytes, in all."""
        if self.arrow_names is not None:
            import pyarrow.compute as pc

            return int(pc.sum(pc.binary_length(self.arrow_names), min_count=0).as_py())
        return sum(map(len, map(str.encode, self.names)))

    @cached_property
    def ambiguous_stems(self) -> frozenset[str]:
        """Stems shared by several images (e.g. ``a.jpg`` and ``a.png``)."""
        if len(self._stem_rows) == len(self.stems):
            return frozenset()
        return frozenset(stem for stem, n in Counter(self.stems).items() if n > 1)

    @cached_property
    def index_of_stem(self) -> dict[str, int]:
        """Name without extension -> row, for unambiguous stems only."""
        ambiguous = self.ambiguous_stems
        if not ambiguous:
            return self._stem_rows
        return {stem: row for stem, row in self._stem_rows.items() if stem not in ambiguous}

    @cached_property
    def _stem_rows(self) -> dict[str, int]:
        return dict(zip(self.stems, range(len(self.stems))))


@dataclass
class Rows:
    """The non-blank rows of a CSV file: line numbers, and fields or the two columns."""

    lines: Sequence[int]
    fields: list[list[str]]  # leading spaces removed; empty when the file was read by pyarrow
    two: tuple[list[str], list[str]] | None = None  # the columns, stripped, when every row has two fields
    arrow: tuple[pa.Array, pa.Array] | None = None  # the two columns, stripped, as pyarrow read them

    def drop_header(self, labels: set[str]) -> int | None:
        """Remove a header row like ``image,identity``; its line number, if there was one."""
        if not self.lines:
            return None
        first = [self.arrow[0][0].as_py(), self.arrow[1][0].as_py()] if self.arrow else self.fields[0]
        if not _is_header(first, labels):
            return None
        if self.arrow:
            self.arrow = (self.arrow[0][1:], self.arrow[1][1:])
        else:
            del self.fields[0]
        header, self.lines = self.lines[0], self.lines[1:]
        return header

    def columns(self) -> tuple[list[str], list[str]] | None:
        """The two columns, stripped, if every row has exactly two fields."""
        if self.two is None and self.arrow is not None:
            self.two = self.arrow[0].to_pylist(), self.arrow[1].to_pylist()
        elif self.two is None and all(len(f) == 2 for f in self.fields):
            first, second = zip(*self.fields) if self.fields else ((), ())
            self.two = [x.strip() for x in first], [x.strip() for x in second]
        return self.two

    def field_lists(self) -> list[list[str]]:
        """Every row's fields, stripped."""
        if self.arrow is not None:
            self.columns()
        if self.two is not None:
            return [[a, b] for a, b in zip(*self.two)]
        return [[f.strip() for f in fields] for fields in self.fields]


def _read_rows(path: Path, header_labels: set[str], limits: TextLimits) -> tuple[Rows, int | None]:
    """The rows of a CSV file without its header row, and the header's line number if it had one.

    A clean file of :data:`ARROW_BYTES` or more is read by pyarrow (:func:`_read_clean`); any
    other file goes through the ``csv`` module line by line.
    """
    data = read_text_bytes(path, limits)
    rows = _read_clean(data) if len(data) >= ARROW_BYTES else None
    if rows is None:
        every = decode_text(data).splitlines()
        filled = list(compress(range(1, len(every) + 1), every))  # empty lines dropped in C: a truth may hold millions
        fields = list(csv.reader(filter(None, every), skipinitialspace=True))  # one row per line
        kept = [k for k, f in enumerate(fields) if f and f != [""]]
        rows = Rows([filled[k] for k in kept], [fields[k] for k in kept])
    return rows, rows.drop_header(header_labels)


def _read_clean(data: bytes) -> Rows | None:
    """The rows of a file whose every line is two fields without quotes (no blank line), read by
    pyarrow and stripped as ``str.strip`` strips them (no other whitespace is left in a clean
    file); ``None`` for any other file."""
    columns = clean_columns(data.removeprefix(b"\xef\xbb\xbf"), ",", 2, unicode=True)
    if columns is None:
        return None
    import pyarrow.compute as pc

    first, second = (pc.utf8_trim(column, " \t") for column in columns)
    return Rows(range(1, len(first) + 1), [], arrow=(first, second))


def _is_header(fields: list[str], labels: set[str]) -> bool:
    return len(fields) == 2 and fields[0].strip().lower() in HEADER_NAMES and fields[1].strip().lower() in labels


def read_truth(path: Path) -> TruthTable:
    """Read the truth CSV; :class:`TruthError` listing every problem."""
    if not path.is_file():
        raise TruthError(f"truth {path} is not a file (face-clustering takes a CSV image,identity)")
    try:
        rows, _ = _read_rows(path, HEADER_LABELS, TRUSTED)
    except FileProblem as exc:
        raise TruthError(f"truth {path} {exc}", [Issue("truth_text", str(exc), str(path), exc.line)]) from None
    clean = None if rows.arrow is None else _clean_truth(path, *rows.arrow)
    if clean is not None:
        return clean
    columns = rows.columns()
    problems: list[Issue] = []
    if columns is None or not all(columns[0]) or not all(columns[1]) or not _distinct(columns[0]):
        problems = _truth_problems(rows, path)
    elif not columns[0]:
        problems = [Issue("truth_empty", "lists no image", str(path))]
    if problems:
        raise TruthError(f"truth {path} is not usable", problems)
    assert columns is not None
    names, labels = columns
    return TruthTable(path, names, first_rows(labels))


def _clean_truth(path: Path, names: pa.Array, labels: pa.Array) -> TruthTable | None:
    """The truth from the columns pyarrow read, if it has no problem: no empty field, distinct
    names (ascending, the usual case, or else counted), at least one image; else ``None``."""
    import pyarrow.compute as pc

    if not len(names) or not pc.all(pc.and_(filled(names), filled(labels))).as_py():
        return None
    if not (_arrow_ascending(names) or pc.count_distinct(names).as_py() == len(names)):
        return None
    return TruthTable(path, names.to_pylist(), _first_rows_arrow(labels), names)


def _arrow_ascending(names: pa.Array) -> bool:
    """Whether the strings are strictly ascending (in bytes, which is code point order in UTF-8)."""
    import pyarrow.compute as pc

    return len(names) < 2 or bool(pc.all(pc.less(names[:-1], names[1:])).as_py())


def first_rows(labels: list[str]) -> NDArray[np.int64]:
    """For each row, the first row with the same label: identities coded by their first image.

    >>> first_rows(["7", "3", "7", "0", "12"]).tolist(), first_rows(["p7", "p3", "p7"]).tolist(), first_rows(["7", "07", "7"]).tolist()
    ([0, 1, 0, 3, 4], [0, 1, 0], [0, 1, 0])
    """
    code_of: dict[str, int] = {}  # label -> the row of its first image
    return np.fromiter(map(code_of.setdefault, labels, count()), dtype=np.int64, count=len(labels))


def _first_rows_arrow(labels: pa.Array) -> NDArray[np.int64]:
    """:func:`first_rows` of a pyarrow column, the labels grouped in C++: a dictionary encoding
    numbers labels in order of first appearance, so label ``k``'s first row is where the running
    maximum of the numbers first reaches ``k``."""
    import pyarrow.compute as pc

    codes = numbers(pc.dictionary_encode(labels).indices).astype(np.int64)
    first = np.flatnonzero(np.diff(np.maximum.accumulate(codes), prepend=-1) > 0)
    rows: NDArray[np.int64] = first[codes]
    return rows


def _distinct(names: list[str]) -> bool:
    return all(map(str.__lt__, names, names[1:])) or len(set(names)) == len(names)


def _truth_problems(rows: Rows, path: Path) -> list[Issue]:
    problems = IssueLog()  # keeps the first 50 and counts the rest
    first_line: dict[str, int] = {}
    for line, fields in zip(rows.lines, rows.field_lists()):
        if len(fields) != 2 or not all(fields):
            problems.error("truth_row", f"expected 'image,identity', got {[f[:40] for f in fields[:3]]}", path, line)
        elif fields[0] in first_line:
            problems.error(
                "truth_duplicate", f"repeats image {fields[0][:80]!r} of line {first_line[fields[0]]}", path, line
            )
        else:
            first_line[fields[0]] = line
    return problems.errors


def read_submission(path: Path, truth: TruthTable, order: str, log: IssueLog) -> NDArray[np.int64] | None:
    """Cluster number of every truth image (in truth order), or ``None`` if the file is rejected."""
    try:
        rows, header = _read_rows(path, HEADER_CLUSTERS, submission_limits(truth))
    except FileProblem as exc:
        log.error("unreadable", str(exc), path, exc.line)
        return None
    if header is not None:
        log.warning("header", "the first row is a header; the rules' format has none", path, header)
    parsed = _parse_clean_rows(rows, truth)
    index, cluster = parsed if parsed is not None else _diagnose_rows(rows, truth, path, log)
    n_images = len(truth.names)
    uses = np.bincount(index[index >= 0], minlength=n_images)
    clean = parsed is not None
    if (uses > 1).any():
        _report_duplicates(rows, index, uses, truth, path, log)
        clean = False
    if len(rows.lines) != n_images:
        log.error(
            "row_count", f"has {plural(len(rows.lines), 'row')}; the test set has {plural(n_images, 'image')}", path
        )
        clean = False
    missing = np.flatnonzero(uses == 0)
    if missing.size:
        names = [truth.names[i] for i in missing[:20]]
        log.error("missing", f"has no row for {plural(missing.size, 'image')}: {summarize_names(names)}", path)
        clean = False
    in_truth_order = index.size == n_images and bool((index == np.arange(n_images)).all())
    if not (in_truth_order and truth.ascending):
        known = np.flatnonzero(index >= 0)
        _check_order(
            [truth.names[i] for i in index[known].tolist()], [rows.lines[k] for k in known.tolist()], order, path, log
        )
    if not clean:
        return None
    clusters = np.zeros(n_images, dtype=np.int64)
    clusters[index] = cluster
    return clusters if _check_numbering(clusters, path, log) and log.error_count == 0 else None


def submission_limits(truth: TruthTable) -> TextLimits:
    """What a submission for ``truth`` can need: every name twice over (quoted, padded), a
    cluster number and line end per row, blank lines, and 1 MiB to spare."""
    n = len(truth.names)
    return TextLimits(
        max_bytes=2 * truth.name_bytes + 48 * n + (1 << 20), max_lines=2 * n + 1000, needs=plural(n, "image")
    )


def _parse_clean_rows(rows: Rows, truth: TruthTable) -> tuple[NDArray[np.int64], NDArray[np.int64]] | None:
    """Truth row and cluster of every row, if every row is well formed; ``None`` otherwise."""
    if rows.arrow is not None:
        return _parse_arrow_rows(rows.arrow, truth)
    columns = rows.columns()
    if columns is None:
        return None
    names, values = columns
    digits = "".join(values)
    if not (digits.isascii() and digits.isdigit()) or "" in values or max(map(len, values), default=0) > 18:
        return None
    read = numeric_rows(values, np.int64) if values else np.zeros((0, 1), np.int64)
    assert read is not None  # digits only, at most 18 in each line: NumPy's integer reader takes every line
    cluster = read[:, 0]
    if cluster.size and cluster.min() < 1:
        return None
    if names == truth.names or names == truth.stems:  # the truth's own order: nothing to look up
        return np.arange(len(names), dtype=np.int64), cluster
    index = _truth_rows(names, truth)
    return None if index is None else (index, cluster)


def _parse_arrow_rows(
    columns: tuple[pa.Array, pa.Array], truth: TruthTable
) -> tuple[NDArray[np.int64], NDArray[np.int64]] | None:
    """:func:`_parse_clean_rows` of the columns pyarrow read: the numbers checked and read in C++,
    and the names compared with the truth's as whole buffers."""
    import pyarrow as pa
    import pyarrow.compute as pc

    names, values = columns
    if not pc.all(pc.match_substring_regex(values, "^[0-9]{1,18}$"), min_count=0).as_py():
        return None
    cluster = numbers(pc.cast(values, pa.int64()))
    if cluster.size and cluster.min() < 1:
        return None
    if names.equals(truth.column) or names.equals(truth.stem_column):  # the truth's own order
        return np.arange(len(names), dtype=np.int64), cluster
    index = _truth_rows(names.to_pylist(), truth)
    return None if index is None else (index, cluster)


def _truth_rows(names: list[str], truth: TruthTable) -> NDArray[np.int64] | None:
    """The truth row of every name, written with its extension or without; ``None`` if one is unknown."""
    # Names are written with their extension or without it: try the way the first row is written.
    lookup = truth.index_of if not names or names[0] in truth.index_of else truth.index_of_stem
    index = list(map(lookup.get, names, repeat(-1)))
    if -1 in index:
        index = [i if i >= 0 else truth.index_of.get(n, truth.index_of_stem.get(n, -1)) for i, n in zip(index, names)]
        if -1 in index:
            return None
    return np.array(index, dtype=np.int64)


def _diagnose_rows(
    rows: Rows, truth: TruthTable, path: Path, log: IssueLog
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Name every row that is malformed, names an unknown image or has a bad cluster.

    Returns truth row and cluster per row, -1 and 0 where the row is unusable.
    """
    index = np.full(len(rows.lines), -1, dtype=np.int64)
    cluster = np.zeros(len(rows.lines), dtype=np.int64)
    for k, (line, fields) in enumerate(zip(rows.lines, rows.field_lists())):
        if len(fields) != 2:
            hint = " (columns are separated by commas)" if len(fields) == 1 and re.search(r"[;\t]", fields[0]) else ""
            log.error("malformed", f"expected 'image, cluster', got {plural(len(fields), 'field')}{hint}", path, line)
            continue
        name, text = fields
        row = truth.index_of.get(name, truth.index_of_stem.get(name, -1))
        if row < 0:
            log.error("unknown_image", _unknown_image(name, truth), path, line)
        index[k] = row
        if POSITIVE_INTEGER.fullmatch(text):
            cluster[k] = int(text)
        else:
            log.error("bad_cluster", _bad_cluster(text), path, line)
    return index, cluster


def _report_duplicates(
    rows: Rows, index: NDArray[np.int64], uses: NDArray[np.int64], truth: TruthTable, path: Path, log: IssueLog
) -> None:
    first_line: dict[int, int] = {}
    for line, i in zip(rows.lines, index.tolist()):
        if i >= 0 and uses[i] > 1:
            if i in first_line:
                log.error("duplicate", f"repeats image {truth.names[i]!r} of line {first_line[i]}", path, line)
            else:
                first_line[i] = line


def _unknown_image(name: str, truth: TruthTable) -> str:
    if not name:
        return "has an empty image name"
    if name in truth.ambiguous_stems:
        return f"image {name!r} is ambiguous without its extension"
    return f"image {name!r} is not in the test set"


def _bad_cluster(text: str) -> str:
    if not text:
        return "has no cluster number"
    if INTEGRAL_FLOAT.fullmatch(text):
        return f"cluster {text!r} must be written as an integer (e.g. {int(float(text))})"
    return f"cluster {text!r} is not a positive integer (clusters are numbered from 1; NaN, inf, 0 and fractions are not accepted)"


def _check_numbering(clusters: NDArray[np.int64], path: Path, log: IssueLog) -> bool:
    """Clusters run 1..K with every number used (the rules: the last number is the count)."""
    k = int(clusters.max())
    if k > clusters.size:
        log.error(
            "cluster_numbering",
            f"cluster number {k:,} is more than the {plural(clusters.size, 'image')}; clusters run 1..K",
            path,
        )
        return False
    used = np.bincount(clusters, minlength=k + 1)[1:]
    unused = np.flatnonzero(used == 0) + 1
    if unused.size:
        log.error(
            "cluster_numbering",
            f"cluster numbers must run 1..K with every number used; with K = {k}, "
            f"{summarize_names(map(str, unused[:20].tolist()))} {'is' if unused.size == 1 else 'are'} never used"
            + (f" ({unused.size:,} in all)" if unused.size > 20 else ""),
            path,
        )
    return not unused.size


def natural_key(name: str) -> list[object]:
    """``'img10'`` after ``'img9'``: runs of ASCII digits compare as numbers.

    Splitting on a captured pattern alternates text (even places) and digit runs (odd places).
    """
    return [int(part) if i % 2 else part for i, part in enumerate(_DIGIT_RUNS.split(name))]


def _ascending(names: list[str]) -> bool:
    """Strictly ascending in code point order, or else in natural order."""
    if all(map(str.__lt__, names, names[1:])):
        return True
    keys = map(natural_key, names)  # lazily: a file out of order fails at its first pair
    previous = next(keys, [])
    for key in keys:
        if not previous < key:
            return False
        previous = key
    return True


def _check_order(names: list[str], lines: Sequence[int], order: str, path: Path, log: IssueLog) -> None:
    """Rows in ascending order of image names: plain (code point) or natural order both count."""
    if _ascending(names):
        return
    # The file is out of order in both senses; name the place where the order it kept longer breaks.
    plain = next(i for i, (a, b) in enumerate(pairwise(names)) if not a < b)
    natural = next(i for i, (a, b) in enumerate(pairwise(map(natural_key, names))) if not a < b)
    first = max(plain, natural)
    message = f"rows are not in ascending order of the image names: {names[first + 1]!r} comes after {names[first]!r}"
    if order == "ignore":
        log.warning("order", message, path, lines[first + 1])
    else:
        log.error("order", message + " (--set order=ignore accepts any order)", path, lines[first + 1])
