"""The contest file, ``contest.toml``: what a contest is, read and checked with every problem located.

::

    id = "glas-2015"                 # letters, digits, . _ - (it names the contest in URLs and results)
    title = "Gland segmentation"
    challenge = "glas"
    truth = "truth"                  # paths are relative to this file
    timezone = "Europe/London"       # IANA name; quota days are counted in it [default: UTC]
    images = "images"                # program contests: the folder the programs read

    [parameters]                     # the challenge's parameters (podium challenges lists them)
    parts = ["testA", "testB"]

    [split]                          # public units: a fraction drawn with a seed ...
    public = 0.3
    seed = 2015
    # public_list = "public.txt"     # ... or a list, one unit per line; the rest is private

    [[phase]]                        # one or more, in order, not overlapping
    name = "test"
    start = 2026-01-05T00:00:00Z     # ISO 8601 with a time zone (Z or +01:00), as a TOML date or a string
    end = 2026-02-05T23:59:59+01:00
    submissions = "files"            # files | programs

    [limits]                         # program phases: time_s [default: the challenge's rule], memory_mb, cpus, disk_mb [default: 1024]
    [quota]                          # per_day (a day in the contest's time zone), total, concurrent, count_failed [default: false],
                                     # failed_per_day [default: 5 when a phase takes programs], rejected_per_hour [default: 20]
    [ranking]                        # by [default: the challenge's rule], decimals, final = best | last | selected, max_selected
    [service]                        # podium serve: upload_mb [default: 100], self_registration [default: false],
                                     # unpack_ratio: an archive may unpack to this many times its size [default: 20]

Without ``[split]`` the whole test set is one public leaderboard. A contest of
face-clustering must set ``th1_s``, ``th2_s`` and ``ram_max_mb``; no contest
may set a measured parameter (``time_s``, ``ram_mb``).
"""

from __future__ import annotations

import difflib
import re
import tomllib
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from podium.challenges import IDS, get, runnable
from podium.challenges.base import Challenge
from podium.contest.split import SplitPlan, draw_public, read_public_list
from podium.contest.toml_lines import Path_, key_lines, line_of
from podium.core.errors import PodiumError
from podium.core.issues import IssueLog
from podium.core.parameters import Parameter
from podium.formats.files import FileProblem
from podium.formats.text import TextLimits, read_text
from podium.runner.disk import DEFAULT_DISK_MB

ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
SUBMISSION_KINDS = ("files", "programs")
FINAL_POLICIES = ("best", "last", "selected")
CONTEST_LIMITS = TextLimits(max_bytes=1 << 20, max_line=1 << 16)

TOP_KEYS = ("id", "title", "challenge", "truth", "timezone", "images", "parameters", "split", "phase", "limits", "quota", "ranking", "service")
TABLE_KEYS = {
    "split": ("public", "seed", "public_list"),
    "phase": ("name", "start", "end", "submissions"),
    "limits": ("time_s", "memory_mb", "cpus", "disk_mb"),
    "quota": ("per_day", "total", "concurrent", "count_failed", "failed_per_day", "rejected_per_hour"),
    "ranking": ("by", "decimals", "final", "max_selected"),
    "service": ("upload_mb", "self_registration", "unpack_ratio"),
}
DEFAULT_UPLOAD_MB = 100.0
DEFAULT_UNPACK_RATIO = 20.0
DEFAULT_FAILED_PER_DAY = 5  # program contests: failed runs a team may have per day, whether or not they count in per_day
DEFAULT_REJECTED_PER_HOUR = 20  # uploads refused by the checks a team may send per hour


class ContestError(PodiumError):
    """A contest file that cannot be used; ``issues`` names every problem with its line."""


@dataclass(frozen=True)
class Phase:
    name: str
    start: datetime  # aware
    end: datetime  # aware
    submissions: str  # files | programs


@dataclass(frozen=True)
class Limits:
    time_s: float | None  # None: the challenge's rule
    memory_mb: float | None
    cpus: float | None
    disk_mb: float = DEFAULT_DISK_MB  # what the program's working folder may hold


@dataclass(frozen=True)
class Quota:
    per_day: int | None
    total: int | None
    concurrent: int | None  # queued or running at once
    count_failed: bool
    failed_per_day: int | None = None  # failed runs per day (programs); None: no cap
    rejected_per_hour: int | None = None  # uploads rejected by the checks per hour; None: no cap


@dataclass(frozen=True)
class Ranking:
    by: str | None  # None: the challenge's rule
    decimals: int | None
    final: str
    max_selected: int | None


@dataclass(frozen=True)
class Service:
    upload_mb: float  # the largest upload podium serve takes
    self_registration: bool  # teams may register themselves
    unpack_ratio: float = DEFAULT_UNPACK_RATIO  # an archive may unpack to this many times its size


@dataclass(frozen=True)
class Contest:
    path: Path
    id: str
    title: str
    challenge: str
    truth: Path
    timezone: ZoneInfo
    settings: dict[str, str]  # parameter texts, as ``--set`` takes them
    images: Path | None
    units: int
    split: SplitPlan | None
    phases: tuple[Phase, ...]
    limits: Limits
    quota: Quota
    ranking: Ranking
    service: Service

    def stamp(self) -> dict[str, Any]:
        """The contest in a result's signature."""
        return {"id": self.id, "split": None if self.split is None else self.split.stamp()}

    def summary(self) -> dict[str, Any]:
        """What ``podium contest check`` shows: sizes of the splits, phases in UTC and in the contest's time zone."""
        return {
            "id": self.id,
            "title": self.title,
            "challenge": self.challenge,
            "truth": str(self.truth),
            "units": self.units,
            "split": None if self.split is None else self.split.stamp(),
            "parameters": self.settings,
            "timezone": self.timezone.key,
            "phases": [
                {
                    "name": p.name,
                    "submissions": p.submissions,
                    "start_utc": _utc(p.start),
                    "end_utc": _utc(p.end),
                    "start_local": p.start.astimezone(self.timezone).isoformat(),
                    "end_local": p.end.astimezone(self.timezone).isoformat(),
                }
                for p in self.phases
            ],
            "images": None if self.images is None else str(self.images),
            "limits": vars(self.limits),
            "quota": vars(self.quota),
            "ranking": vars(self.ranking),
            "service": vars(self.service),
        }

    def evaluation(self) -> dict[str, Any]:
        """What :func:`podium.scoring.engine.evaluate` and :func:`podium.scoring.run.run_program` take from the contest."""
        return {"split_of": None if self.split is None else self.split.split_of, "contest": self.stamp()}


def load(path: Path) -> Contest:
    """Read and check a contest file; :class:`ContestError` listing every problem with its line."""
    try:
        text = read_text(path, CONTEST_LIMITS)
    except FileProblem as exc:
        raise ContestError(f"contest file {path} {exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        where = re.search(r"\(at line (\d+), column (\d+)\)", message)
        log = IssueLog()
        log.error("toml", re.sub(r"\s*\(at line \d+, column \d+\)", "", message) + (f" (column {where.group(2)})" if where else ""),
                  path, int(where.group(1)) if where else None)  # fmt: skip
        raise ContestError(f"contest file {path} is not valid TOML", log.errors) from None
    reader = _Reader(path, key_lines(text), data)
    contest = reader.contest()
    if reader.log.error_count or contest is None:
        raise ContestError(f"contest file {path} has {reader.log.error_count} problem{'s' * (reader.log.error_count != 1)}", reader.log.errors)
    return contest


class _Reader:
    """Reads the parsed TOML, logging every problem at its line."""

    def __init__(self, path: Path, lines: dict[Path_, int], data: dict[str, Any]) -> None:
        self.path = path
        self.base = path.parent
        self.lines = lines
        self.data = data
        self.log = IssueLog()

    def error(self, where: Path_, message: str) -> None:
        self.log.error("contest", message, self.path, line_of(self.lines, where))

    def value(self, table: dict[str, Any], where: Path_, kind: type | tuple[type, ...], what: str, required: bool = False) -> Any:
        """``table[where[-1]]`` if it has type ``kind``; ``None`` (with an error when wrong or required) otherwise."""
        key = where[-1]
        assert isinstance(key, str)
        if key not in table:
            if required:
                self.error(where[:-1] or where, f"{_name(where)} is missing: {what}")
            return None
        value = table[key]
        if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
            self.error(where, f"{_name(where)} must be {what}, not true/false")
            return None
        if not isinstance(value, kind):
            self.error(where, f"{_name(where)} must be {what}, not {_toml_type(value)}")
            return None
        return value

    def unknown_keys(self, table: dict[str, Any], allowed: tuple[str, ...], where: Path_) -> None:
        for key in table:
            if key not in allowed:
                hint = difflib.get_close_matches(key, allowed, n=1)
                self.error((*where, key), f"unknown key {_name((*where, key))}" + (f"; did you mean {hint[0]}?" if hint else f" (keys: {', '.join(allowed)})"))

    def table(self, key: str) -> dict[str, Any]:
        value = self.data.get(key, {})
        if not isinstance(value, dict):
            self.error((key,), f"{key} must be a table [{key}], not {_toml_type(value)}")
            return {}
        self.unknown_keys(value, TABLE_KEYS[key], (key,))
        return value

    def path_of(self, where: Path_, text: str, folder: bool | None) -> Path | None:
        """``text`` as a path relative to the contest file, if it exists (a folder or a file when ``folder`` says)."""
        path = self.base / text
        exists = path.exists() if folder is None else path.is_dir() if folder else path.is_file()
        if not exists:
            kind = "path" if folder is None else "folder" if folder else "file"
            self.error(where, f"{_name(where)}: no {kind} {text!r} (relative to the contest file: {path})")
            return None
        return path

    def contest(self) -> Contest | None:
        data = self.data
        self.unknown_keys(data, TOP_KEYS, ())
        contest_id = self.value(data, ("id",), str, "an id of letters, digits, '.', '_' and '-'", required=True)
        if contest_id is not None and not ID_PATTERN.match(contest_id):
            self.error(("id",), f"id {contest_id[:80]!r} must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit")
        title = self.value(data, ("title",), str, "the contest's title", required=True)
        challenge_id = self.value(data, ("challenge",), str, f"one of {', '.join(IDS)}", required=True)
        challenge = None
        if challenge_id is not None:
            if challenge_id in IDS:
                challenge = get(challenge_id)
            else:
                hint = difflib.get_close_matches(challenge_id, IDS, n=1)
                self.error(("challenge",), f"unknown challenge {challenge_id[:80]!r}" + (f"; did you mean {hint[0]}?" if hint else f" (challenges: {', '.join(IDS)})"))
        truth_text = self.value(data, ("truth",), str, "the path of the ground truth, relative to this file", required=True)
        truth = None if truth_text is None else self.path_of(("truth",), truth_text, None)
        timezone = self.timezone()
        phases = self.phases()
        programs = any(p.submissions == "programs" for p in phases)
        images = self.images(programs)
        settings, params = self.parameters(challenge) if challenge is not None else ({}, {})
        limits = self.limits(programs, challenge_id)
        quota = self.quota(programs)
        ranking = self.ranking(challenge)
        service = self.service()
        units: list[str] = []
        if challenge is not None and truth is not None and params is not None:
            try:
                units = challenge.units(truth, params)
            except PodiumError as exc:
                self.error(("truth",), f"truth: {exc}")
                self.log.add_errors(exc.issues)
        split = self.split(units) if units else None
        if self.log.error_count or None in (contest_id, title, challenge_id, truth, timezone):
            return None
        return Contest(self.path, contest_id, title, challenge_id, truth, timezone, settings, images, len(units), split, phases, limits, quota, ranking, service)  # type: ignore[arg-type]

    def timezone(self) -> ZoneInfo | None:
        name = self.value(self.data, ("timezone",), str, "an IANA time zone name such as Europe/Paris")
        if name is None:
            return ZoneInfo("UTC") if "timezone" not in self.data else None
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            self.error(("timezone",), f"timezone {name[:80]!r} is not an IANA time zone name (such as UTC or Europe/Paris)")
            return None

    def images(self, programs: bool) -> Path | None:
        text = self.value(self.data, ("images",), str, "the folder of test images that programs read, relative to this file", required=programs)
        return None if text is None else self.path_of(("images",), text, folder=True)

    def parameters(self, challenge: Challenge) -> tuple[dict[str, str], dict[str, Any] | None]:
        """The settings as ``--set`` texts, and their typed values (``None`` when one is wrong)."""
        table = self.data.get("parameters", {})
        if not isinstance(table, dict):
            self.error(("parameters",), f"parameters must be a table [parameters], not {_toml_type(table)}")
            return {}, None
        by_name = {p.name: p for p in challenge.parameters}
        settings: dict[str, str] = {}
        values: dict[str, Any] | None = {p.name: p.default for p in challenge.parameters}
        for key, raw in table.items():
            where = ("parameters", key)
            parameter = by_name.get(key)
            if parameter is None:
                hint = difflib.get_close_matches(key, by_name, n=1)
                known = f"; did you mean {hint[0]}?" if hint else f" ({challenge.id} has: {', '.join(by_name) or 'none'})"
                self.error(where, f"unknown parameter {key!r}{known}")
                values = None
                continue
            if parameter.role == "measured":
                self.error(where, f"{key} is measured for each submission (podium run sets it); a contest cannot set it")
                values = None
                continue
            text = self.parameter_text(where, parameter, raw)
            if text is None:
                values = None
                continue
            try:
                value = parameter.parse(text)
            except ValueError as exc:
                self.error(where, f"parameter {key} = {_toml(raw)}: {exc} ({parameter.allowed})")
                values = None
                continue
            settings[key] = text
            if values is not None:
                values[key] = value
        for parameter in challenge.parameters:
            if parameter.contest_must_set and parameter.name not in table:
                self.error(("parameters",), f"a {challenge.id} contest must set {parameter.name} in [parameters]: {parameter.help}")
                values = None
        return settings, values

    def parameter_text(self, where: Path_, parameter: Parameter, raw: object) -> str | None:
        """A TOML value as the text ``--set`` would take; paths made relative to the contest file."""
        if isinstance(raw, list) and all(isinstance(v, str) for v in raw):
            return ",".join(raw)
        if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
            self.error(where, f"parameter {where[-1]} must be a string, a number or a list of strings, not {_toml_type(raw)}")
            return None
        text = str(raw)
        if parameter.is_path and text.lower() != "none":
            return str(self.base / text)
        return text

    def phases(self) -> tuple[Phase, ...]:
        raw = self.data.get("phase")
        if raw is None:
            self.error((), "the contest has no [[phase]]: at least one phase says when submissions open and close")
            return ()
        if not isinstance(raw, list) or not all(isinstance(p, dict) for p in raw):
            self.error(("phase",), "phase must be an array of tables, written [[phase]]")
            return ()
        phases: list[Phase] = []
        seen: dict[str, int] = {}
        for number, table in enumerate(raw, start=1):
            where: Path_ = ("phase", number)
            self.unknown_keys(table, TABLE_KEYS["phase"], where)
            name = self.value(table, (*where, "name"), str, "the phase's name", required=True)
            start = self.moment(table, (*where, "start"))
            end = self.moment(table, (*where, "end"))
            kind = self.value(table, (*where, "submissions"), str, "files or programs", required=True)
            if kind is not None and kind not in SUBMISSION_KINDS:
                self.error((*where, "submissions"), f"submissions = {kind[:40]!r}: must be files or programs")
                kind = None
            if name is not None and name in seen:
                self.error((*where, "name"), f"phase name {name!r} is also phase {seen[name]}'s")
            if name is not None:
                seen.setdefault(name, number)
            if start is not None and end is not None and end <= start:
                self.error((*where, "end"), f"phase {name or number} ends ({end.isoformat()}) before it starts ({start.isoformat()})")
                continue
            if None in (name, start, end, kind):
                continue
            if phases and start < phases[-1].end:  # type: ignore[operator]
                self.error((*where, "start"), f"phase {name} starts before phase {phases[-1].name} ends ({phases[-1].end.isoformat()}); phases follow one another")
            phases.append(Phase(name, start, end, kind))  # type: ignore[arg-type]
        return tuple(phases)

    def moment(self, table: dict[str, Any], where: Path_) -> datetime | None:
        """An ISO 8601 date and time with a time zone (a TOML offset date-time or a string)."""
        key = where[-1]
        if key not in table:
            self.error(where[:-1], f"{_name(where)} is missing: an ISO 8601 date and time with a time zone, e.g. 2026-03-01T12:00:00Z")
            return None
        value = table[key]
        if isinstance(value, str):
            try:
                value = datetime.fromisoformat(value)
            except ValueError:
                self.error(where, f"{_name(where)} = {value[:60]!r} is not an ISO 8601 date and time (e.g. 2026-03-01T12:00:00+01:00)")
                return None
        if isinstance(value, (date, time)) and not isinstance(value, datetime):
            self.error(where, f"{_name(where)} needs a date, a time and a time zone, e.g. 2026-03-01T12:00:00Z")
            return None
        if not isinstance(value, datetime):
            self.error(where, f"{_name(where)} must be a date and time, not {_toml_type(value)}")
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            self.error(where, f"{_name(where)} = {value.isoformat()} has no time zone; write it with Z or an offset such as +01:00")
            return None
        return value

    def limits(self, programs: bool, challenge_id: str | None) -> Limits:
        table = self.table("limits")
        if programs and challenge_id in IDS and get(challenge_id).program is None:
            self.error(("phase",), f"{challenge_id} has no program contract; programs can be run for {', '.join(runnable())}")
        if programs and "memory_mb" not in table:
            self.error(("limits",), "a phase takes programs: [limits] must set memory_mb (and may set time_s, cpus and disk_mb)")
        if table and not programs:
            self.error(("limits",), "[limits] applies to programs, but no phase takes programs (submissions = \"programs\")")
        numbers = {key: self.positive(table, ("limits", key), float) for key in TABLE_KEYS["limits"]}
        disk_mb = DEFAULT_DISK_MB if numbers["disk_mb"] is None else numbers["disk_mb"]
        return Limits(numbers["time_s"], numbers["memory_mb"], numbers["cpus"], disk_mb)

    def positive(self, table: dict[str, Any], where: Path_, kind: type) -> Any:
        what = "a positive integer" if kind is int else "a positive number"
        value = self.value(table, where, (int,) if kind is int else (int, float), what)
        if value is not None and not value > 0:
            self.error(where, f"{_name(where)} = {value}: must be {what}")
            return None
        return None if value is None else kind(value)

    def quota(self, programs: bool) -> Quota:
        table = self.table("quota")
        count_failed = self.value(table, ("quota", "count_failed"), bool, "true or false")
        numbers = {key: self.positive(table, ("quota", key), int) for key in ("per_day", "total", "concurrent", "failed_per_day", "rejected_per_hour")}
        failed = numbers["failed_per_day"] or (DEFAULT_FAILED_PER_DAY if programs else None)
        rejected = numbers["rejected_per_hour"] or DEFAULT_REJECTED_PER_HOUR
        return Quota(numbers["per_day"], numbers["total"], numbers["concurrent"], bool(count_failed), failed, rejected)

    def service(self) -> Service:
        table = self.table("service")
        upload_mb = self.positive(table, ("service", "upload_mb"), float)
        registration = self.value(table, ("service", "self_registration"), bool, "true or false")
        ratio = self.positive(table, ("service", "unpack_ratio"), float)
        return Service(DEFAULT_UPLOAD_MB if upload_mb is None else upload_mb, bool(registration), DEFAULT_UNPACK_RATIO if ratio is None else ratio)

    def ranking(self, challenge: Challenge | None) -> Ranking:
        table = self.table("ranking")
        by = self.value(table, ("ranking", "by"), str, "the name of a score")
        if by is not None and challenge is not None:
            try:
                challenge.score_spec(by)
            except KeyError:
                names = ", ".join(s.name for s in challenge.scores)
                self.error(("ranking", "by"), f"by = {by[:80]!r} is not a score of {challenge.id} ({names})")
        decimals = self.value(table, ("ranking", "decimals"), int, "an integer from 0 to 15")
        if decimals is not None and not 0 <= decimals <= 15:
            self.error(("ranking", "decimals"), f"decimals = {decimals}: must be an integer from 0 to 15")
        final = self.value(table, ("ranking", "final"), str, "best, last or selected") or "best"
        if final not in FINAL_POLICIES:
            self.error(("ranking", "final"), f"final = {final[:40]!r}: must be best (by public score), last or selected")
        max_selected = self.positive(table, ("ranking", "max_selected"), int)
        if final == "selected" and max_selected is None and "max_selected" not in table:
            self.error(("ranking", "final"), "final = \"selected\" needs max_selected: how many submissions a team may select")
        if final != "selected" and "max_selected" in table:
            self.error(("ranking", "max_selected"), "max_selected applies to final = \"selected\" only")
        return Ranking(by, decimals, final, max_selected)

    def split(self, units: list[str]) -> SplitPlan | None:
        if "split" not in self.data:
            return None
        table = self.table("split")
        where: Path_ = ("split",)
        if ("public" in table) == ("public_list" in table):
            self.error(where, "[split] needs either public (a fraction, with seed) or public_list (a file of unit names)")
            return None
        if "public_list" in table:
            text = self.value(table, ("split", "public_list"), str, "a file of the public units, one per line")
            path = None if text is None else self.path_of(("split", "public_list"), text, folder=False)
            if "seed" in table:
                self.error(("split", "seed"), "seed goes with public = FRACTION, not with public_list")
            if path is None:
                return None
            public = read_public_list(path, units, self.log)
            rule: dict[str, Any] = {"public_list": text}
        else:
            fraction = self.value(table, ("split", "public"), (int, float), "a fraction between 0 and 1")
            seed = self.value(table, ("split", "seed"), int, "an integer", required=True)
            if fraction is not None and not 0 < fraction < 1:
                self.error(("split", "public"), f"public = {fraction}: must be a fraction strictly between 0 and 1")
                return None
            if fraction is None or seed is None:
                return None
            public = draw_public(units, float(fraction), seed)
            rule = {"public": float(fraction), "seed": seed}
        if not public or len(public) == len(units):
            empty = "public" if not public else "private"
            self.error(where, f"the {empty} split is empty: {len(public)} of {len(units)} units are public")
            return None
        return SplitPlan.of(rule, units, public)


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _name(where: Path_) -> str:
    """A key path as the file writes it: ``phase[2].end``."""
    text = ""
    for part in where:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _toml_type(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, datetime):
        return "a date-time"
    if isinstance(value, (date, time)):
        return "a date" if isinstance(value, date) else "a time"
    return {str: "a string", int: "an integer", float: "a number"}.get(type(value), type(value).__name__)


def _toml(value: object) -> str:
    return repr(value) if isinstance(value, str) else str(value)
