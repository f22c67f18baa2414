"""uvicorn on uvloop and httptools against asyncio and h11 (issue 40, goal 6): the web process's CPU per GET and the p99.

Two ``podium serve`` of this checkout on the GlaS demo contest (20 teams, none
scored: the board's cost is the server's, not the board's), one with uvloop and
httptools, one with both hidden (:func:`board_speed.hidden_fast_loop`), run side
by side; in each of ``--rounds`` rounds (5) 50 keep-alive readers GET
``/api/leaderboard`` then ``/leaderboard`` ``--reads`` times each (20) from one
server, then from the other, so the machine's load weighs on both alike. The
figures are medians over the rounds of the web process's CPU per GET
(``/proc/PID/stat``), the median and the 99th percentile.

    .venv/bin/python benchmarks/event_loop.py [--rounds 5] [--reads 20]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from board_speed import Server, _web_cpu, hidden_fast_loop, readers
from service_throughput import CONTEST
from timing import machine_header


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--reads", type=int, default=20)
    options = parser.parse_args()
    machine_header(1, f"median of {options.rounds} interleaved rounds")
    from podium.challenges import get

    with tempfile.TemporaryDirectory(prefix="podium-loops-") as name:
        folder = Path(name)
        demo = get("glas").write_demo(folder / "demo")
        contest = folder / "contest.toml"
        contest.write_text(CONTEST.format(truth=demo.truth))
        plain = str(hidden_fast_loop(folder))
        servers = {}
        for label, source in (("uvloop + httptools", None), ("asyncio + h11", plain)):
            (folder / label).mkdir()
            servers[label] = Server(folder / label, contest, None, source, 20, ())
        figures: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
        try:
            for _ in range(options.rounds):
                for label, server in servers.items():
                    for path in ("/api/leaderboard", "/leaderboard"):
                        server.get(path)  # the board (and its page) computed before the readers
                        cpu = _web_cpu(server.process.pid)
                        times, closed = readers(server, path, options.reads)
                        assert closed == 0, f"{closed} connections closed by {label}"
                        spent = (_web_cpu(server.process.pid) - cpu) / len(times)
                        p99 = times[int(0.99 * (len(times) - 1))]
                        figures.setdefault((label, path), []).append((spent, statistics.median(times), p99))
        finally:
            for server in servers.values():
                server.stop()
    print(f"{'':20} {'path':18} {'CPU ms/GET':>10} {'p50 ms':>7} {'p99 ms':>7}")
    for (label, path), rows in figures.items():
        cpu, p50, p99 = (1000 * statistics.median(column) for column in zip(*rows))
        print(f"{label:20} {path:18} {cpu:10.2f} {p50:7.1f} {p99:7.1f}")


if __name__ == "__main__":
    main()
