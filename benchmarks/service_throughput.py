"""podium serve under load, against the glue-script baseline: one ``podium evaluate`` process per submission.

On the demo contest's challenge (GlaS, six demo images, split half public):

- throughput: N submissions uploaded at once over HTTP to ``podium serve``
  (SQLite) with 1 and with 2 workers, timed until every one is scored;
  the baseline scores the same N one after another with a new
  ``podium evaluate --contest`` process each, as a cron script would;
- latency from upload to scored (the server's own times: created -> finished),
  median and 99th percentile, for the 2-worker run;
- API latency: 50 concurrent clients reading ``/api/leaderboard``.

CPU seconds are those of the server, its workers (or the baseline processes)
and their children, from ``getrusage(RUSAGE_CHILDREN)``. One run of each (the
throughput runs take about a minute); the baseline, which is CPU-bound, is
flagged if it waited for a core. Loopback only.

    .venv/bin/python benchmarks/service_throughput.py [--submissions 60]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

from timing import Timed, machine_header, warn_if_busy

from podium.challenges import get
from podium.service.client import packed, request

CONTEST = """id = "bench"
title = "bench"
challenge = "glas"
truth = "{truth}"
[split]
public = 0.5
seed = 1
[[phase]]
name = "open"
start = 2020-01-01T00:00:00Z
end = 2040-01-01T00:00:00Z
submissions = "files"
"""


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def podium(*args: str) -> list[str]:
    return [sys.executable, "-m", "podium", *args]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def baseline(contest: Path, submission: Path, count: int) -> tuple[float, float]:
    cpu, start = children_cpu(), time.perf_counter()
    for _ in range(count):
        subprocess.run(
            podium("evaluate", "--contest", str(contest), "--submission", str(submission), "--quiet", "--workers", "1"),
            check=True,
        )
    return time.perf_counter() - start, children_cpu() - cpu


def serve(contest: Path, archive: bytes, count: int, workers: int, folder: Path, api_clients: int) -> dict[str, float]:
    data = folder / f"data-{workers}"
    token = subprocess.run(
        podium("team", "add", "bench", "--contest", str(contest), "--data", str(data)),
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    cpu = children_cpu()
    server = subprocess.Popen(
        podium("serve", "--contest", str(contest), "--data", str(data), "--port", str(port), "--workers", str(workers)),
        stdout=subprocess.DEVNULL,
    )
    try:
        for _ in range(300):
            try:
                if request(url, "GET", "/healthz").status == 200:
                    break
            except Exception:
                time.sleep(0.1)
        start = time.perf_counter()
        with ThreadPoolExecutor(8) as pool:
            answers = list(
                pool.map(
                    lambda _: request(
                        url, "POST", "/api/submissions", token, body=archive, query={"filename": "s.tar.gz"}
                    ),
                    range(count),
                )
            )
        assert all(a.status == 201 for a in answers), [a.body for a in answers if a.status != 201][:1]
        for _ in range(6000):  # bounded: 10 minutes
            items = request(url, "GET", "/api/submissions", token).body
            if all(i["status"] == "scored" for i in items):
                break
            time.sleep(0.1)
        wall = time.perf_counter() - start
        waits = sorted(
            (datetime.fromisoformat(i["finished"]) - datetime.fromisoformat(i["created"])).total_seconds()
            for i in items
        )
        api = []
        if api_clients:

            def read(_: int) -> list[float]:
                times = []
                for _ in range(20):
                    t = time.perf_counter()
                    assert request(url, "GET", "/api/leaderboard").status == 200
                    times.append(time.perf_counter() - t)
                return times

            with ThreadPoolExecutor(api_clients) as pool:
                api = sorted(t for times in pool.map(read, range(api_clients)) for t in times)
    finally:
        server.terminate()
        server.wait(timeout=60)
    result = {
        "wall": wall,
        "cpu": children_cpu() - cpu,
        "median_wait": statistics.median(waits),
        "p99_wait": waits[int(0.99 * (len(waits) - 1))],
    }
    if api:
        result |= {
            "api_median": statistics.median(api),
            "api_p99": api[int(0.99 * (len(api) - 1))],
            "api_requests": len(api),
        }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=60)
    count = parser.parse_args().submissions
    machine_header(1)
    folder = Path(tempfile.mkdtemp(prefix="podium-bench-serve-"))
    try:
        demo = get("glas").write_demo(folder / "demo")
        contest = folder / "contest.toml"
        contest.write_text(CONTEST.format(truth=demo.truth))
        archive = packed(demo.submission, folder).read_bytes()
        base_wall, base_cpu = baseline(contest, demo.submission, count)
        warn_if_busy(Timed(base_wall, base_cpu, None), what="the baseline")
        one = serve(contest, archive, count, 1, folder, 0)
        two = serve(contest, archive, count, 2, folder, 50)
        print(f"{count} GlaS demo submissions (6 images each), {sys.version.split()[0]}")
        print(f"{'':38} {'wall s':>8} {'CPU s':>8} {'per minute':>11}")
        for name, wall, cpu in (
            ("baseline: podium evaluate per file", base_wall, base_cpu),
            ("podium serve, 1 worker", one["wall"], one["cpu"]),
            ("podium serve, 2 workers", two["wall"], two["cpu"]),
        ):
            print(f"{name:38} {wall:8.2f} {cpu:8.2f} {60 * count / wall:11.0f}")
        print(
            f"serve 2 workers / baseline: {base_wall / two['wall']:.2f}x; 2 workers / 1 worker: {one['wall'] / two['wall']:.2f}x"
        )
        print(
            f"upload to scored, 2 workers, all {count} sent at once: median {two['median_wait']:.2f} s, p99 {two['p99_wait']:.2f} s "
            f"(1 worker: median {one['median_wait']:.2f} s, p99 {one['p99_wait']:.2f} s)"
        )
        print(
            f"API, 50 concurrent clients, GET /api/leaderboard x {two['api_requests']:.0f}: median {1000 * two['api_median']:.1f} ms, p99 {1000 * two['api_p99']:.1f} ms"
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
