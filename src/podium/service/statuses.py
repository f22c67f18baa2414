"""The words of the service's state, and its clock: light enough for the client commands to import.

A submission's status is one of ``STATUSES``; ``FINAL`` ones change no more
until a rescore. A job's state is one of ``JOB_STATES``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Final, Literal

QUEUED: Final = "queued"
RUNNING: Final = "running"
SCORED: Final = "scored"
REJECTED: Final = "rejected"
FAILED: Final = "failed"
ERROR: Final = "error"
CANCELLED: Final = "cancelled"
RunStatus = Literal["scored", "rejected", "failed"]  # how a worker's run of a submission ended
STATUSES = (QUEUED, RUNNING, SCORED, REJECTED, FAILED, ERROR, CANCELLED)
FINAL = (SCORED, REJECTED, FAILED, ERROR, CANCELLED)
NOT_SCORED_BY_THE_TEAMS_FAULT = (REJECTED, FAILED)  # what `podium submit` ends with exit code 1 for

JOB_QUEUED, JOB_RUNNING, JOB_DONE, JOB_GAVE_UP, JOB_CANCELLED = "queued", "running", "done", "gave_up", "cancelled"
JOB_STATES = (JOB_QUEUED, JOB_RUNNING, JOB_DONE, JOB_GAVE_UP, JOB_CANCELLED)

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)
