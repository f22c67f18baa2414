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
    tracks = ["a", "b"]              # the tracks it takes submissions for [default: all]
    truth = "validation"             # its own truth, [phase.split] and [phase.parameters]: its own board [default: the contest's]
    [phase.quota]                    # this phase's own quota, on top of [quota] (the keys of [quota])

    [[track]]                        # tracks: each a board of its own, with the keys of the top level it
    id = "a"                         # overrides (challenge, truth, parameters, split, ranking) and quota
    title = "Task A"                 # [default: none; the contest is one track, whose id is the contest's]

    [limits]                         # program phases: time_s [default: the challenge's rule], memory_mb, cpus, disk_mb [default: 1024]
    [quota]                          # per_day (a day in the contest's time zone), total, concurrent, count_failed [default: false],
                                     # failed_per_day [default: 5 when a phase takes programs], rejected_per_hour [default: 20]
    [ranking]                        # by [default: the challenge's rule], decimals, final = best | last | selected, max_selected
    [service]                        # podium serve: upload_mb [default: 100], self_registration [default: false],
                                     # approval: a self-registered team waits for an organizer [default: false],
                                     # max_team_size [default: no limit], registration_end: teams are created and
                                     # joined until then [default: the end of the last phase],
                                     # unpack_ratio: an archive may unpack to this many times its size [default: 20],
                                     # terms: a Markdown file of the terms sign-up asks to accept
    [pages]                          # content pages, id = a Markdown file: overview, evaluation, data, faq, or your own
    [data]                           # files = the public files the data page serves; links = [{title, url, bytes, sha256}]
    [kit]                            # a starting kit (or [track.kit]): truth = the sample items', submission = a baseline

The keys, their types, defaults and rules are declared in :mod:`podium.contest.model`
(published as ``contest.schema.json``: ``podium contest schema``); this module reads
the file, reports every problem with its line, and resolves what needs the truth
(its units, the split). Without ``[split]`` the whole test set is one public leaderboard. A contest of
face-clustering must set ``th1_s``, ``th2_s`` and ``ram_max_mb``; no contest
may set a measured parameter (``time_s``, ``ram_mb``).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from podium.challenges import get
from podium.contest.content import Content, KitPlan, content_of, published
from podium.contest.split import SplitPlan, draw_public, read_public_list
from podium.contest.toml_lines import Path_, dotted, key_lines, line_of
from podium.core.errors import PodiumError
from podium.core.issues import IssueLog
from podium.formats.files import FileProblem
from podium.formats.text import TextLimits, read_text

if TYPE_CHECKING:  # pydantic is imported when a contest file is read, not when podium starts
    from podium.challenges.base import Challenge
    from podium.contest.model import ContestFile as ContestFile
    from podium.contest.model import Kit as Kit
    from podium.contest.model import Limits as Limits
    from podium.contest.model import Phase as Phase
    from podium.contest.model import Quota as Quota
    from podium.contest.model import Ranking as Ranking
    from podium.contest.model import Scored as Scored
    from podium.contest.model import Service as Service
    from podium.contest.model import Split as Split
    from podium.contest.model import Track as Track

CONTEST_LIMITS = TextLimits(max_bytes=1 << 20, max_line=1 << 16)
_TABLES = ("ContestFile", "Kit", "Limits", "Phase", "Quota", "Ranking", "Scored", "Service", "Split", "Track")


def __getattr__(name: str) -> Any:
    """The tables' models, importable from here as before, imported (with pydantic) on first use."""
    if name in _TABLES:
        from podium.contest import model

        return getattr(model, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class ContestError(PodiumError):
    """A contest file that cannot be used; ``issues`` names every problem with its line."""


@dataclass(frozen=True)
class Contest:
    """A checked contest file, resolved: paths made absolute, parameters as texts, the split drawn over the truth's units."""

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
    track: str = (
        ""  # the track this scores: its id ("" for a contest without [[track]] tables, whose one track is the contest)
    )
    track_title: str = ""
    # with [[track]] tables: each track's contest; the contest itself scores as the first
    tracks: tuple[Contest, ...] = ()
    # phases that name their own data: the track's boards, each scoring the phases in its ``board``, in order
    by_phase: tuple[Contest, ...] = ()
    board: tuple[str, ...] = ()  # the phases whose submissions this scores and ranks (): every phase, one board
    own_data: bool = (
        True  # False: the file sets no truth here, every phase names its own (this scores as the last board)
    )
    content: Content = field(
        default_factory=Content
    )  # the pages, public files and links (the contest's, shared by its tracks)
    kit: KitPlan | None = None  # this track's starting kit

    def stamp(self) -> dict[str, Any]:
        """The contest in a result's signature (and its track, in a contest of several; the phases of its board, when phases name data)."""
        stamp: dict[str, Any] = {"id": self.id, "split": None if self.split is None else self.split.stamp()}
        if self.track:
            stamp["track"] = self.track
        if self.board:
            stamp["phases"] = list(self.board)
        return stamp

    def phased(self) -> bool:
        """Whether some phase names data of its own (then each set of phases on the same data has a board)."""
        return any(t.by_phase for t in self.tracks or (self,))

    @property
    def track_id(self) -> str:
        """The id of the track this scores: the contest's own id when it has no ``[[track]]`` tables."""
        return self.track or self.id

    def track_ids(self) -> list[str]:
        """Every track's id, in the file's order."""
        return [t.track for t in self.tracks] or [self.id]

    def default_track(self) -> str | None:
        """The track a submission goes to when it names none: the contest's only track, else none."""
        ids = self.track_ids()
        return ids[0] if len(ids) == 1 else None

    def on(self, track: str | None, phase: str | None = None) -> Contest:
        """The contest as track ``track`` scores the submissions of ``phase`` (``None``: the default track; every phase).

        A contest whose phases name no data of their own scores every phase
        alike. Otherwise ``phase`` picks the phase's data; without it, the
        track's phases must all score on the same data. :class:`ContestError`
        names the tracks or the phases to choose from.
        """
        found = self.of_track(track)
        names = [p.name for p in self.phases]
        if phase is not None and phase not in names:
            raise ContestError(f"contest {self.id} has no phase {phase[:80]!r} (phases: {', '.join(names)})")
        if not found.by_phase:
            return found
        if phase is None:
            if len(found.by_phase) == 1:
                return found.by_phase[0]
            opened = ", ".join(name for board in found.by_phase for name in board.board)
            raise ContestError(f"contest {self.id} scores its phases on data of their own: name a phase ({opened})")
        board = next((b for b in found.by_phase if phase in b.board), None)
        if board is None:
            opened = ", ".join(name for b in found.by_phase for name in b.board)
            raise ContestError(
                f"phase {phase} does not take submissions for track {found.track_id} (its phases: {opened})"
            )
        return board

    def of_track(self, track: str | None) -> Contest:
        """Track ``track`` (``None``: the default track) with its boards; :class:`ContestError` naming the tracks otherwise."""
        chosen = self.default_track() if track is None else track
        found = next((c for c in self.tracks or (self,) if c.track_id == chosen), None)
        if found is None:
            listed = ", ".join(self.track_ids())
            if track is None:
                raise ContestError(f"contest {self.id} has {len(self.track_ids())} tracks: name one ({listed})")
            raise ContestError(f"contest {self.id} has no track {track[:80]!r} (tracks: {listed})")
        return found

    def shown_boards(self, now: datetime) -> list[Contest]:
        """This track's boards as the pages show them at ``now``: the latest started phase's first, then the earlier ones'.

        A board none of whose phases has started is not shown; before the first
        phase starts, the first board is.
        """
        boards = self.boards()
        started = [p.name for p in self.phases if p.start <= now]
        shown: list[Contest] = []
        for name in reversed(started):
            board = next((b for b in boards if name in b.board), None)
            if board is not None and all(board is not b for b in shown):
                shown.append(board)
        return shown if self.by_phase and shown else [boards[0]]

    def boards(self) -> tuple[Contest, ...]:
        """The boards of this track (of :meth:`on`), in the order of their phases: one, unless phases name data of their own."""
        return self.by_phase or (self,)

    def closes(self) -> datetime:
        """When the board's last phase ends (every phase's last, for the one board of a contest whose phases name no data)."""
        return max(p.end for p in self.phases if not self.board or p.name in self.board)

    def board_id(self) -> str:
        """The board's id: its first phase's name, or ``""`` for the one board of a contest whose phases name no data."""
        return self.board[0] if self.board else ""

    def data_key(self) -> tuple[Any, ...]:
        """What it scores on: two configurations with the same key score any submission alike (and share a board)."""
        split = None if self.split is None else self.split.stamp()
        return (self.challenge, str(self.truth), tuple(sorted(self.settings.items())), repr(split))

    def summary(self) -> dict[str, Any]:
        """What ``podium contest check`` shows: sizes of the splits, phases in UTC and in the contest's time zone, the phases' boards."""
        boards = [b.board_summary() for t in self.tracks or (self,) for b in t.by_phase]
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
                    **({} if p.tracks is None else {"tracks": p.tracks}),
                    **({} if p.quota is None else {"quota": p.quota.model_dump()}),
                }
                for p in self.phases
            ],
            "images": None if self.images is None else str(self.images),
            "limits": self.limits.model_dump(),
            "quota": self.quota.model_dump(),
            "ranking": self.ranking.model_dump(),
            "service": self.service.model_dump(),
            **({"tracks": [t.track_summary() for t in self.tracks]} if self.tracks else {}),
            **({"boards": boards} if boards else {}),
            **({} if self.own_data else {"own_data": False}),
            **published(self.content, {t.track_id: t.kit for t in self.tracks or (self,) if t.kit is not None}),
        }

    def board_summary(self) -> dict[str, Any]:
        """A phase's board in the contest's summary: the phases it ranks and the data it scores on."""
        return {
            **({"track": self.track} if self.track else {}),
            "phases": list(self.board),
            "challenge": self.challenge,
            "truth": str(self.truth),
            "units": self.units,
            "split": None if self.split is None else self.split.stamp(),
            "parameters": self.settings,
        }

    def track_summary(self) -> dict[str, Any]:
        """A track in the contest's summary: what it scores and how it ranks."""
        return {
            "id": self.track,
            "title": self.track_title,
            "challenge": self.challenge,
            "truth": str(self.truth),
            "units": self.units,
            "split": None if self.split is None else self.split.stamp(),
            "parameters": self.settings,
            "quota": self.quota.model_dump(),
            "ranking": self.ranking.model_dump(),
        }

    def evaluation(self) -> dict[str, Any]:
        """What :func:`podium.scoring.engine.evaluate` and :func:`podium.scoring.run.run_program` take from the contest."""
        return {"split_of": None if self.split is None else self.split.split_of, "contest": self.stamp()}


def load(path: Path) -> Contest:
    """Read and check a contest file; :class:`ContestError` listing every problem with its line."""
    from pydantic import ValidationError

    from podium.contest.messages import messages
    from podium.contest.model import ContestFile

    try:
        text = read_text(path, CONTEST_LIMITS)
    except FileProblem as exc:
        raise ContestError(f"contest file {path} {exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        where = re.search(r"\(at line (\d+), column (\d+)\)", message)
        at_end = "(at end of document)" in message  # the file cut short: its last line
        log = IssueLog()
        log.error(
            "toml",
            re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", message)
            + (f" (column {where.group(2)})" if where else " (at the end of the file)" if at_end else ""),
            path,
            int(where.group(1)) if where else max(len(text.splitlines()), 1) if at_end else None,
        )
        raise ContestError(f"contest file {path} is not valid TOML", log.errors) from None
    lines = key_lines(text)
    log = IssueLog()
    try:
        declared = ContestFile.model_validate(data, context={"base": path.parent})
    except ValidationError as exc:
        for line, message in messages(exc, lines):
            log.error("contest", message, path, line)
        declared = None
    contest = None if declared is None else _resolve(path, declared, lines, log)
    if log.error_count or contest is None:
        raise ContestError(
            f"contest file {path} has {log.error_count} problem{'s' * (log.error_count != 1)}", log.errors
        )
    return contest


def _resolve(path: Path, declared: ContestFile, lines: dict[Path_, int], log: IssueLog) -> Contest | None:
    """The contest a valid file declares, with the truth's units and the split drawn over them (``None`` if they fail); each track's too."""
    if not declared.track:
        return _track(path, declared, declared, (), declared.quota, lines, log)
    tracks = []
    for index, track in enumerate(declared.track, start=1):
        quota = declared.quota if track.quota is None else _with_failed_cap(track.quota, declared.quota)
        scored = _track(path, declared, track, ("track", index), quota, lines, log)
        if scored is not None:
            tracks.append(scored)
    return None if log.error_count else replace(tracks[0], tracks=tuple(tracks))


def _track(
    path: Path,
    declared: ContestFile,
    scored: Scored,
    where: Path_,
    quota: Quota,
    lines: dict[Path_, int],
    log: IssueLog,
) -> Contest | None:
    """A track (or the contest without tracks) resolved, with a board per set of phases scoring on the same data.

    Phases that name no data score on the track's; a phase's truth, split and
    parameters replace the track's (parameters key by key). Phases whose data
    come out the same share a board (:meth:`Contest.data_key`).
    """
    track_id = scored.id if where else ""
    opened = [(i, p) for i, p in enumerate(declared.phase, start=1) if p.opens(scored.id)]
    own = None
    if scored.truth is not None:
        own = _scored(path, declared, scored, (*where, "truth"), (*where, "split"), quota, lines, log, track_id)
        if own is None:
            return None
    if not any(p.names_data() for _, p in opened):
        return own
    boards: list[Contest] = []
    for index, phase in opened:
        at: Path_ = ("phase", index)
        config = own
        if phase.names_data():
            truth = phase.truth_for(scored.id)
            truth_at: Path_ = (*at, "truth", scored.id) if isinstance(phase.truth, dict) else (*at, "truth")
            merged = scored.model_copy(
                update={
                    "truth": scored.truth if truth is None else truth,
                    "split": scored.split if phase.split is None else phase.split,
                    "parameters": {**scored.parameters, **(phase.parameters or {})},
                }
            )
            split_at = (*where, "split") if phase.split is None else (*at, "split")
            config = _scored(
                path,
                declared,
                merged,
                (*where, "truth") if truth is None else truth_at,
                split_at,
                quota,
                lines,
                log,
                track_id,
            )
        if config is None:
            continue
        same = next((n for n, b in enumerate(boards) if b.data_key() == config.data_key()), None)
        if same is None:
            boards.append(replace(config, board=(phase.name,)))
        else:
            boards[same] = replace(boards[same], board=(*boards[same].board, phase.name))
    if log.error_count:
        return None
    return replace(own or replace(boards[-1], own_data=False), by_phase=tuple(boards), board=())


def _with_failed_cap(quota: Quota, contest: Quota) -> Quota:
    """A track's own quota keeps the contest's cap on failed runs unless it sets one (programs: 5 a day by default)."""
    return (
        quota
        if quota.failed_per_day is not None
        else quota.model_copy(update={"failed_per_day": contest.failed_per_day})
    )


def _scored(
    path: Path,
    declared: ContestFile,
    scored: Scored,
    truth_at: Path_,
    split_at: Path_,
    quota: Quota,
    lines: dict[Path_, int],
    log: IssueLog,
    track: str = "",
) -> Contest | None:
    """The contest as ``scored`` (the file's top level, a track, or a phase's data) scores it: its truth's units read, its split drawn.

    ``truth_at`` and ``split_at`` are where the file writes the truth and the split, for the messages.
    """
    from podium.contest.model import parameter_values

    base = path.parent
    assert scored.challenge is not None and scored.truth is not None  # the model's rule: each track says what it scores
    challenge = get(scored.challenge)
    settings, values, _ = parameter_values(challenge, scored.parameters, base)
    truth = base / scored.truth
    try:
        units = challenge.units(truth, values)
    except PodiumError as exc:
        log.error("contest", f"{dotted(truth_at)}: {exc}", path, line_of(lines, truth_at))
        log.add_errors(exc.issues)
        return None
    split = None if scored.split is None else _split(scored.split, units, base, log, path, line_of(lines, split_at))
    if split is None and scored.split is not None:
        return None
    kit_at = truth_at[:2] if truth_at[:1] == ("track",) else ()  # a [track.kit], else the contest's [kit]
    kit = None if scored.kit is None else _kit(scored.kit, challenge, values, units, base, log, path, lines, kit_at)
    if kit is None and scored.kit is not None:
        return None
    images = None if declared.images is None else base / declared.images
    return Contest(
        path,
        declared.id,
        declared.title,
        scored.challenge,
        truth,
        ZoneInfo(declared.timezone),
        settings,
        images,
        len(units),
        split,
        tuple(declared.phase),
        declared.limits,
        quota,
        scored.ranking,
        declared.service,
        track=track,
        track_title=scored.title if track else "",
        content=content_of(base, declared),
        kit=kit,
    )


def _kit(
    declared: Kit,
    challenge: Challenge[Any, Any, Any],
    values: dict[str, Any],
    test_units: list[str],
    base: Path,
    log: IssueLog,
    path: Path,
    lines: dict[Path_, int],
    where: Path_,
) -> KitPlan | None:
    """The kit's sample read as truth, none of its items in the test set (``None``, the problem logged, otherwise)."""
    key = (*where, "kit", "truth")
    try:
        units = challenge.units(base / declared.truth, values)
    except PodiumError as exc:
        log.error("contest", f"{dotted(key)}: {exc}", path, line_of(lines, key))
        log.add_errors(exc.issues)
        return None
    shared = sorted(set(units) & set(test_units))
    if shared:
        listed = ", ".join(shared[:5]) + (", ..." if len(shared) > 5 else "")
        log.error(
            "contest",
            f"{dotted(key)}: {len(shared)} of its {len(units)} sample items are in the test set ({listed}); a kit's items are public",
            path,
            line_of(lines, key),
        )
        return None
    return KitPlan(base / declared.truth, base / declared.submission, tuple(units))


def _split(
    declared: Split, units: list[str], base: Path, log: IssueLog, path: Path, line: int | None
) -> SplitPlan | None:
    """The public and private units: the list read (every problem logged), or the fraction drawn with the seed."""
    if declared.public_list is not None:
        public = read_public_list(base / declared.public_list, units, log)
        rule: dict[str, Any] = {"public_list": declared.public_list}
    else:
        assert (
            declared.public is not None and declared.seed is not None
        )  # the model's rule: public with seed, or public_list
        public = draw_public(units, declared.public, declared.seed)
        rule = {"public": declared.public, "seed": declared.seed}
    if not public or len(public) == len(units):
        empty = "public" if not public else "private"
        log.error("contest", f"the {empty} split is empty: {len(public)} of {len(units)} units are public", path, line)
        return None
    return SplitPlan.of(rule, units, public)


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
