"""A team's quota on a track: submissions per day (a calendar day in the contest's time zone), in all, and at once.

Each track counts its own submissions. A phase with its own ``[phase.quota]``
adds that quota, counted over the phase's submissions to the track.

Whether a submission uses the quota follows from its status alone: queued,
running and scored ones do; failed ones only when the contest says
``count_failed = true``; rejected, cancelled ones and those podium itself
could not score (``error``) never do. So a quota cannot be eaten by a
rejected upload, a cancelled run or podium's own failure, and a rescore
changes no count. Two caps guard the workers and the disk instead:
``failed_per_day`` failed runs a day (program contests: 5 unless set), and
``rejected_per_hour`` uploads rejected by the checks in the last hour (20
unless set), beyond which a team's uploads are refused until one ages out.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from zoneinfo import ZoneInfo

from sqlalchemy import Connection, Select, and_, bindparam, func, select

from podium.contest.definition import Quota
from podium.service.statuses import FAILED, QUEUED, REJECTED, RUNNING, SCORED
from podium.service.tables import submissions


def charged_statuses(quota: Quota) -> tuple[str, ...]:
    return (QUEUED, RUNNING, SCORED, FAILED) if quota.count_failed else (QUEUED, RUNNING, SCORED)


def local_day(moment: datetime, zone: ZoneInfo) -> tuple[datetime, datetime]:
    """The UTC start and end of the calendar day in ``zone`` that holds ``moment`` (23, 24 or 25 hours long)."""
    local = moment.astimezone(zone)
    start = datetime(local.year, local.month, local.day, tzinfo=zone)
    following = start.date() + timedelta(days=1)
    end = datetime(following.year, following.month, following.day, tzinfo=zone)
    return start.astimezone(UTC), end.astimezone(UTC)


@dataclass(frozen=True)
class Usage:
    today: int
    total: int
    concurrent: int
    day_start: datetime  # UTC
    day_end: datetime
    failed_today: int = 0
    rejected_last_hour: int = 0

    def refusal(self, quota: Quota, scope: str = "") -> str | None:
        """Why one more submission is refused, or ``None``; ``scope`` names whose quota it is (``" of phase final"``)."""
        if quota.per_day is not None and self.today >= quota.per_day:
            return (
                f"the daily quota{scope} of {quota.per_day} is used; the next day starts at {self.day_end.isoformat()}"
            )
        if quota.total is not None and self.total >= quota.total:
            return f"the total quota{scope} of {quota.total} submissions is used"
        if quota.concurrent is not None and self.concurrent >= quota.concurrent:
            return f"{self.concurrent} submissions are queued or running, the most the contest allows at once; wait for one to finish"
        if quota.failed_per_day is not None and self.failed_today >= quota.failed_per_day:
            return f"{self.failed_today} runs failed today, the most the contest allows a day; the next day starts at {self.day_end.isoformat()}"
        if quota.rejected_per_hour is not None and self.rejected_last_hour >= quota.rejected_per_hour:
            return f"{self.rejected_last_hour} uploads were rejected in the last hour, the most the contest allows; check your files before sending more"
        return None

    def to_dict(self, quota: Quota) -> dict[str, object]:
        return {
            "today": self.today,
            "per_day": quota.per_day,
            "total": self.total,
            "total_allowed": quota.total,
            "concurrent": self.concurrent,
            "concurrent_allowed": quota.concurrent,
            "count_failed": quota.count_failed,
            "failed_today": self.failed_today,
            "failed_per_day": quota.failed_per_day,
            "rejected_last_hour": self.rejected_last_hour,
            "rejected_per_hour": quota.rejected_per_hour,
            "day_start": self.day_start.isoformat(),
            "day_end": self.day_end.isoformat(),
        }


def usage(
    connection: Connection,
    team_id: int,
    quota: Quota,
    zone: ZoneInfo,
    now: datetime,
    track: str,
    phase: str | None = None,
) -> Usage:
    """What the team used of ``quota`` on ``track``: in every phase, or in ``phase`` alone (a phase's own quota); one statement (every upload reads it)."""
    start, end = local_day(now, zone)
    found = connection.execute(
        _counts(charged_statuses(quota), phase is not None),
        {
            "team": team_id,
            "track": track,
            "phase": phase,
            "start": start,
            "end": end,
            "hour_ago": now - timedelta(hours=1),
        },
    )
    used, total, concurrent, failed, rejected = (int(n) for n in found.one())
    return Usage(used, total, concurrent, start, end, failed, rejected)


@cache
def _counts(charging: tuple[str, ...], of_phase: bool) -> Select[int, int, int, int, int]:
    """The statement :func:`usage` runs, built once per kind: its values are bound at each run (building it took as long as running it)."""
    today = and_(submissions.c.created >= bindparam("start"), submissions.c.created < bindparam("end"))
    charged = submissions.c.status.in_(charging)
    mine = [submissions.c.team_id == bindparam("team"), submissions.c.track == bindparam("track")]
    counts = (
        func.count().filter(charged, today),
        func.count().filter(charged),
        func.count().filter(submissions.c.status.in_((QUEUED, RUNNING))),
        func.count().filter(submissions.c.status == FAILED, today),
        func.count().filter(submissions.c.status == REJECTED, submissions.c.created > bindparam("hour_ago")),
    )
    return select(*counts).where(*mine, *([submissions.c.phase == bindparam("phase")] if of_phase else []))
