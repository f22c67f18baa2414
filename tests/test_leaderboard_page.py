"""The leaderboard page stands when its bootstrap cannot: results scored on different units leave it without intervals, not a 500."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select, update

from podium.service.database import reading, writing
from podium.service.tables import results
from podium.service.worker import Worker
from service_helpers import Clock, LiveServer, at, demo_archive, set_up, write_contest


def test_results_on_different_units_leave_the_board_without_intervals(tmp_path: Path) -> None:
    contest = write_contest(tmp_path / "contest", extra="")
    clock = Clock(at("2026-03-10T12:00:00Z"))
    service, tokens = set_up(
        f"sqlite:///{tmp_path / 'podium.db'}", contest, tmp_path / "data", ("alpha", "beta"), clock
    )
    archive = demo_archive(contest, tmp_path / "packed")
    worker = Worker(service.engine, service.data, clock=clock)
    with LiveServer(service) as live:
        for team in ("alpha", "beta"):
            assert (
                live.call("POST", "/api/submissions", tokens[team], body=archive, query={"filename": "s.tar.gz"}).status
                == 201
            )
        while worker.work_once():
            pass
        with reading(service.engine) as connection:
            row = connection.execute(select(results.c.id, results.c.document).order_by(results.c.id.desc())).first()
        assert row is not None
        document = dict(row.document)
        document["units"] = {
            **document["units"],
            "rows": dict(list(document["units"]["rows"].items())[1:]),
        }  # one image fewer: another test set
        with writing(service.engine) as connection:
            connection.execute(update(results).where(results.c.id == row.id).values(document=document))
        page = live.call("GET", "/leaderboard")
    assert page.status == 200 and "alpha" in page.body and "beta" in page.body and "rank 95%" not in page.body
