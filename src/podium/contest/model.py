"""The contest file's tables declared as pydantic models: its keys, types, defaults and rules in one place.

Each key says what it takes: its ``title`` is the value it expects, as the
messages write it (``a positive integer``), and its ``description`` what it
means, as the JSON Schema (``podium contest schema``) shows it to editors. Types
are strict, as TOML types are: ``"5"`` is not 5 and ``true`` is not 1; an
unknown key is refused. Rules between keys are validators that raise
:class:`Refusal`, which names the key each problem is about.

Rules that need the file system (the truth, the images and the public list
exist, relative to the contest file) run when the validation's context gives
the contest file's folder (``ContestFile.model_validate(data, context={"base":
folder})``); without it only the file's shape is checked. Rules that need
another key see it in ``info.data`` (so ``challenge`` and ``phase`` come before
the keys that depend on them) and are skipped when that key is itself wrong,
which its own message already says.
"""

from __future__ import annotations

import difflib
import json
import re
from datetime import date, datetime, time
from pathlib import Path
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from podium.challenges import IDS, get, runnable
from podium.challenges.base import Challenge
from podium.contest.public_paths import reached_plainly
from podium.contest.toml_lines import Path_, toml_type
from podium.core.parameters import Parameter
from podium.runner.disk import DEFAULT_DISK_MB

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
DEFAULT_UPLOAD_MB = 100.0
DEFAULT_UNPACK_RATIO = 20.0
DEFAULT_FAILED_PER_DAY = (
    5  # program contests: failed runs a team may have per day, whether or not they count in per_day
)
DEFAULT_REJECTED_PER_HOUR = 20  # uploads refused by the checks a team may send per hour
CONTROL = re.compile(
    r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"
)  # control characters no text file holds (tab and line ends are text)
TERMS_MAX_BYTES = 200_000  # the terms page renders at most this much: a longer file is refused, not cut
MOMENT = "an ISO 8601 date and time with a time zone, e.g. 2026-03-01T12:00:00Z"


class Refusal(ValueError):
    """Problems a rule found: each message (``{key}`` stands for the key's name) and its key under the value checked."""

    def __init__(self, *problems: tuple[Path_, str]) -> None:
        super().__init__("; ".join(message for _, message in problems))
        self.problems = problems


def _moment(value: object) -> object:
    """A TOML offset date-time, or a string in ISO 8601; other types are left to the type check."""
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            raise Refusal(
                ((), f"{{key}} = {value[:60]!r} is not an ISO 8601 date and time (e.g. 2026-03-01T12:00:00+01:00)")
            ) from None
    if isinstance(value, (date, time)) and not isinstance(value, datetime):
        raise Refusal(((), "{key} needs a date, a time and a time zone, e.g. 2026-03-01T12:00:00Z"))
    return value


def _aware(value: datetime) -> datetime:
    if value.tzinfo is None or value.utcoffset() is None:
        raise Refusal(
            ((), f"{{key}} = {value.isoformat()} has no time zone; write it with Z or an offset such as +01:00")
        )
    return value


Moment = Annotated[datetime, BeforeValidator(_moment), AfterValidator(_aware)]


def _parameter_value(value: object) -> object:
    """A parameter's value as TOML writes it: a string, a number or a list of strings."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (str, int, float, list))
        or (isinstance(value, list) and not all(isinstance(v, str) for v in value))
    ):
        raise Refusal(((), f"{{key}} must be a string, a number or a list of strings, not {toml_type(value)}"))
    return value


ParameterValue = Annotated[
    str | int | float | list[str],
    PlainValidator(_parameter_value),
    WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "number"}, {"type": "array", "items": {"type": "string"}}]}),
]


class Table(BaseModel):
    """A table of the contest file: strict types, no unknown key, read-only once read."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


def _exists(info: ValidationInfo, text: str, folder: bool | None, key: Path_ = ()) -> None:
    """Refuse ``text`` unless it is a path (a folder or a file when ``folder`` says) relative to the contest file."""
    base = _base(info)
    if base is None:
        return
    path = base / text
    if not (path.exists() if folder is None else path.is_dir() if folder else path.is_file()):
        kind = "path" if folder is None else "folder" if folder else "file"
        raise Refusal((key, f"{{key}}: no {kind} {text!r} (relative to the contest file: {path})"))


def _base(info: ValidationInfo) -> Path | None:
    """The contest file's folder, when the check is given one (the JSON Schema's checks have none)."""
    return info.context.get("base") if isinstance(info.context, dict) else None


class Split(Table):
    """``[split]``: which units are public, a fraction drawn with a seed or a list; the rest is private."""

    public: float | None = Field(
        default=None,
        gt=0,
        lt=1,
        title="a fraction strictly between 0 and 1",
        description="The fraction of the units on the public leaderboard, drawn with seed.",
    )
    seed: int | None = Field(default=None, title="an integer", description="The seed of the public draw (with public).")
    public_list: str | None = Field(
        default=None,
        title="a file of the public units, one per line",
        description="A file, relative to the contest file, naming the public units one per line (instead of public and seed).",
    )

    @model_validator(mode="after")
    def _one_rule(self, info: ValidationInfo) -> Split:
        if (self.public is None) == (self.public_list is None):
            raise Refusal(
                ((), "[split] needs either public (a fraction, with seed) or public_list (a file of unit names)")
            )
        if self.public_list is not None:
            if self.seed is not None:
                raise Refusal((("seed",), "seed goes with public = FRACTION, not with public_list"))
            _exists(info, self.public_list, folder=False, key=("public_list",))
        if self.public is not None and self.seed is None:
            raise Refusal((("seed",), "split.seed is missing: an integer"))
        return self


class Quota(Table):
    """``[quota]``: how many submissions a team may make."""

    per_day: int | None = Field(
        default=None,
        gt=0,
        title="a positive integer",
        description="Submissions per day, a day in the contest's time zone [default: no cap].",
    )
    total: int | None = Field(
        default=None,
        gt=0,
        title="a positive integer",
        description="Submissions in the whole contest [default: no cap].",
    )
    concurrent: int | None = Field(
        default=None,
        gt=0,
        title="a positive integer",
        description="Submissions queued or running at once [default: no cap].",
    )
    count_failed: bool = Field(
        default=False, title="true or false", description="Whether failed submissions count in per_day and total."
    )
    failed_per_day: int | None = Field(
        default=None,
        gt=0,
        title="a positive integer",
        description=f"Failed runs per day (programs) [default: {DEFAULT_FAILED_PER_DAY} when a phase takes programs, else no cap].",
    )
    rejected_per_hour: int = Field(
        default=DEFAULT_REJECTED_PER_HOUR,
        gt=0,
        title="a positive integer",
        description="Uploads refused by the checks a team may send per hour.",
    )


class Phase(Table):
    """``[[phase]]``: when submissions open and close, and what they are."""

    name: str = Field(
        title="the phase's name", description="The phase's name, shown on the pages; unique in the contest."
    )
    start: Moment = Field(
        title=MOMENT,
        description="When submissions open: an ISO 8601 date and time with a time zone, as a TOML date-time or a string.",
    )
    end: Moment = Field(
        title=MOMENT, description="When submissions close, after start; the next phase starts at or after it."
    )
    submissions: Literal["files", "programs"] = Field(
        title="files or programs",
        description="files: teams upload results; programs: teams upload a program that podium runs in a sandbox.",
    )
    quota: Quota | None = Field(
        default=None,
        title="a table [phase.quota]",
        description="This phase's own quota, counted over the phase's submissions to a track, on top of the contest's (or the track's) [quota].",
    )
    tracks: list[Annotated[str, Field(pattern=ID_PATTERN)]] | None = Field(
        default=None,
        min_length=1,
        title="a list of track ids",
        description="The tracks this phase takes submissions for [default: every track].",
    )
    truth: str | dict[str, str] | None = Field(
        default=None,
        title="the path of this phase's ground truth, relative to this file (with tracks: a table of a path per track id)",
        description="The truth this phase's submissions are scored on [default: the contest's, or the track's]; a string for every track the phase opens, or a table of a path per track id.",
    )
    split: Split | None = Field(
        default=None,
        title="a table [phase.split]",
        description="This phase's public units, drawn over its truth [default: the contest's (or the track's) [split]].",
    )
    parameters: dict[str, ParameterValue] | None = Field(
        default=None,
        title="a table [phase.parameters]",
        description="The challenge's parameters this phase sets, each over the contest's (or the track's) of the same name.",
    )

    @field_validator("truth")
    @classmethod
    def _truth_exists(cls, value: str | dict[str, str] | None, info: ValidationInfo) -> str | dict[str, str] | None:
        if isinstance(value, str):
            _exists(info, value, folder=None)
        elif value is not None:
            problems: list[tuple[Path_, str]] = []
            for track, text in value.items():
                try:
                    _exists(info, text, folder=None, key=(track,))
                except Refusal as refusal:
                    problems.extend(refusal.problems)
            if problems:
                raise Refusal(*problems)
        return value

    def names_data(self) -> bool:
        """Whether the phase scores on data of its own: a truth, a split or parameters."""
        return self.truth is not None or self.split is not None or self.parameters is not None

    def truth_for(self, track: str) -> str | None:
        """The truth this phase names for ``track`` (its one truth, or the table's entry), if any."""
        return self.truth.get(track) if isinstance(self.truth, dict) else self.truth

    def opens(self, track: str) -> bool:
        """Whether the phase takes submissions for ``track``."""
        return self.tracks is None or track in self.tracks

    @model_validator(mode="after")
    def _ends_after_it_starts(self) -> Phase:
        if self.end <= self.start:
            raise Refusal(
                (
                    ("end",),
                    f"phase {self.name} ends ({self.end.isoformat()}) before it starts ({self.start.isoformat()})",
                )
            )
        return self


class Limits(Table):
    """``[limits]``: what a program may use (program phases only)."""

    time_s: float | None = Field(
        default=None,
        gt=0,
        title="a positive number",
        description="Seconds a program may run [default: the challenge's rule].",
    )
    memory_mb: float | None = Field(
        default=None,
        gt=0,
        title="a positive number",
        description="Memory a program may use, in MB (required when a phase takes programs).",
    )
    cpus: float | None = Field(
        default=None,
        gt=0,
        title="a positive number",
        description="CPUs a program may use [default: no cap beyond the machine].",
    )
    disk_mb: float = Field(
        default=DEFAULT_DISK_MB,
        gt=0,
        title="a positive number",
        description="What the program's working folder may hold, in MB.",
    )


class Ranking(Table):
    """``[ranking]``: how the board ranks teams."""

    by: str | None = Field(
        default=None, title="the name of a score", description="The score that ranks [default: the challenge's rule]."
    )
    decimals: int | None = Field(
        default=None,
        ge=0,
        le=15,
        title="an integer from 0 to 15",
        description="Decimals shown and compared on the board [default: all].",
    )
    final: Literal["best", "last", "selected"] = Field(
        default="best",
        title="best (by public score), last or selected",
        description="Which submission of a team counts in the final ranking.",
    )
    max_selected: int | None = Field(
        default=None,
        gt=0,
        title="a positive integer",
        description='How many submissions a team may select (final = "selected" only).',
    )

    @model_validator(mode="after")
    def _selection(self) -> Ranking:
        if self.final == "selected" and self.max_selected is None:
            raise Refusal((("final",), 'final = "selected" needs max_selected: how many submissions a team may select'))
        if self.final != "selected" and self.max_selected is not None:
            raise Refusal((("max_selected",), 'max_selected applies to final = "selected" only'))
        return self


class Service(Table):
    """``[service]``: what ``podium serve`` accepts."""

    upload_mb: float = Field(
        default=DEFAULT_UPLOAD_MB,
        gt=0,
        title="a positive number",
        description="The largest upload podium serve takes, in MB.",
    )
    self_registration: bool = Field(
        default=False, title="true or false", description="Whether teams may register themselves (POST /api/register)."
    )
    approval: bool = Field(
        default=False,
        title="true or false",
        description="Whether a team that registers itself waits for an organizer's approval before it may submit.",
    )
    max_team_size: int | None = Field(
        default=None,
        gt=0,
        title="a positive integer",
        description="The most members a team may have: joining a full team by its invitation code is refused [default: no limit].",
    )
    registration_end: Moment | None = Field(
        default=None,
        title=MOMENT,
        description="When teams stop being created and joined from the pages and the API [default: the end of the last phase].",
    )
    unpack_ratio: float = Field(
        default=DEFAULT_UNPACK_RATIO,
        gt=0,
        title="a positive number",
        description="An archive may unpack to this many times its size.",
    )
    terms: str | None = Field(
        default=None,
        title="the path of a Markdown file, relative to this file",
        description="The contest's terms, which sign-up asks to accept.",
    )

    @field_validator("terms")
    @classmethod
    def _terms_exist(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None:
            _exists(info, value, folder=False)
            base = _base(info)
            if base is not None:
                _terms_are_text(value, base / value)
        return value


MAX_PAGE_BYTES = 256 * 1024  # a content page's Markdown file, at most
PAGE_ID = r"^[a-z0-9][a-z0-9-]{0,31}$"


def _public_file(info: ValidationInfo, text: str, key: Path_) -> None:
    """Refuse ``text`` unless it names a regular file (no symbolic link on its way) inside the contest file's folder."""
    _exists(info, text, folder=False, key=key)
    base = _base(info)
    if base is not None and not reached_plainly(base, text):
        raise Refusal(
            (
                key,
                f"{{key}}: {text!r} must be a file in the contest file's folder, named without '..' or a symbolic link",
            )
        )


def _pages(table: dict[str, str], info: ValidationInfo) -> dict[str, str]:
    """Each page's id (lower-case letters, digits, '-') and its Markdown file: UTF-8 text of at most 256 KiB."""
    problems: list[tuple[Path_, str]] = []
    for page, text in table.items():
        if not re.fullmatch(PAGE_ID, page):
            problems.append(
                ((page,), "page id {key}: 1 to 32 lower-case letters, digits or '-', starting with a letter or digit")
            )
            continue
        if page == "terms":
            problems.append(
                ((page,), "{key}: the terms are [service] terms (sign-up asks to accept them); name the file there")
            )
            continue
        try:
            _public_file(info, text, (page,))
            base = _base(info)
            if base is not None:
                raw = (base / text).read_bytes()
                if len(raw) > MAX_PAGE_BYTES:
                    problems.append(
                        ((page,), f"{{key}}: {text!r} is {len(raw):,} bytes; a page holds at most {MAX_PAGE_BYTES:,}")
                    )
                raw.decode("utf-8")
        except Refusal as refusal:
            problems.extend(refusal.problems)
        except UnicodeDecodeError as exc:
            problems.append(((page,), f"{{key}}: {text!r} is not UTF-8 text (byte {exc.start:,})"))
    if problems:
        raise Refusal(*problems)
    return table


Pages = Annotated[dict[str, str], AfterValidator(_pages)]


class Link(Table):
    """A file kept elsewhere, for the data page: ``{title, url, bytes, sha256}``."""

    title: str = Field(title="a title", description="What the file is, shown on the data page.")
    url: str = Field(
        pattern=r"^https?://[^\s]+$", title="an http or https URL", description="Where the file is downloaded."
    )
    bytes: int | None = Field(default=None, gt=0, title="a positive integer", description="Its size in bytes.")
    sha256: str | None = Field(
        default=None,
        pattern=r"^[0-9a-f]{64}$",
        title="64 lower-case hexadecimal digits",
        description="Its SHA-256, shown for participants to check their download.",
    )


class Data(Table):
    """``[data]``: the public files the data page serves, and links to large files kept elsewhere."""

    files: list[str] = Field(
        default_factory=list,
        title="a list of paths of files, relative to this file",
        description="Public files the data page serves for download (never the truth or the test images).",
    )
    links: list[Link] = Field(
        default_factory=list,
        title="a list of tables {title, url, bytes, sha256}",
        description="Large files kept elsewhere, linked from the data page.",
    )

    @field_validator("files")
    @classmethod
    def _files(cls, files: list[str], info: ValidationInfo) -> list[str]:
        problems: list[tuple[Path_, str]] = []
        seen: set[str] = set()
        for index, text in enumerate(files):
            if text in seen:
                problems.append(((index,), f"{{key}}: {text!r} is listed twice"))
            seen.add(text)
            try:
                _public_file(info, text, (index,))
            except Refusal as refusal:
                problems.extend(refusal.problems)
        if problems:
            raise Refusal(*problems)
        return files


class Kit(Table):
    """``[kit]`` (or ``[track.kit]``): the starting kit, sample items with their truth and a baseline submission."""

    truth: str = Field(
        title="the path of the sample items' truth, relative to this file",
        description="The truth of a few public sample items, none of them in the test set.",
    )
    submission: str = Field(
        title="the path of a submission, relative to this file",
        description="A baseline submission for the sample items, scored by the kit's command.",
    )

    @field_validator("truth", "submission")
    @classmethod
    def _exist(cls, value: str, info: ValidationInfo) -> str:
        _exists(info, value, folder=None)
        return value


def _terms_are_text(name: str, path: Path) -> None:
    """Refuse a terms file the page cannot show whole: over :data:`TERMS_MAX_BYTES`, not UTF-8, or holding control bytes (binary)."""
    try:
        with path.open("rb") as file:
            data = file.read(TERMS_MAX_BYTES + 1)
    except OSError as exc:
        raise Refusal(((), f"{{key}}: {name} cannot be read: {exc.strerror}")) from None
    if len(data) > TERMS_MAX_BYTES:
        raise Refusal(((), f"{{key}}: {name} is over {TERMS_MAX_BYTES:,} bytes; the terms page shows a file whole"))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise Refusal(
            ((), f"{{key}}: {name} line {line}: not UTF-8 text (byte 0x{data[exc.start]:02x}); save it as UTF-8")
        ) from None
    control = CONTROL.search(text)
    if control is not None:
        line = text.count("\n", 0, control.start()) + 1
        raise Refusal(((), f"{{key}}: {name} line {line}: control character {control.group()!r}: not a text file"))


class Scored(Table):
    """What a board scores and how it ranks: the challenge, its truth, parameters and split, and the ranking rule.

    A contest file's top level is one, and so is each ``[[track]]`` table (a
    board of its own, sharing the contest's phases, teams and rules). Rules
    that need the challenge read it from ``info.data``: declared first.
    """

    id: str = Field(
        pattern=ID_PATTERN,
        title="an id of 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit",
        description="Its id: it names the contest (or the track) in URLs and results.",
    )
    title: str = Field(title="a title", description="Its title, shown on the pages.")
    challenge: str | None = Field(
        default=None,
        title=f"one of {', '.join(IDS)}",
        json_schema_extra={"enum": list(IDS)},
        description="The challenge scored (podium challenges lists them); required, at the top or in each [[track]] (a track sets it or takes the contest's).",
    )
    truth: str | None = Field(
        default=None,
        title="the path of the ground truth, relative to this file",
        description="The ground truth, a file or folder relative to the contest file; required, at the top or in each [[track]].",
    )
    parameters: dict[str, ParameterValue] = Field(
        default_factory=dict,
        validate_default=True,
        title="a table [parameters]",
        description="The challenge's parameters (podium challenges lists them): a string, a number or a list of strings each.",
    )
    split: Split | None = Field(
        default=None,
        title="a table [split]",
        description="The public units; without it the whole test set is one public leaderboard.",
    )
    ranking: Ranking = Field(
        default=Ranking(), validate_default=True, title="a table [ranking]", description="How the board ranks teams."
    )
    kit: Kit | None = Field(
        default=None,
        title="a table [kit]",
        description="A starting kit: sample items with their truth and a baseline submission (podium kit build).",
    )

    @field_validator("challenge")
    @classmethod
    def _known_challenge(cls, value: str | None) -> str | None:
        if value is not None and value not in IDS:
            hint = difflib.get_close_matches(value, IDS, n=1)
            raise Refusal(
                (
                    (),
                    f"unknown challenge {value[:80]!r}"
                    + (f"; did you mean {hint[0]}?" if hint else f" (challenges: {', '.join(IDS)})"),
                )
            )
        return value

    @field_validator("truth")
    @classmethod
    def _truth_exists(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None:
            _exists(info, value, folder=None)
        return value

    @field_validator("parameters")
    @classmethod
    def _parameters(
        cls, table: dict[str, str | int | float | list[str]], info: ValidationInfo
    ) -> dict[str, str | int | float | list[str]]:
        challenge, base = info.data.get("challenge"), _base(info)
        if challenge is not None and base is not None:
            problems = parameter_values(get(challenge), table, base)[2]
            if problems:
                raise Refusal(*problems)
        return table

    @field_validator("ranking")
    @classmethod
    def _ranking(cls, ranking: Ranking, info: ValidationInfo) -> Ranking:
        challenge = info.data.get("challenge")
        if ranking.by is not None and challenge is not None:
            try:
                get(challenge).score_spec(ranking.by)
            except KeyError:
                names = ", ".join(s.name for s in get(challenge).scores)
                raise Refusal((("by",), f"by = {ranking.by[:80]!r} is not a score of {challenge} ({names})")) from None
        return ranking


INHERITED = (
    "challenge",
    "truth",
    "parameters",
    "split",
    "ranking",
)  # what a track takes from the contest's top level unless it sets it


class Track(Scored):
    """``[[track]]``: one board of a contest, with its own challenge, truth, parameters, split, ranking and quota.

    A key the track does not set is the contest's (``parameters`` only when the
    track scores the contest's challenge); phases, teams, limits and the service
    are the contest's.
    """

    quota: Quota | None = Field(
        default=None,
        title="a table [track.quota]",
        description="The track's quota [default: the contest's [quota]], counted over the track's submissions.",
    )


class ContestFile(Scored):
    """A contest file (``contest.toml``): what it scores (:class:`Scored`), its time zone, phases and rules."""

    model_config = ConfigDict(
        title="podium contest file",
        json_schema_extra={
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "anyOf": [
                {"required": ["challenge", "truth"]},
                {"required": ["track"]},
                {
                    "required": ["challenge"],
                    "properties": {"phase": {"items": {"required": ["truth"]}}},
                },
            ],  # what it scores: at the top, in each track, or a truth in each phase
        },
    )

    timezone: str = Field(
        default="UTC",
        title="an IANA time zone name such as Europe/Paris",
        description="The contest's time zone (IANA name): quota days are counted in it.",
    )
    phase: list[Phase] = Field(
        min_length=1,
        title="one or more [[phase]] tables, saying when submissions open and close",
        description="The phases, in order and not overlapping: when submissions open and close.",
    )
    images: str | None = Field(
        default=None,
        validate_default=True,
        title="the folder of test images that programs read, relative to this file",
        description="Program contests: the folder of test images the programs read, relative to the contest file.",
    )
    limits: Limits = Field(
        default=Limits(),
        validate_default=True,
        title="a table [limits]",
        description="What a program may use (program phases only).",
    )
    quota: Quota = Field(
        default=Quota(),
        validate_default=True,
        title="a table [quota]",
        description="How many submissions a team may make.",
    )
    service: Service = Field(default=Service(), title="a table [service]", description="What podium serve accepts.")
    track: list[Track] = Field(
        default_factory=list,
        validate_default=True,
        title="[[track]] tables, each a board of its own",
        description="The contest's tracks, each scored and ranked on its own board [default: the contest is one track, its id the contest's].",
    )
    pages: Pages = Field(
        default_factory=dict,
        title="a table [pages] of page ids and Markdown files",
        description="Content pages, each id = the path of a Markdown file relative to this file (overview, evaluation, data, faq, or an id of your own).",
    )
    data: Data = Field(
        default=Data(), title="a table [data]", description="The public files and links the data page offers."
    )

    @model_validator(mode="before")
    @classmethod
    def _tracks_inherit(cls, data: Any) -> Any:
        """Each ``[[track]]`` given the scoring keys it does not set, as the top level writes them (checked then in the track)."""
        if not isinstance(data, dict) or not isinstance(data.get("track"), list):
            return data
        tracks = []
        for track in data["track"]:
            if isinstance(track, dict):
                same = track.get("challenge", data.get("challenge")) == data.get("challenge")
                taken = {k: data[k] for k in INHERITED if k in data and k not in track and (k != "parameters" or same)}
                track = {**taken, **track}
            tracks.append(track)
        return {**data, "track": tracks}

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise Refusal(
                ((), f"timezone {value[:80]!r} is not an IANA time zone name (such as UTC or Europe/Paris)")
            ) from None
        return value

    @field_validator("phase")
    @classmethod
    def _in_order(cls, phases: list[Phase], info: ValidationInfo) -> list[Phase]:
        problems: list[tuple[Path_, str]] = []
        seen: dict[str, int] = {}
        for index, phase in enumerate(phases):
            if phase.name in seen:
                problems.append(((index, "name"), f"phase name {phase.name!r} is also phase {seen[phase.name] + 1}'s"))
            seen.setdefault(phase.name, index)
            if index and phase.start < phases[index - 1].end:
                before = phases[index - 1]
                problems.append(
                    (
                        (index, "start"),
                        f"phase {phase.name} starts before phase {before.name} ends ({before.end.isoformat()}); phases follow one another",
                    )
                )
        challenge = info.data.get("challenge")
        if challenge is not None and _programs(phases) and get(challenge).program is None:
            problems.append(
                ((), f"{challenge} has no program contract; programs can be run for {', '.join(runnable())}")
            )
        if problems:
            raise Refusal(*problems)
        return phases

    @field_validator("images")
    @classmethod
    def _images(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None and _programs(info.data.get("phase")):
            raise Refusal(
                ((), "images is missing: the folder of test images that programs read, relative to this file")
            )
        if value is not None:
            _exists(info, value, folder=True)
        return value

    @field_validator("limits")
    @classmethod
    def _limits(cls, limits: Limits, info: ValidationInfo) -> Limits:
        programs = _programs(info.data.get("phase"))
        if programs and limits.memory_mb is None:
            raise Refusal(
                ((), "a phase takes programs: [limits] must set memory_mb (and may set time_s, cpus and disk_mb)")
            )
        if limits.model_fields_set and not programs and "phase" in info.data:
            raise Refusal(((), '[limits] applies to programs, but no phase takes programs (submissions = "programs")'))
        return limits

    @field_validator("quota")
    @classmethod
    def _quota(cls, quota: Quota, info: ValidationInfo) -> Quota:
        if quota.failed_per_day is None and _programs(info.data.get("phase")):
            return quota.model_copy(update={"failed_per_day": DEFAULT_FAILED_PER_DAY})
        return quota

    @field_validator("track")
    @classmethod
    def _tracks(cls, tracks: list[Track], info: ValidationInfo) -> list[Track]:
        """Without tracks the contest is one and must say what it scores; with them, each track does, under an id of its own."""
        problems: list[tuple[Path_, str]] = []
        scored: list[dict[str, Any]] = [t.model_dump() for t in tracks] or [
            info.data
        ]  # a contest without tracks is its one track
        phases: list[Phase] | None = info.data.get("phase")
        for index, keys in enumerate(scored):
            where: Path_ = (index,) if tracks else ()
            track_id = str(keys.get("id", ""))
            for key in ("challenge", "truth"):
                if key in keys and keys[key] is None:
                    title, hint = Scored.model_fields[key].title, ""
                    if key == "truth":
                        ids = [t.id for t in tracks] or [track_id]
                        if phases is None or any(
                            k not in ids for p in phases if isinstance(p.truth, dict) for k in p.truth
                        ):
                            continue  # the phases are wrong, and may name the truths: their own messages say what
                        opened = [p for p in phases if p.opens(track_id)]
                        without = [p.name for p in opened if not p.truth_for(track_id)]
                        if not without:
                            continue  # every phase that scores the track names its truth
                        if len(without) < len(opened):
                            hint = f" (or a truth in each [[phase]]; phase {', '.join(without)} names none)"
                    problems.append(
                        (
                            where,
                            f"{'track ' + str(keys['id']) + ': ' if tracks else ''}{key} is missing: {title}{hint}",
                        )
                    )
        if tracks and info.data.get("parameters") and info.data.get("challenge") is None:
            problems.append(
                (
                    (),
                    "[parameters] at the top needs challenge at the top; set [track.parameters] in each [[track]] instead",
                )
            )
        seen: set[str] = set()
        for index, track in enumerate(tracks):
            if track.id in seen:
                problems.append(((index, "id"), f"track id {track.id!r} is also an earlier track's"))
            seen.add(track.id)
            if (
                track.challenge is not None
                and _programs(info.data.get("phase"))
                and get(track.challenge).program is None
            ):
                problems.append(
                    (
                        (index, "challenge"),
                        f"track {track.id}: {track.challenge} has no program contract; programs can be run for {', '.join(runnable())}",
                    )
                )
        if problems:
            raise Refusal(*problems)
        return tracks

    @model_validator(mode="after")
    def _phases_open_tracks(self, info: ValidationInfo) -> ContestFile:
        """Each phase opens tracks of the contest; its truth table names them, its parameters are valid for each track's challenge."""
        ids = self.track_ids()
        problems: list[tuple[Path_, str]] = []
        for index, phase in enumerate(self.phase):
            unknown = [t for t in phase.tracks or [] if t not in ids]
            if unknown:
                problems.append(
                    (
                        ("phase", index, "tracks"),
                        f"phase {phase.name} opens {', '.join(unknown)}, not a track of this contest (tracks: {', '.join(ids)})",
                    )
                )
            opened = [t for t in ids if phase.opens(t)]
            if isinstance(phase.truth, dict):
                for track in phase.truth:
                    if track not in opened:
                        problems.append(
                            (
                                ("phase", index, "truth", track),
                                f"phase {phase.name} names a truth for {track[:64]!r}, not a track it opens ({', '.join(opened)})",
                            )
                        )
            problems.extend(self._phase_parameters(index, phase, opened, info))
        if problems:
            raise Refusal(*problems)
        return self

    def _phase_parameters(
        self, index: int, phase: Phase, opened: list[str], info: ValidationInfo
    ) -> list[tuple[Path_, str]]:
        """The problems of a phase's ``[phase.parameters]``, each set over the parameters of every track the phase opens."""
        base = _base(info)
        if not phase.parameters or base is None:
            return []
        problems: list[tuple[Path_, str]] = []
        scoring: list[Scored] = [*self.track] or [self]
        for scored in scoring:
            if scored.challenge is None or (self.track and scored.id not in opened):
                continue
            merged = {**scored.parameters, **phase.parameters}
            for key, message in parameter_values(get(scored.challenge), merged, base)[2]:
                if key and key[0] in phase.parameters:
                    named = f"track {scored.id}: {message}" if self.track else message
                    if (("phase", index, "parameters", *key), named) not in problems:
                        problems.append((("phase", index, "parameters", *key), named))
        return problems

    @model_validator(mode="after")
    def _nothing_hidden_public(self, info: ValidationInfo) -> ContestFile:
        """No public file (``[data] files``, a kit's sample) is the truth, under it, or under the test images; a kit goes with its track."""
        base = _base(info)
        problems: list[tuple[Path_, str]] = []
        if self.track and self.kit is not None:
            problems.append(
                (("kit",), "[kit] at the top is for a contest without tracks; write [track.kit] in the track it is for")
            )
        if base is not None:
            problems += self._hidden_made_public(base)
        if problems:
            raise Refusal(*problems)
        return self

    def _hidden_made_public(self, base: Path) -> list[tuple[Path_, str]]:
        """The public files that are the truth, the test images, or inside them (or hold them)."""
        hidden = [(base / s.truth).resolve() for s in (self, *self.track) if s.truth is not None]
        hidden += [] if self.images is None else [(base / self.images).resolve()]
        public: list[tuple[Path_, str]] = [(("data", "files", i), f) for i, f in enumerate(self.data.files)]
        kits = [((), self.kit), *((("track", i), t.kit) for i, t in enumerate(self.track))]
        public += [((*where, "kit", "truth"), kit.truth) for where, kit in kits if kit is not None]
        return [
            (key, f"{{key}} = {text!r} is (or holds, or is in) the truth or the test images: it cannot be public")
            for key, text in public
            if any(
                (base / text).resolve().is_relative_to(h) or h.is_relative_to((base / text).resolve()) for h in hidden
            )
        ]

    def track_ids(self) -> list[str]:
        """The ids of the contest's tracks: its own id when it has no ``[[track]]``."""
        return [t.id for t in self.track] or [self.id]


def _programs(phases: list[Phase] | None) -> bool:
    return phases is not None and any(p.submissions == "programs" for p in phases)


def parameter_values(
    challenge: Challenge[Any, Any, Any], table: dict[str, Any], base: Path
) -> tuple[dict[str, str], dict[str, Any], list[tuple[Path_, str]]]:
    """The settings as ``--set`` texts (paths made relative to the contest file), their typed values, and the problems found."""
    by_name = {p.name: p for p in challenge.parameters}
    settings: dict[str, str] = {}
    values: dict[str, Any] = {p.name: p.default for p in challenge.parameters}
    problems: list[tuple[Path_, str]] = []
    for key, raw in table.items():
        parameter = by_name.get(key)
        if parameter is None:
            hint = difflib.get_close_matches(key, by_name, n=1)
            problems.append(
                (
                    (key,),
                    f"unknown parameter {key!r}"
                    + (
                        f"; did you mean {hint[0]}?"
                        if hint
                        else f" ({challenge.id} has: {', '.join(by_name) or 'none'})"
                    ),
                )
            )
            continue
        if parameter.role == "measured":
            problems.append(
                ((key,), f"{key} is measured for each submission (podium run sets it); a contest cannot set it")
            )
            continue
        text = _parameter_text(parameter, raw, base)
        try:
            values[key] = parameter.parse(text)
        except ValueError as exc:
            problems.append(
                (
                    (key,),
                    f"parameter {key} = {raw!r}: {exc} ({parameter.allowed})"
                    if isinstance(raw, str)
                    else f"parameter {key} = {raw}: {exc} ({parameter.allowed})",
                )
            )
            continue
        settings[key] = text
    for parameter in challenge.parameters:
        if parameter.contest_must_set and parameter.name not in table:
            problems.append(
                ((), f"a {challenge.id} contest must set {parameter.name} in [parameters]: {parameter.help}")
            )
    return settings, values, problems


def _parameter_text(parameter: Parameter, raw: str | int | float | list[str], base: Path) -> str:
    """A TOML value as the text ``--set`` would take; paths made relative to the contest file."""
    if isinstance(raw, list):
        return ",".join(raw)
    text = str(raw)
    return str(base / text) if parameter.is_path and text.lower() != "none" else text


class _TomlSchema(GenerateJsonSchema):
    """JSON Schema for a TOML file: TOML has no null, so a key that may be left out is only optional."""

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        json_schema = super().default_schema(schema)
        if json_schema.get("default", ...) is None:
            del json_schema["default"]
        return json_schema


def json_schema() -> str:
    """The contest file's JSON Schema (draft 2020-12), as ``podium contest schema`` prints it and the package ships it."""
    return json.dumps(ContestFile.model_json_schema(schema_generator=_TomlSchema), indent=2, ensure_ascii=False) + "\n"
