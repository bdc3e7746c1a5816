"""A league of 200 entrants at 10,000, 25,000 and 50,000 results: what every step costs.

No bot plays. The season is real (a season file of 200 entrant folders with their
bot.toml, two seats, duplicate deals, 4 matches a pair: 79,600 scheduled matches), its
store is the real ``SeasonStore`` opened by the driver's own ``open_store`` (the real
fingerprint and schedule), and results are recorded with ``SeasonStore.record``, one
transaction per match as a run records them, drawn from a model of known strengths
(Bradley-Terry, the matches of a duplicate deal sharing their cards). Every recorded match
has a real match log: a handful of matches are played in-process through the referee
(greedy and random policies, to ``--target`` points) and every match's log is a copy of
one of them, so the report reads, checks, renders and copies real logs.

At each size, side by side, with the growth from the first size to the last (5.0 is
linear when the sizes are 10k and 50k):

* store: recording a match (mean per match over the results recorded since the last
  size), and reading every result and match back (the standings' and the report's query);
* live TrueSkill (schedule order) and the official fit with its bootstrap rank intervals,
  timed in a fresh process (with the read of every result: this one's heap grows over the
  run), then run again here under tracemalloc for its peak (it slows Python down several
  times);
* ``arena season standings`` (the real command, a subprocess; its peak RSS);
* ``arena report``: full (into an empty folder, at the size less three rounds of
  ``--round`` matches) then incremental (a round recorded, same folder; three times, the
  median); peak RSS, and the CPU of the report's processes (its helpers too), which on
  this machine's cores is the least it could take however its work were shared;
* the site: bytes, files, the largest page;
* the scheduler at 200 entrants: the eager list, one match computed on its own, and the
  resume path (``open_store`` on the filled store: fingerprint and schedule re-recorded).

Run: ``python -m benchmarks.scale [--sizes 10000 25000 50000] [--keep]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ENTRANTS = 200
PER_PAIR = 4
LOG_SOURCES = 6
INCREMENTAL_RUNS = 3
CORES = len(os.sched_getaffinity(0))

BOT_TOML = """name = "bot{index:03d}"
version = "1.0"
language = "python"
run = ["python3", "bot.py"]
"""

SEASON_TOML = """[season]
name = "scale"
table_size = 2
matches_per_group = {per_pair}
entrants = ["bots/*"]

[rules]
target_score = {target}

[sandbox]
backend = "plain"

[output]
folder = "runs"
report = "site"
"""


@dataclasses.dataclass
class Row:
    label: str
    unit: str
    values: list[float] = dataclasses.field(default_factory=list)
    note: str = ""


class Table:
    def __init__(self) -> None:
        self.rows: dict[str, Row] = {}

    def add(self, label: str, unit: str, value: float, note: str = "") -> None:
        row = self.rows.setdefault(label, Row(label, unit))
        row.values.append(value)
        if note:
            row.note = note

    def print(self, sizes: list[int]) -> None:
        width = max(len(r.label) + len(r.unit) + 3 for r in self.rows.values())
        head = "".join(f"{size:>12,}" for size in sizes)
        print(f"\n{'results':<{width}}{head}{'growth':>9}   (linear: "
              f"{sizes[-1] / sizes[0]:.1f})")
        for row in self.rows.values():
            cells = "".join(f"{_fmt(v):>12}" for v in row.values)
            cells += " " * 12 * (len(sizes) - len(row.values))
            growth = (row.values[-1] / row.values[0]
                      if len(row.values) == len(sizes) and row.values[0] else math.nan)
            print(f"{row.label + ' (' + row.unit + ')':<{width}}{cells}{growth:>9.2f}"
                  f"{'   ' + row.note if row.note else ''}")


def _fmt(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def timed(action: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = action()
    return time.perf_counter() - started, result


def traced(action: Callable[[], Any]) -> tuple[float, float, Any]:
    """Seconds, tracemalloc peak (MiB) and result of ``action``."""
    tracemalloc.start()
    try:
        seconds, result = timed(action)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()
    return seconds, peak, result


def arena(*args: str, cwd: Path) -> tuple[float, float, float, str]:
    """Run ``python -m arena.cli ARGS``: wall seconds, the child's peak RSS (MiB), the CPU
    seconds (user and system) of the child and the helpers it waited for, stdout."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        process = subprocess.Popen([sys.executable, "-m", "arena.cli", *args], cwd=cwd,
                                   stdout=out, stderr=err, env=env)
        # wait4: this child's own rusage (ru_maxrss in KiB), not every child's so far.
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if process.returncode != 0:
            raise SystemExit(f"arena {' '.join(args)} exited {process.returncode}:\n"
                             f"{err.read()}")
        return (seconds, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime,
                out.read())


def fresh_timings(toml: Path) -> dict[str, float]:
    """Seconds of reading every result, the live TrueSkill and the official fit, each timed
    in a new process (``--fresh-timings``)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "benchmarks.scale", "--fresh-timings",
                           str(toml)], env=env, capture_output=True, text=True, check=True)
    return {key: float(value) for key, value in
            (line.split("=") for line in done.stdout.split())}


def _print_fresh_timings(toml: Path) -> None:
    from arena.league.fingerprint import read_store
    from arena.league.outcomes import season_outcomes
    from arena.league.season import load_season
    from arena.rating import calibrated_draw_probability, official_standings, rate_season

    reader, _ = read_store(load_season(toml))
    ids = [entrant["id"] for entrant in reader.entrants()]
    read, outcomes = timed(functools.partial(season_outcomes, reader))
    reader.close()
    draw = calibrated_draw_probability(outcomes)
    live, _ = timed(functools.partial(rate_season, outcomes, ids, draw))
    fit, _ = timed(functools.partial(official_standings, outcomes, ids))
    print(f"read={read} live={live} fit={fit}")


def make_season(work: Path, target: int) -> Path:
    for index in range(ENTRANTS):
        folder = work / "bots" / f"bot{index:03d}"
        folder.mkdir(parents=True)
        (folder / "bot.toml").write_text(BOT_TOML.format(index=index))
        (folder / "bot.py").write_text("raise SystemExit('never started: a synthetic season')\n")
    toml = work / "season.toml"
    toml.write_text(SEASON_TOML.format(per_pair=PER_PAIR, target=target))
    return toml


def real_logs(work: Path, season: Any) -> list[tuple[Path, str, Any]]:
    """A few matches played in-process through the referee: (log, sha256, outcome)."""
    import hashlib

    from arena.bots.policies import POLICIES
    from arena.league import executor as executor_module
    from arena.league.executor import MatchJob, play_job
    from arena.referee.match import InProcessSeat
    from arena.rules.seeds import MatchSeed, seat_seed
    from arena.sandbox.manifest import load_manifest

    def seat_launcher(settings: Any, bot: Any, log_dir: Path, label: str) -> Any:
        seat = int(label.removeprefix("seat").split("-")[0])
        policy = POLICIES[bot.name](seat_seed(zlib.crc32(log_dir.name.encode()), seat))
        return InProcessSeat(policy, bot.name, bot.version), {"backend": "in-process"}

    executor_module.seat_launcher = seat_launcher
    bots = tuple(load_manifest(ROOT / "sample_bots" / "python" / name)
                 for name in ("greedy", "random"))
    out = []
    for index in range(LOG_SOURCES):
        log = work / "source-logs" / f"source{index}.jsonl.gz"
        log.parent.mkdir(parents=True, exist_ok=True)
        job = MatchJob(f"source{index}", MatchSeed.keyed(bytes(32), f"source/{index}"),
                       bots if index % 2 else bots[::-1], season.rules, season.limits,
                       season.sandbox, log, work / "source-logs" / f"out{index}")
        outcome = play_job(job)
        assert outcome.record is not None, outcome.error
        out.append((log, hashlib.sha256(log.read_bytes()).hexdigest(), outcome.record))
    return out


class Filler:
    """Records results into the store, match by match in schedule order, from a model of
    known strengths; each match's log a copy of a real one."""

    def __init__(self, store: Any, ids: list[int], matches: list[Any], logs_dir: Path,
                 sources: list[tuple[Path, str, Any]]) -> None:
        self.store, self.ids, self.matches = store, ids, matches
        self.logs_dir, self.sources = logs_dir, sources
        rng = random.Random(20261125)
        self.skills = [rng.gauss(0.0, 1.0) for _ in ids]
        self.luck: dict[str, float] = {}
        self.rng = rng
        self.done = 0

    def fill(self, upto: int) -> float:
        """Record matches until ``upto`` are recorded; the seconds spent in ``record``."""
        from arena.league.store import MatchRecord, SeatResult

        spent = 0.0
        while self.done < upto:
            match = self.matches[self.done]
            first, second = match.seats
            # The cards of a duplicate deal favour a seat; the bots swap seats over its two
            # matches, so the deal's luck cancels out.
            luck = self.luck.setdefault(match.chance, self.rng.gauss(0.0, 0.8))
            performance = (self.skills[first] - self.skills[second] + luck
                           + self.rng.gauss(0.0, 0.6))
            places = (1, 2) if performance > 0 else (2, 1)
            log, sha, source = self.sources[self.done % len(self.sources)]
            target = self.logs_dir / f"{match.match_id}.jsonl.gz"
            shutil.copyfile(log, target)
            scores = (500, 0) if places[0] == 1 else (0, 500)
            record = MatchRecord(
                match_id=match.match_id, seconds=source.seconds, decisions=source.decisions,
                rounds=source.rounds, round_limit_reached=False, log_path=str(target),
                log_sha256=sha,
                seats=tuple(SeatResult(seat, places[seat], scores[seat], 1 if places[seat] == 1
                                       else 0, 0, False, ()) for seat in range(2)))
            started = time.perf_counter()
            self.store.record(record)
            spent += time.perf_counter() - started
            self.done += 1
        return spent


def site_facts(site: Path) -> tuple[int, int, int, str]:
    """Bytes, files, and the largest page (bytes, path) of a rendered site."""
    total = files = 0
    largest, where = 0, ""
    for path in site.rglob("*"):
        if path.is_file():
            size = path.stat().st_size
            total += size
            files += 1
            if path.suffix == ".html" and size > largest:
                largest, where = size, str(path.relative_to(site))
    return total, files, largest, where


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 25_000, 50_000])
    parser.add_argument("--round", type=int, default=100,
                        help="results recorded between the full and the incremental report")
    parser.add_argument("--target", type=int, default=100,
                        help="target score of the real matches whose logs every match uses")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument("--fresh-timings", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.fresh_timings:
        _print_fresh_timings(args.fresh_timings)
        return

    from arena.league.driver import open_store
    from arena.league.fingerprint import read_store
    from arena.league.outcomes import season_outcomes
    from arena.league.schedule import schedule, two_player_match
    from arena.league.season import load_season
    from arena.rating import calibrated_draw_probability, official_standings, rate_season

    work = Path(tempfile.mkdtemp(prefix="arena-bench-scale-"))
    table = Table()
    try:
        toml = make_season(work, args.target)
        season = load_season(toml)
        total = math.comb(ENTRANTS, 2) * PER_PAIR
        print(f"season: {ENTRANTS} entrants, 2 seats, duplicate deals, {PER_PAIR} matches a "
              f"pair: {total:,} scheduled matches; work folder {work}")
        ahead = INCREMENTAL_RUNS * args.round  # the full report's size short of the size
        if max(args.sizes) > total or min(args.sizes) <= ahead:
            raise SystemExit(f"sizes from {ahead + 1:,} to {total:,} results in this season")

        # -- the scheduler at 200 entrants ----------------------------------------------
        eager_seconds, eager = timed(lambda: schedule(ENTRANTS, 2, PER_PAIR, True))
        _, eager_peak, _ = traced(lambda: schedule(ENTRANTS, 2, PER_PAIR, True))
        one_seconds, _ = timed(lambda: two_player_match(ENTRANTS, PER_PAIR, True, total - 1))
        assert two_player_match(ENTRANTS, PER_PAIR, True, total - 1) == eager[-1]
        create_seconds, opened = timed(lambda: open_store(season))
        store, ids, matches = opened
        print(f"schedule of {total:,} matches: the whole list {eager_seconds:.2f} s "
              f"(tracemalloc peak {eager_peak:.0f} MiB); match {total:,} on its own "
              f"{one_seconds * 1e6:.0f} us; a new store (fingerprint, schedule recorded) "
              f"{create_seconds:.1f} s")
        del eager

        sources = real_logs(work, season)
        sizes_kb = [log.stat().st_size / 1024 for log, _, _ in sources]
        print(f"real logs: {len(sources)} matches to {args.target} points played in-process, "
              f"{min(sizes_kb):.0f}-{max(sizes_kb):.0f} KiB each; every match has a copy of one")
        season.logs.mkdir(parents=True, exist_ok=True)
        filler = Filler(store, ids, matches, season.logs, sources)
        site = work / "site"

        for size in args.sizes:
            before = filler.done
            spent = filler.fill(size - ahead)
            # The resume path: what a run does before its first match on this store.
            store.close()
            resume_seconds, opened = timed(lambda: open_store(season))
            opened[0].close()
            _, resume_peak, opened = traced(lambda: open_store(season))
            store, ids, matches = opened
            filler.store = store
            table.add("run resume: open_store", "s", resume_seconds)
            table.add("run resume: tracemalloc peak", "MiB", resume_peak)
            shutil.rmtree(site, ignore_errors=True)
            full, full_peak, full_cpu, _ = arena("report", str(toml), cwd=work)
            # The incremental report, INCREMENTAL_RUNS times (a round recorded before each,
            # the last one reaching the size): the median, as this machine's speed drifts by
            # a fifth from minute to minute.
            incrementals = []
            for _ in range(INCREMENTAL_RUNS):
                spent += filler.fill(filler.done + args.round)
                incrementals.append(arena("report", str(toml), cwd=work))
            table.add("store: record a match", "ms", 1e3 * spent / (filler.done - before))
            incremental, incremental_peak, incremental_cpu, _ = sorted(incrementals)[
                INCREMENTAL_RUNS // 2]

            # Timed in a fresh process (a long-lived one's heap, which the collector walks,
            # grows with every size); the memory peaks here.
            fresh = fresh_timings(toml)
            table.add("store: read all results", "s", fresh["read"])
            reader, _ = read_store(season)
            outcomes = season_outcomes(reader)
            reader.close()
            draw = calibrated_draw_probability(outcomes)
            _, live_peak, _ = traced(functools.partial(rate_season, outcomes, ids, draw))
            table.add("live TrueSkill", "s", fresh["live"])
            table.add("live TrueSkill: tracemalloc peak", "MiB", live_peak)
            _, fit_peak, official = traced(functools.partial(official_standings, outcomes,
                                                             ids))
            table.add(f"official fit + {official.resamples} resamples", "s", fresh["fit"])
            table.add("official fit: tracemalloc peak", "MiB", fit_peak)
            standings, standings_peak, _, _ = arena("season", "standings", str(toml),
                                                    cwd=work)
            table.add("arena season standings", "s", standings)
            table.add("arena season standings: peak RSS", "MiB", standings_peak)
            table.add(f"arena report, full (at -{ahead})", "s", full)
            table.add("arena report, full: peak RSS", "MiB", full_peak)
            table.add("arena report, full: CPU, its helpers too", "s", full_cpu)
            table.add(f"arena report, incremental (+{args.round}, median of "
                      f"{INCREMENTAL_RUNS})", "s", incremental)
            table.add("arena report, incremental: peak RSS", "MiB", incremental_peak)
            # Its work over this machine's cores: no faster than this however it is shared.
            table.add("arena report, incremental: CPU, its helpers too", "s", incremental_cpu,
                      f"{incremental_cpu / CORES:.2f} s over {CORES} cores")
            total_bytes, files, largest, where = site_facts(site)
            table.add("site size", "MiB", total_bytes / 2**20)
            table.add("site files", "count", files)
            table.add("largest page", "KiB", largest / 1024, where)
            print(f"  {size:,} results measured ({time.strftime('%H:%M:%S')})", flush=True)
            # The table so far: a run stopped before its last size keeps what it measured.
            table.print(args.sizes[:len(table.rows["site files"].values)])
            sys.stdout.flush()
        store.close()
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
