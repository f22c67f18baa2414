"""The JSON the API answers, declared as pydantic models: ``/openapi.json`` publishes them, FastAPI checks each answer against them.

Field names and shapes are those the clients read (``podium submit``,
``status``, ``leaderboard``): a field absent from an answer is absent here
too (the routes answer with ``response_model_exclude_unset``), and a number
keeps its type (``int | float``: 3 stays 3, 0.5 stays 0.5). What a challenge
or a contest file defines (scores by criterion, a result document, the
contest's settings) is a mapping by name.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Number = int | float


class Criterion(BaseModel):
    name: str
    higher_is_better: bool


class BoardRow(BaseModel):
    rank: int | None  # None: the team has no scored submission, so no rank (listed after the ranked teams)
    team: str
    status: str
    rank_sum: int | None
    ranks: dict[str, int]
    scores: dict[str, Number | None]
    measured: dict[str, Any] = {}  # programs: time, peak RAM and their points, by column title
    entries: int  # the team's scored submissions to the track
    last: str | None  # when the team sent the last of them (ISO 8601, UTC)
    public_rank: int | None = None  # after the reveal: the rank the public board gave the team (the shake-up)
    method: dict[str, Any] | None = None  # after the reveal: the ranked submission's method, if its team shows it


class Board(BaseModel):
    """The leaderboard: public scores until the reveal, then each team's final submission on the private split."""

    contest: str
    track: str | None = None  # a contest of [[track]] tables: the board's track, and its title
    track_title: str | None = None
    phases: list[str] | None = None  # phases naming data of their own: the phases the board ranks (absent: every phase)
    title: str
    challenge: str
    revealed: bool
    split: str
    by: str | None
    decimals: int | None
    final: str
    rank_sum: bool
    criteria: list[Criterion]
    teams: list[BoardRow]
    measured: list[str] = []  # programs: the measured columns' titles


class MethodFields(BaseModel):
    """A submission's method as its team describes it: shown to other teams on the board after the reveal if ``shown``."""

    method: str | None = Field(None, max_length=100, description="The method's name")
    description: str | None = Field(None, max_length=4000, description="Plain text, shown escaped with its line breaks")
    paper_url: str | None = Field(None, max_length=500, description="An http(s) link to the paper")
    code_url: str | None = Field(None, max_length=500, description="An http(s) link to the code")
    shown: bool = Field(False, description="Show it on the board after the reveal")


class PhaseTimes(BaseModel):
    name: str
    submissions: str
    start_utc: str
    end_utc: str
    start_local: str
    end_local: str
    tracks: list[str] | None = None  # the tracks it opens (absent: every track)
    quota: dict[str, Any] | None = None  # its own quota (absent: none beyond the contest's or the track's)


class ScoredView(BaseModel):
    """What a contest, or one of its tracks, scores (no server folder)."""

    id: str
    title: str
    challenge: str
    units: int
    split: dict[str, Any] | None
    parameters: dict[str, Any]


class TrackView(ScoredView):
    """A track of the contest: what it scores and how it ranks."""

    quota: dict[str, Any]
    ranking: dict[str, Any]


class BoardView(BaseModel):
    """A board of phases that name their own data: the phases it ranks and what it scores on (no server folder)."""

    track: str | None = None  # a contest of [[track]] tables: the board's track
    phases: list[str]
    challenge: str
    units: int
    split: dict[str, Any] | None
    parameters: dict[str, Any]


class ContestView(ScoredView):
    """The contest as anyone may see it (no server folder)."""

    timezone: str
    phases: list[PhaseTimes]
    limits: dict[str, Any]
    quota: dict[str, Any]
    ranking: dict[str, Any]
    service: dict[str, Any]
    revealed: bool
    open_phase: str | None
    closed: str = ""  # why no phase is open (absent while one is)
    tracks: list[
        TrackView
    ] = []  # a contest of [[track]] tables: each track (absent without; the top level's keys are the first track's)
    boards: list[BoardView] = []  # phases naming data of their own: each board (absent when no phase names data)


class SubmissionView(MethodFields):
    """A submission as its team sees it (organizers: any); ``result`` is the public view until the reveal."""

    id: int
    team: str
    phase: str
    track: str
    kind: str
    filename: str
    size: int
    sha256: str
    entry: str | None
    created: str | None
    status: str
    reason: str | None
    problems: list[dict[str, Any]]
    started: str | None
    finished: str | None
    selected: bool
    round: int | None
    stderr_tail: str | None
    result: dict[str, Any] | None


class Taken(BaseModel):
    """An upload just recorded: 201 queued, or 422 rejected by its checks (every problem, with file and line)."""

    id: int
    phase: str
    track: str
    kind: str
    status: str
    reason: str | None
    problems: list[dict[str, Any]]


class Cancelled(BaseModel):
    id: int
    status: str


class Selected(BaseModel):
    id: int
    selected: bool


class QuotaUsage(BaseModel):
    """A team's quota: used today (in the contest's time zone), in all, at once; ``None``: no cap."""

    today: int
    per_day: int | None
    total: int
    total_allowed: int | None
    concurrent: int
    concurrent_allowed: int | None
    count_failed: bool
    failed_today: int
    failed_per_day: int | None
    rejected_last_hour: int
    rejected_per_hour: int | None
    day_start: str
    day_end: str


class NewToken(BaseModel):
    token: str


class NewTeam(BaseModel):
    team: str
    token: str


class TokenRow(BaseModel):
    """A token that has not expired; never the token itself."""

    id: int
    team: str | None
    organizer: bool
    label: str
    session: bool
    created: str | None
    expires: str | None


class Revoked(BaseModel):
    id: int
    revoked: bool


class Disk(BaseModel):
    free_bytes: int
    low: bool


class Workers(BaseModel):
    alive: int
    newest_heartbeat_age_s: float | None


class Health(BaseModel):
    """``ok`` is false when the disk is low; without a database (503) only ``ok``, ``version`` and ``database`` are sent."""

    ok: bool
    version: str
    database: str
    queued: int = 0
    running: int = 0
    disk: Disk | None = None
    workers: Workers | None = None


class PageView(BaseModel):
    """A content page: its id, its title and its address on the site."""

    id: str
    title: str
    url: str


class DataFile(BaseModel):
    """A public file the data page serves: its name in the contest file, size, SHA-256 and download address."""

    name: str
    bytes: int
    sha256: str
    url: str


class DataLink(BaseModel):
    """A file kept elsewhere: its title, address, and the size and SHA-256 the organizers give."""

    title: str
    url: str
    bytes: int | None = None
    sha256: str | None = None


class KitView(DataFile):
    """A track's starting kit: the zip, and the command that scores its baseline in the kit's folder."""

    track: str
    title: str
    command: str


class DataView(BaseModel):
    """The data page: the contest's public files, links to files kept elsewhere, and each track's starting kit."""

    files: list[DataFile]
    links: list[DataLink]
    kits: list[KitView]


class PhaseSpan(BaseModel):
    name: str
    start: str = Field(description="ISO 8601, UTC")
    end: str = Field(description="ISO 8601, UTC")


class ContestListing(BaseModel):
    """One contest the server serves (``GET /api/contests``): its pages are ``/c/ID/``, its API ``/api/contests/ID/``."""

    id: str
    title: str
    status: Literal["open", "upcoming", "finished"]
    until: str | None = Field(description="When the status changes: the open phase's end, or the next phase's start")
    seconds_left: int | None = Field(description="Seconds until then")
    tracks: list[str] = Field(description="The contest's tracks (none: one board)")
    registration_open: bool = Field(
        description="Whether a signed-in user may create or join a team in it now (POST /api/contests/ID/team, .../team/join)"
    )
    phases: list[PhaseSpan]
