"""The full hostile-input run: 1,000 cases per challenge, inputs up to 300 MB.

The same cases as the CI fuzz test (``podium.testing.hostile``), more of them and larger:
a case that writes a long line, millions of rows or megabytes of newlines draws its size up
to ``--big-mb``. Each case runs in a forked child with a time limit of ``--time-limit``
seconds (killed there); the child's peak resident memory (``ru_maxrss``, shared pages
included) and every file it opens are watched. This is a robustness run, not a speed
comparison: its targets are 0 internal errors, 0 runs over 10 s, a peak under 1 GB for any
input under 300 MB, and 0 reads outside the submission. Then values: ``--rewrites`` valid rewrites
of the demo submission (``podium.synthetic.rewrites``: numbers spelled another way, padding, line
ends, archives...) are scored in this process, and any whose scores differ from the demo's by a
bit counts as changed (target 0). Each challenge's line ends with the run's wall and CPU seconds
(its forked children included); the run is done once.

    .venv/bin/python benchmarks/fuzz.py [--cases 1000] [--rewrites 100] [--big-mb 300] [--seed 0] [--challenge ID ...]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from pathlib import Path

from timing import cpu_seconds, machine_header

import podium
from podium.challenges import IDS, get
from podium.synthetic.rewrites import rewrite
from podium.testing.hostile import make_case, run_case


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000, help="cases per challenge")
    parser.add_argument(
        "--rewrites", type=int, default=None, help="value-preserving rewrites per challenge (default: cases / 10)"
    )
    parser.add_argument("--big-mb", type=int, default=300, help="largest size of a large input, in MiB")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds before a case is killed")
    parser.add_argument("--challenge", action="append", choices=IDS, help="only these challenges")
    args = parser.parse_args()
    machine_header(1)
    print(
        f"{'challenge':<16} {'cases':>6} {'internal':>8} {'bad exit':>8} {'over 10 s':>9} {'outside':>7} "
        f"{'>1 GB':>5} {'changed':>7} {'max s':>6} {'max MB':>7} {'largest input MB':>16} {'wall s':>7} {'CPU s':>7}"
    )
    totals = {"internal": 0, "exit": 0, "slow": 0, "outside": 0, "memory": 0, "changed": 0}
    for challenge in args.challenge or IDS:
        with tempfile.TemporaryDirectory(prefix="podium-fuzz-") as scratch:
            root = Path(scratch)
            demo = get(challenge).write_demo(root / "demo")
            counts = dict.fromkeys(totals, 0)
            slowest = peak = largest = 0.0
            start, cpu = time.perf_counter(), cpu_seconds()
            failures = []
            for number in range(args.cases):
                case = make_case(challenge, demo, root / f"case{number}", number, seed=args.seed, big_mb=args.big_mb)
                outcome = run_case(case, time_limit_s=args.time_limit)
                shutil.rmtree(root / f"case{number}", ignore_errors=True)
                found = {
                    "internal": outcome.exit_code == 70,
                    "exit": outcome.exit_code not in case.allowed_exits and outcome.exit_code not in (70, -1),
                    "slow": outcome.seconds > 10 or outcome.exit_code == -1,
                    "outside": outcome.read_outside,
                    "memory": outcome.peak_mb > 1024 and case.input_bytes < 300 << 20,
                }
                for key, hit in found.items():
                    counts[key] += hit
                if any(found.values()):
                    failures.append(
                        f"  #{number} {case.side} {case.kind} {case.target}: exit {outcome.exit_code}, "
                        f"{outcome.seconds:.1f} s, {outcome.peak_mb:.0f} MB"
                    )
                slowest, peak = max(slowest, outcome.seconds), max(peak, outcome.peak_mb)
                largest = max(largest, case.input_bytes / 2**20)
            expected = json.dumps(
                podium.evaluate(challenge, demo.truth, demo.submission, **demo.settings).scores, sort_keys=True
            )
            for number in range(args.cases // 10 if args.rewrites is None else args.rewrites):
                kinds, path = rewrite(
                    challenge,
                    demo.submission,
                    root / f"rewrite{number}",
                    random.Random(f"{args.seed}:{challenge}:{number}"),
                )
                got = podium.evaluate(challenge, demo.truth, path, **demo.settings)
                if got.errors or json.dumps(got.scores, sort_keys=True) != expected:
                    counts["changed"] += 1
                    failures.append(f"  rewrite #{number} {kinds}: {[e.message[:100] for e in got.errors[:2]]}")
                shutil.rmtree(root / f"rewrite{number}", ignore_errors=True)
            print(
                f"{challenge:<16} {args.cases:>6} {counts['internal']:>8} {counts['exit']:>8} {counts['slow']:>9} "
                f"{counts['outside']:>7} {counts['memory']:>5} {counts['changed']:>7} {slowest:>6.2f} {peak:>7.0f} {largest:>16.0f} "
                f"{time.perf_counter() - start:>7.0f} {cpu_seconds() - cpu:>7.0f}",
                flush=True,
            )
            for line in failures[:20]:
                print(line, flush=True)
            for key in totals:
                totals[key] += counts[key]
    print("totals:", ", ".join(f"{k} {v}" for k, v in totals.items()))


if __name__ == "__main__":
    main()
