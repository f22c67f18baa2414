"""A quota in words: a team's use of it, as the submissions page says it, and its rules, as the contest page says them.

>>> from datetime import UTC
>>> from zoneinfo import ZoneInfo
>>> used = {"today": 2, "per_day": 3, "total": 5, "total_allowed": None, "concurrent": 0, "concurrent_allowed": None,
...         "count_failed": False, "day_start": "2026-11-24T23:00:00+00:00", "day_end": "2026-11-25T23:00:00+00:00"}
>>> sentence(used, ZoneInfo("Europe/Berlin"), datetime(2026, 11, 25, 13, 0, tzinfo=UTC))
'2 of 3 used today; the next day starts at 00:00 Berlin time (in 10 h). Rejected and failed submissions are not counted.'
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from zoneinfo import ZoneInfo


def _left(seconds: float) -> str:
    hours, minutes = divmod(max(int(seconds), 0) // 60, 60)
    return f"{hours} h" if hours and not minutes else f"{hours} h {minutes} min" if hours else f"{minutes} min"


def sentence(used: dict[str, object], zone: ZoneInfo, now: datetime) -> str:
    """``used`` (the API's ``/api/quota``) in words, the day's end in the contest's time zone."""
    said = []
    if used["per_day"] is not None:
        end = datetime.fromisoformat(str(used["day_end"]))
        place = "UTC" if zone.key in ("UTC", "Etc/UTC") else zone.key.rsplit("/", 1)[-1].replace("_", " ") + " time"
        said.append(
            f"{used['today']} of {used['per_day']} used today; the next day starts at {end.astimezone(zone):%H:%M} {place} (in {_left((end - now).total_seconds())})"
        )
    if used["total_allowed"] is not None:
        said.append(f"{used['total']} of {used['total_allowed']} used in all")
    if used["concurrent_allowed"] is not None:
        said.append(f"{used['concurrent']} of {used['concurrent_allowed']} queued or running at once")
    if not said:
        return "No quota: send as often as you like."
    counted = (
        "Failed runs are counted; rejected submissions are not."
        if used["count_failed"]
        else "Rejected and failed submissions are not counted."
    )
    return "; ".join(said) + ". " + counted


def rules(quota: Mapping[str, object]) -> str:
    """A quota's rules in words (the contest summary's ``quota``, or a phase's ``[phase.quota]``; a key set to
    ``None`` is not said).

    >>> rules({"per_day": 5, "total": None, "concurrent": 2, "count_failed": False, "rejected_per_hour": 20})
    '5 a day, 2 queued or running at once; rejected and failed submissions are not counted; at most 20 rejected uploads an hour'
    >>> rules({"total": 30, "count_failed": True, "failed_per_day": 3})
    '30 in all; failed runs are counted, rejected submissions are not; at most 3 failed runs a day'
    """
    limits = [
        f"{quota[key]} {words}"
        for key, words in (("per_day", "a day"), ("total", "in all"), ("concurrent", "queued or running at once"))
        if quota.get(key) is not None
    ]
    said = [", ".join(limits)] if limits else []
    if quota.get("count_failed") is not None:
        said.append(
            "failed runs are counted, rejected submissions are not"
            if quota["count_failed"]
            else "rejected and failed submissions are not counted"
        )
    if quota.get("failed_per_day") is not None:
        said.append(f"at most {quota['failed_per_day']} failed runs a day")
    if quota.get("rejected_per_hour") is not None:
        said.append(f"at most {quota['rejected_per_hour']} rejected uploads an hour")
    return "; ".join(said) or "none"
