"""A team's quota: submissions per day (a calendar day in the contest's time zone), in all, and at once.

Whether a submission uses the quota follows from its status alone: queued,
running and scored ones do; failed ones only when the contest says
``count_failed = true``; rejected, cancelled ones and those podium itself
could not score (``error``) never do. So a quota cannot be eaten by a
rejected upload, a cancelled run or podium's own failure, and a rescore
changes no count.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import Connection, func, select

from podium.contest.definition import Quota
from podium.service.statuses import FAILED, QUEUED, RUNNING, SCORED
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

    def refusal(self, quota: Quota) -> str | None:
        """Why one more submission is refused, or ``None``."""
        if quota.per_day is not None and self.today >= quota.per_day:
            return f"the daily quota of {quota.per_day} is used; the next day starts at {self.day_end.isoformat()}"
        if quota.total is not None and self.total >= quota.total:
            return f"the total quota of {quota.total} submissions is used"
        if quota.concurrent is not None and self.concurrent >= quota.concurrent:
            return f"{self.concurrent} submissions are queued or running, the most the contest allows at once; wait for one to finish"
        return None

    def to_dict(self, quota: Quota) -> dict[str, object]:
        return {
            "today": self.today, "per_day": quota.per_day, "total": self.total, "total_allowed": quota.total,
            "concurrent": self.concurrent, "concurrent_allowed": quota.concurrent, "count_failed": quota.count_failed,
            "day_start": self.day_start.isoformat(), "day_end": self.day_end.isoformat(),
        }  # fmt: skip


def usage(connection: Connection, team_id: int, quota: Quota, zone: ZoneInfo, now: datetime) -> Usage:
    start, end = local_day(now, zone)
    charged = submissions.c.status.in_(charged_statuses(quota))
    mine = submissions.c.team_id == team_id
    count = lambda *where: int(connection.execute(select(func.count()).select_from(submissions).where(mine, *where)).scalar_one())
    today = count(charged, submissions.c.created >= start, submissions.c.created < end)
    total = count(charged)
    concurrent = count(submissions.c.status.in_((QUEUED, RUNNING)))
    return Usage(today, total, concurrent, start, end)
