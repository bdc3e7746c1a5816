"""``arena season``: run, status, standings and export of a league season."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import sys
import time
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from arena.cli.common import key_argument
from arena.league.cluster import DaskExecutor
from arena.league.driver import (
    RunSummary,
    leaderboard,
    open_store,
    run_season,
    season_key,
    season_ratings,
)
from arena.league.executor import Executor, JobOutcome, LocalExecutor
from arena.league.season import Season, SeasonError, load_season
from arena.league.store import SeasonStore
from arena.league.tiebreak import tiebreak_summary
from arena.rules.seeds import key_commitment


def season_or_exit(path: str) -> Season | None:
    try:
        return load_season(path)
    except SeasonError as error:
        print(f"arena season: {error}", file=sys.stderr)
        return None


def _season_run(args: argparse.Namespace) -> int:
    """Play every match of the season not yet recorded (stop any time; run again to resume)."""
    season = season_or_exit(args.season)
    if season is None:
        return 2
    if args.parallelism:
        season = dataclasses.replace(season, parallelism=args.parallelism)
    console = Console()
    try:
        store, _, matches = open_store(season)
    except SeasonError as error:
        print(f"arena season: {error}", file=sys.stderr)
        return 2
    try:
        season_key(store, args.key)  # drawn now, at the first run: the commitment is fixed
    except SeasonError as error:
        print(f"arena season: {error}", file=sys.stderr)
        return 2
    finally:
        pending = len(store.pending())
        store.close()
    cluster = args.cluster or season.cluster
    executor: Executor
    if cluster or season.executor == "dask":
        executor = DaskExecutor(cluster, season.parallelism, season.shared_bots,
                                season.pin_cores)
        placement = f"on the Dask cluster {cluster or '(local)'}"
    else:
        executor = LocalExecutor(season.parallelism, season.pin_cores)
        placement = f"{season.parallelism} at a time"
        if executor.placement(pending):
            placement += ", a core each"
    console.print(f"season [bold]{season.name}[/bold]: {len(season.entrants)} entrants, "
                  f"{len(matches)} matches at {season.table_size}-player tables, "
                  f"{len(matches) - pending} already done; sandbox {season.sandbox.backend}; "
                  f"{placement}")
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[failed]} failed"), TextColumn("{task.fields[rate]}"),
               TimeRemainingColumn())
    started = time.perf_counter()
    try:
        with Progress(*columns, console=console) as progress:
            task = progress.add_task("matches", total=pending, failed=0, rate="")

            def on_outcome(outcome: JobOutcome, summary: RunSummary) -> None:
                done = summary.played + summary.failed
                per_minute = done / max(time.perf_counter() - started, 1e-9) * 60
                progress.update(task, completed=done, failed=summary.failed,
                                rate=f"{per_minute:.1f}/min")
                if outcome.error:
                    last = outcome.error.strip().splitlines()[-1]
                    progress.console.print(f"[red]match {outcome.match_id} failed:[/red] {last}")

            summary = run_season(season, executor, on_outcome, key=args.key)
    except KeyboardInterrupt:
        executor.shutdown()
        console.print("[yellow]stopped: matches in flight were killed and not recorded; "
                      "run the same command again to resume[/yellow]")
        return 130
    console.print(f"played {summary.played}, failed {summary.failed}, "
                  f"{summary.already_done} were already done; store {season.store_path}")
    _print_standings(season, console)
    return 1 if summary.failed else 0


def separation_sentences(groups: list[list[str]]) -> list[str]:
    """In words: which entrants the data cannot separate."""
    sentences = []
    for names in groups:
        listed = ", ".join(names[:-1]) + f" and {names[-1]}"
        sentences.append(f"{listed} cannot be separated by this season's results: their "
                         "rank intervals overlap, so they share a rank.")
    return sentences


def _print_standings(season: Season, console: Console) -> None:
    store = SeasonStore(season.store_path)
    try:
        ratings = season_ratings(store)
        names = {int(str(e["id"])): f"{e['name']} {e['version']}" for e in store.entrants()}
        matches = store.matches()
    finally:
        store.close()
    if not console.is_terminal:  # piped or logged: do not squeeze the table into 80 columns
        console = Console(width=140)
    official = ratings.official
    table = Table(title=f"{season.name}: standings (Bradley-Terry strength over who finished "
                        f"ahead of whom, all results at once; rank interval: 95% bootstrap)")
    for column in ("rank", "bot", "strength", "interval", "P>next", "live", "games", "wins",
                   "win%", "place", "score", "faults"):
        table.add_column(column, justify="left" if column == "bot" else "right")
    for row in official.rows:
        live = ratings.standing(row.entrant_id)
        table.add_row(row.rank_label, names.get(row.entrant_id, "?"), f"{row.strength:+.2f}",
                      row.interval_label,
                      "" if row.above_next is None else f"{row.above_next:.0%}",
                      f"{live.conservative:.2f}", str(live.matches), f"{live.wins:g}",
                      f"{live.win_rate:.0%}", f"{live.average_place:.2f}",
                      f"{live.average_score:.0f}", str(live.faults))
    console.print(table)
    for sentence in separation_sentences(
            [[names.get(e, "?") for e in group] for group in official.groups]):
        console.print(sentence)
    if official.unrated:
        console.print("unrated (no match recorded): " + ", ".join(
            names.get(e, "?") for e in official.unrated))
    failed = [m for m in matches if m["status"] == "failed"]
    if failed:
        console.print(f"{len(failed)} match(es) failed and count for no one: "
                      "`arena season status` says why")
    console.print("live = the running TrueSkill rating (mu - 3 sigma, schedule order, draw "
                  f"probability {ratings.live.draw_probability:.2%} from the season's ties)")


def _season_status(args: argparse.Namespace) -> int:
    """How far the season is: matches done, failed, to play."""
    season = season_or_exit(args.season)
    if season is None:
        return 2
    if not season.store_path.exists():
        print(f"season {season.name}: not started ({season.store_path} does not exist)")
        return 0
    store, _, _ = open_store(season)
    try:
        counts = store.counts()
        print(f"season {season.name}: {counts['done']} done, {counts['failed']} failed, "
              f"{counts['scheduled']} to play, of {sum(counts.values())}")
        extra = tiebreak_summary(store.matches())
        if extra["matches"]:
            print(f"  tie-break stage: {extra['matches']} extra matches in "
                  f"{extra['batches']} batch(es), {extra['done']} done (counted above)")
        for match in store.matches():
            if match["status"] == "failed":
                error = str(match["error"] or "").strip().splitlines()
                print(f"  {match['match_id']} failed ({match['attempts']} attempt(s)): "
                      f"{error[-1] if error else ''}")
    finally:
        store.close()
    return 0


def _season_standings(args: argparse.Namespace) -> int:
    """The leaderboard from the results recorded so far."""
    season = season_or_exit(args.season)
    if season is None:
        return 2
    if not season.store_path.exists():
        print(f"arena season: {season.name} has no results yet", file=sys.stderr)
        return 1
    _print_standings(season, Console())
    return 0


def _season_export(args: argparse.Namespace) -> int:
    """Results and ratings as CSV or JSON."""
    season = season_or_exit(args.season)
    if season is None:
        return 2
    store = SeasonStore(season.store_path)
    try:
        entrants = {int(str(e["id"])): e for e in store.entrants()}
        results = store.results()
        board = leaderboard(store)
        official = season_ratings(store).official
    finally:
        store.close()
    out = open(args.out, "w", newline="") if args.out else sys.stdout  # noqa: SIM115
    try:
        if args.format == "json":
            json.dump({
                "season": season.name,
                "ratings": [{"bot": entrants[s.entrant_id]["name"],
                             "version": entrants[s.entrant_id]["version"],
                             "mu": s.mu, "sigma": s.sigma, "conservative": s.conservative,
                             "matches": s.matches, "wins": s.wins,
                             "average_place": s.average_place, "average_score": s.average_score,
                             "faults": s.faults} for s in board.standings],
                "standings": [{"bot": entrants[r.entrant_id]["name"],
                               "version": entrants[r.entrant_id]["version"],
                               "rank": r.rank_label, "position": r.position,
                               "rank_interval": list(r.interval), "strength": r.strength,
                               "p_above_next": r.above_next, "matches": r.matches}
                              for r in official.rows],
                "unrated": [entrants[e]["name"] for e in official.unrated],
                "cannot_separate": [[entrants[e]["name"] for e in group]
                                    for group in official.groups],
                "results": [{"match_id": r.match_id, "seat": r.seat,
                             "bot": entrants[r.entrant_id]["name"], "place": r.place,
                             "score": r.score, "rounds_won": r.rounds_won,
                             "strikes": r.strikes, "disqualified": r.disqualified,
                             "faults": list(r.faults)} for r in results],
            }, out, indent=2)
            out.write("\n")
        else:
            writer = csv.writer(out)
            writer.writerow(["match_id", "seat", "bot", "version", "place", "score",
                             "rounds_won", "strikes", "disqualified"])
            for r in results:
                entrant = entrants[r.entrant_id]
                writer.writerow([r.match_id, r.seat, entrant["name"], entrant["version"],
                                 r.place, r.score, r.rounds_won, r.strikes,
                                 int(r.disqualified)])
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


def _season_reveal(args: argparse.Namespace) -> int:
    """Publish the season's secret key, once its matches are played: with it anyone can
    check the commitment in every log and re-deal every match (`arena replay LOG --key`)."""
    season = season_or_exit(args.season)
    if season is None:
        return 2
    if not season.store_path.exists():
        print(f"arena season reveal: {season.name} has not been run "
              f"({season.store_path} does not exist)", file=sys.stderr)
        return 1
    store = SeasonStore(season.store_path)
    try:
        known = store.meta("season_key")
        if known is None:
            print(f"arena season reveal: {season.store_path} holds no season key yet; run "
                  "the season first", file=sys.stderr)
            return 1
        counts = store.counts()
        if counts["scheduled"] and not args.force:
            print(f"arena season reveal: {counts['scheduled']} match(es) of {season.name} are "
                  "still to play, and the key would let bots predict their deals; finish the "
                  "season first (or --force)", file=sys.stderr)
            return 1
        if store.meta("key_revealed_at") is None:
            store.set_meta("key_revealed_at", str(time.time()))
    finally:
        store.close()
    key = bytes.fromhex(known)
    print(f"season {season.name}: key {key.hex()}")
    print(f"its SHA-256, committed to in every log: {key_commitment(key)}")
    print("the site shows it from the next `arena report`; anyone can check a log with "
          f"`arena replay LOG --key {key.hex()}`")
    return 0


def register(commands: Any) -> None:
    season = commands.add_parser(
        "season", help="league seasons: run, status, standings, export, reveal")
    season_commands = season.add_subparsers(dest="season_command", required=True)
    run = season_commands.add_parser("run", help="play (or resume) a season",
                                     description=_season_run.__doc__)
    run.add_argument("season", metavar="SEASON.toml")
    run.add_argument("--parallelism", type=int, help="matches at once (overrides the file)")
    run.add_argument("--cluster", metavar="ADDRESS",
                     help="run the matches on a Dask cluster, e.g. tcp://head:8786")
    run.add_argument("--key", type=key_argument, metavar="HEX",
                     help="deal from this season key instead of a fresh secret one (first run "
                          "only; e.g. to re-run a revealed season and compare its logs)")
    run.set_defaults(run=_season_run)
    for name, handler in (("status", _season_status), ("standings", _season_standings)):
        sub = season_commands.add_parser(name, help=handler.__doc__,
                                         description=handler.__doc__)
        sub.add_argument("season", metavar="SEASON.toml")
        sub.set_defaults(run=handler)
    export = season_commands.add_parser("export", help=_season_export.__doc__,
                                        description=_season_export.__doc__)
    export.add_argument("season", metavar="SEASON.toml")
    export.add_argument("--format", choices=("csv", "json"), default="csv")
    export.add_argument("--out", help="file to write (default: standard output)")
    export.set_defaults(run=_season_export)
    reveal = season_commands.add_parser("reveal", help="publish the season's secret key",
                                        description=_season_reveal.__doc__)
    reveal.add_argument("season", metavar="SEASON.toml")
    reveal.add_argument("--force", action="store_true",
                        help="reveal even though matches are still to play")
    reveal.set_defaults(run=_season_reveal)
