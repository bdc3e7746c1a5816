"""How fast a season run stops on Ctrl-C (SIGINT to the terminal's process group) and on
SIGTERM to the driver: from the signal to the driver's exit, the bots killed and the
workers gone. The sample season's three Python bots, bubblewrap, two workers, to 300
points; each stop comes after a few matches, mid-match.

Run: ``python -m benchmarks.interrupt [--rounds N]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOTS = ROOT / "sample_bots" / "python"
SEASON = f"""
[season]
name = "interrupt"
table_size = 2
matches_per_group = 20
parallelism = 2
entrants = ["{BOTS}/random", "{BOTS}/greedy", "{BOTS}/strategist"]

[rules]
target_score = 300

[output]
folder = "{{folder}}"
"""


def recorded(folder: Path) -> int:
    try:
        with sqlite3.connect(f"file:{folder / 'season.sqlite'}?mode=ro", uri=True) as db:
            return int(db.execute("SELECT COUNT(*) FROM matches WHERE status = 'done'"
                                  ).fetchone()[0])
    except sqlite3.Error:
        return 0


def stop_once(work: Path, index: int, group: bool, sig: int) -> float:
    folder = work / f"run{index}"
    path = work / f"season{index}.toml"
    path.write_text(SEASON.format(folder=folder))
    run = subprocess.Popen([sys.executable, "-m", "arena.cli", "season", "run", str(path)],
                           cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)
    while recorded(folder) < 3:
        time.sleep(0.01)
    time.sleep(0.1)  # mid-match
    started = time.perf_counter()
    if group:
        os.killpg(run.pid, sig)
    else:
        os.kill(run.pid, sig)
    run.wait()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="arena-bench-interrupt-"))
    try:
        for label, group, sig in (("Ctrl-C (SIGINT to the group)", True, signal.SIGINT),
                                  ("SIGTERM to the driver", False, signal.SIGTERM)):
            times = [stop_once(work, index, group, sig) for index in range(args.rounds)]
            print(f"{label:32} signal to exit: median {statistics.median(times) * 1000:.0f} ms, "
                  f"max {max(times) * 1000:.0f} ms over {args.rounds} stops")
            shutil.rmtree(work)
            work.mkdir()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
