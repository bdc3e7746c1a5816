"""The ``arena`` command."""

from __future__ import annotations

import argparse
import asyncio
import csv
import dataclasses
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from arena.bots.policies import POLICIES
from arena.bots.runner import play_match
from arena.league.cluster import DaskExecutor
from arena.league.driver import RunSummary, leaderboard, open_store, run_season
from arena.league.executor import Executor, JobOutcome, LocalExecutor
from arena.league.season import Season, SeasonError, load_season
from arena.league.store import SeasonStore
from arena.referee import check
from arena.referee.match import Limits, MatchSpec, Seat, run_match
from arena.referee.replay import ReplayMismatch, replay
from arena.report.render import render_site
from arena.report.serve import make_server
from arena.rules import events
from arena.rules.narration import describe
from arena.rules.options import RuleOptions
from arena.sandbox import (
    BACKENDS,
    BotManifest,
    BuildError,
    ManifestError,
    SandboxError,
    SandboxLimits,
    load_manifest,
    make_launcher,
    prepare,
    sandbox_record,
)


def _simulate(args: argparse.Namespace) -> int:
    """Play in-process policies against each other (no processes, no sandbox)."""
    names: list[str] = args.policies
    unknown = [n for n in names if n not in POLICIES]
    if unknown:
        print(f"arena simulate: unknown policy {unknown[0]!r}; known: {', '.join(POLICIES)}",
              file=sys.stderr)
        return 2
    if not 2 <= len(names) <= 10:
        print("arena simulate: name 2 to 10 policies, one per seat", file=sys.stderr)
        return 2
    options = RuleOptions(target_score=args.target)
    console = Console()
    wins = [0.0] * len(names)
    totals = [0] * len(names)
    decisions = 0
    started = time.perf_counter()
    for index in range(args.matches):
        seed = args.seed + index
        # Rotate seats so no policy keeps the same seat position.
        shift = index % len(names)
        order = names[shift:] + names[:shift]
        result = play_match([POLICIES[n] for n in order], seed, options, build=True)
        decisions += result.decisions
        for seat, place in enumerate(result.places):
            original = (seat + shift) % len(names)
            totals[original] += result.scores[seat]
            if place == 1:
                wins[original] += 1 / len(result.winners)
    elapsed = time.perf_counter() - started
    table = Table(title=f"{args.matches} matches to {args.target}, seeds {args.seed}..")
    table.add_column("seat")
    table.add_column("policy")
    table.add_column("wins", justify="right")
    table.add_column("win rate", justify="right")
    table.add_column("avg points", justify="right")
    for seat, name in enumerate(names):
        table.add_row(str(seat), name, f"{wins[seat]:g}", f"{wins[seat] / args.matches:.1%}",
                      f"{totals[seat] / args.matches:.0f}")
    console.print(table)
    console.print(f"{decisions:,} decisions in {elapsed:.2f} s "
                  f"({decisions / elapsed:,.0f} decisions/s)")
    return 0


def _load_bots(folders: Sequence[str], command: str) -> list[BotManifest] | None:
    try:
        return [load_manifest(folder) for folder in folders]
    except ManifestError as error:
        print(f"arena {command}: {error}", file=sys.stderr)
        return None


def _limits(args: argparse.Namespace) -> Limits:
    return Limits(decision_deadline=args.deadline, time_bank=args.time_bank)


def _sandbox_limits(args: argparse.Namespace, command: str) -> SandboxLimits | None:
    try:
        return SandboxLimits(memory_mib=args.memory, processes=args.processes,
                             cpu_seconds=args.cpu_seconds,
                             build_network=not args.offline_build)
    except ValueError as error:
        print(f"arena {command}: {error}", file=sys.stderr)
        return None


def _build(bots: list[BotManifest], args: argparse.Namespace, limits: SandboxLimits,
           logs: Path, command: str) -> list[BotManifest] | None:
    """Run each bot's build step once (sandboxed, on a private copy) unless --no-build."""
    if args.no_build:
        return bots
    built = []
    for bot in bots:
        if bot.build:
            print(f"building {bot.label}: {' '.join(bot.build)}", file=sys.stderr, flush=True)
        try:
            built.append(prepare(bot, args.sandbox, limits, logs))
        except (BuildError, SandboxError) as error:
            print(f"arena {command}: {error}", file=sys.stderr)
            return None
    return built


def _play(args: argparse.Namespace) -> int:
    """Play matches between bot processes over the referee and print a summary."""
    bots = _load_bots(args.bots, "play")
    if bots is None:
        return 2
    if not 2 <= len(bots) <= 10:
        print("arena play: give 2 to 10 bot folders, one per seat", file=sys.stderr)
        return 2
    sandbox_limits = _sandbox_limits(args, "play")
    if sandbox_limits is None:
        return 2
    logs = Path(args.logs)
    built = _build(bots, args, sandbox_limits, logs, "play")
    if built is None:
        return 2
    bots = built
    console = Console()
    options = RuleOptions(target_score=args.target)
    n = len(bots)
    stats = [{"wins": 0.0, "points": 0, "faults": 0, "dq": 0} for _ in bots]
    decisions = 0
    started = time.perf_counter()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=True) as progress:
        task = progress.add_task("matches", total=args.matches)
        for index in range(args.matches):
            shift = index % n  # rotate seats so no bot keeps one position
            order = [(seat + shift) % n for seat in range(n)]
            match_id = f"match-{index + 1:04d}"
            try:
                seats: list[Seat] = [
                    None if args.listen else
                    make_launcher(args.sandbox, bots[b], sandbox_limits, logs / match_id,
                                  f"seat{seat}-{bots[b].name}")
                    for seat, b in enumerate(order)]
            except SandboxError as error:
                print(f"arena play: {error}", file=sys.stderr)
                return 2
            spec = MatchSpec(match_id, args.seed + index, n, options, _limits(args),
                             logs / f"{match_id}.jsonl.gz", sandbox=sandbox_record(seats))
            outcome = asyncio.run(run_match(spec, seats, address=args.listen))
            decisions += outcome.decisions
            winners = outcome.places.count(1)
            for seat, b in enumerate(order):
                report = outcome.seats[seat]
                stats[b]["points"] += outcome.scores[seat]
                stats[b]["faults"] += len(report.faults)
                stats[b]["dq"] += report.disqualified
                if outcome.places[seat] == 1:
                    stats[b]["wins"] += 1 / winners
            elapsed = time.perf_counter() - started
            progress.update(task, advance=1, description=(
                f"{index + 1}/{args.matches} matches, {decisions / elapsed:,.0f} decisions/s"))
    elapsed = time.perf_counter() - started
    table = Table(title=f"{args.matches} matches to {args.target} (seeds {args.seed}..)")
    for column in ("bot", "wins", "win rate", "avg points", "faults", "disqualified"):
        table.add_column(column, justify="left" if column == "bot" else "right")
    for bot, row in zip(bots, stats, strict=True):
        table.add_row(bot.label, f"{row['wins']:g}", f"{row['wins'] / args.matches:.1%}",
                      f"{row['points'] / args.matches:.0f}", str(row["faults"]),
                      str(row["dq"]))
    console.print(table)
    console.print(f"{decisions:,} decisions in {elapsed:.1f} s "
                  f"({decisions / elapsed:,.0f} decisions/s); logs in {logs}/")
    return 0


def _check(args: argparse.Namespace) -> int:
    """Conformance check for one bot: connects, plays every decision kind legally and in
    time, and finishes full matches."""
    bots = _load_bots([args.bot], "check")
    if bots is None:
        return 2
    bot = bots[0]
    console = Console()
    console.print(f"checking {bot.label} ({bot.folder})")
    logs = Path(args.logs)
    sandbox_limits = _sandbox_limits(args, "check")
    if sandbox_limits is None:
        return 2
    built = _build([bot], args, sandbox_limits, logs, "check")
    if built is None:
        return 2
    bot = built[0]
    try:
        make_launcher(args.sandbox, bot, sandbox_limits, logs, "check")
    except SandboxError as error:
        print(f"arena check: {error}", file=sys.stderr)
        return 2

    def launcher(index: int) -> Seat:
        return make_launcher(args.sandbox, bot, sandbox_limits, logs,
                             f"check-{index + 1}-{bot.name}")

    outcomes = []
    for spec, seats, bot_seat in check.plan(launcher, args.matches):
        outcomes.append((asyncio.run(run_match(spec, seats)), bot_seat))
    items = check.verdict(outcomes, logs)
    for item in items:
        mark = "[green]PASS[/green]" if item.passed else "[red]FAIL[/red]"
        console.print(f"{mark} {item.name}: {item.detail}")
    passed = all(item.passed for item in items)
    console.print("[bold green]all checks passed[/bold green]" if passed else
                  f"[bold red]{sum(not i.passed for i in items)} check(s) failed[/bold red]")
    return 0 if passed else 1


def _replay(args: argparse.Namespace) -> int:
    """Re-run a match log through the engine, check it agrees, and show it turn by turn."""
    console = Console(highlight=False)
    names: list[str] = []

    def show(record: dict[str, object]) -> None:
        nonlocal names
        if args.quiet:
            return
        kind = record.get("type")
        if kind == "seats":
            names = [str(s["name"]) for s in record["seats"]]  # type: ignore[attr-defined]
        elif kind == "event":
            line = describe(events.from_record({k: v for k, v in record.items()
                                                if k != "type"}), names)
            console.print(line)
        elif kind == "fault":
            console.print(f"[red]fault[/red] seat {record['seat']}: {record['reason']}")
        elif kind == "decision" and record.get("source") != "bot":
            console.print(f"  [dim]({record['source']} played {record['name']} for seat "
                          f"{record['seat']})[/dim]")

    try:
        result = replay(Path(args.log), show)
    except (ReplayMismatch, OSError, ValueError, KeyError) as error:
        console.print(f"[red]replay failed:[/red] {error}")
        return 1
    console.print(f"[green]replay agrees with the log[/green]: {len(result.match.events)} "
                  f"events, scores {result.match.scores}")
    return 0


def _season_or_exit(path: str) -> Season | None:
    try:
        return load_season(path)
    except SeasonError as error:
        print(f"arena season: {error}", file=sys.stderr)
        return None


def _season_run(args: argparse.Namespace) -> int:
    """Play every match of the season not yet recorded (stop any time; run again to resume)."""
    season = _season_or_exit(args.season)
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

            summary = run_season(season, executor, on_outcome)
    except KeyboardInterrupt:
        executor.shutdown()
        console.print("[yellow]stopped: matches in flight were killed and not recorded; "
                      "run the same command again to resume[/yellow]")
        return 130
    console.print(f"played {summary.played}, failed {summary.failed}, "
                  f"{summary.already_done} were already done; store {season.store_path}")
    _print_standings(season, console)
    return 1 if summary.failed else 0


def _print_standings(season: Season, console: Console) -> None:
    store = SeasonStore(season.store_path)
    try:
        board = leaderboard(store)
        names = {int(str(e["id"])): f"{e['name']} {e['version']}" for e in store.entrants()}
    finally:
        store.close()
    if not console.is_terminal:  # piped or logged: do not squeeze the table into 80 columns
        console = Console(width=120)
    table = Table(title=f"{season.name}: standings (TrueSkill rating = mu - 3 sigma; "
                        "place and score are averages)")
    for column in ("#", "bot", "rating", "mu", "sigma", "P>next", "games", "wins", "win%",
                   "place", "score", "faults"):
        table.add_column(column, justify="left" if column == "bot" else "right")
    for rank, (row, above) in enumerate(zip(board.standings, board.outranks_next,
                                            strict=True), start=1):
        table.add_row(str(rank), names.get(row.entrant_id, "?"), f"{row.conservative:.2f}",
                      f"{row.mu:.2f}", f"{row.sigma:.2f}",
                      "" if above is None else f"{above:.0%}", str(row.matches),
                      f"{row.wins:g}", f"{row.win_rate:.0%}", f"{row.average_place:.2f}",
                      f"{row.average_score:.0f}", str(row.faults))
    console.print(table)


def _season_status(args: argparse.Namespace) -> int:
    """How far the season is: matches done, failed, to play."""
    season = _season_or_exit(args.season)
    if season is None:
        return 2
    if not season.store_path.exists():
        print(f"season {season.name}: not started ({season.store_path} does not exist)")
        return 0
    store, _, matches = open_store(season)
    try:
        counts = store.counts()
        print(f"season {season.name}: {counts['done']} done, {counts['failed']} failed, "
              f"{counts['scheduled']} to play, of {len(matches)}")
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
    season = _season_or_exit(args.season)
    if season is None:
        return 2
    if not season.store_path.exists():
        print(f"arena season: {season.name} has no results yet", file=sys.stderr)
        return 1
    _print_standings(season, Console())
    return 0


def _season_export(args: argparse.Namespace) -> int:
    """Results and ratings as CSV or JSON."""
    season = _season_or_exit(args.season)
    if season is None:
        return 2
    store = SeasonStore(season.store_path)
    try:
        entrants = {int(str(e["id"])): e for e in store.entrants()}
        results = store.results()
        board = leaderboard(store)
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


def _report(args: argparse.Namespace) -> int:
    """Render a season's standings, matches and replays into a static HTML site."""
    target = Path(args.season)
    if target.suffix == ".sqlite":
        store_path, out = target, Path(args.out or Path("reports") / target.parent.name)
    else:
        season = _season_or_exit(args.season)
        if season is None:
            return 2
        store_path, out = season.store_path, Path(args.out) if args.out else season.report
    if not store_path.exists():
        print(f"arena report: no results yet ({store_path} does not exist); run "
              "`arena season run` first", file=sys.stderr)
        return 1
    started = time.perf_counter()
    summary = render_site(store_path, out)
    print(f"rendered {summary.pages} pages into {out}/ in {time.perf_counter() - started:.1f} s "
          f"({summary.match_pages_rendered} matches rendered, {summary.match_pages_reused} "
          f"unchanged); open {out / 'index.html'} or run `arena serve {out}`")
    return 0


def _serve(args: argparse.Namespace) -> int:
    """Serve a rendered site on localhost."""
    directory = Path(args.directory)
    if not (directory / "index.html").exists():
        candidates = sorted(p.parent for p in directory.glob("*/index.html"))
        if len(candidates) == 1:
            directory = candidates[0]
        elif not candidates:
            print(f"arena serve: no index.html in {directory}; render one with `arena report`",
                  file=sys.stderr)
            return 1
    server = make_server(directory, args.port)
    print(f"serving {directory} at http://127.0.0.1:{server.server_port}/ (Ctrl-C to stop)",
          flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arena", description="UNO Arena: bot matches under the official UNO rules.")
    commands = parser.add_subparsers(dest="command", required=True)
    simulate = commands.add_parser(
        "simulate", help="play built-in policies against each other in-process",
        description=_simulate.__doc__)
    simulate.add_argument("policies", nargs="+", metavar="POLICY",
                          help=f"one per seat: {', '.join(POLICIES)}")
    simulate.add_argument("--matches", type=int, default=20)
    simulate.add_argument("--seed", type=int, default=1)
    simulate.add_argument("--target", type=int, default=500, help="target score (§16)")
    simulate.set_defaults(run=_simulate)

    play = commands.add_parser("play", help="play matches between bot folders",
                               description=_play.__doc__)
    play.add_argument("bots", nargs="+", metavar="BOT_DIR")
    play.add_argument("--matches", type=int, default=10)
    play.add_argument("--seed", type=int, default=1)
    play.add_argument("--target", type=int, default=500, help="target score (§16)")
    play.add_argument("--logs", default="runs/play", help="folder for match logs and bot output")
    play.add_argument("--listen", metavar="ADDRESS",
                      help="listen on ADDRESS (e.g. localhost:50051) and wait for bots started "
                           "by hand, printing each seat's token")
    _limit_options(play)
    _sandbox_options(play)
    play.set_defaults(run=_play)

    check_parser = commands.add_parser("check", help="conformance check for a bot folder",
                                       description=_check.__doc__)
    check_parser.add_argument("bot", metavar="BOT_DIR")
    check_parser.add_argument("--matches", type=int, default=2)
    check_parser.add_argument("--logs", default="runs/check", help="folder for the bot's output")
    _sandbox_options(check_parser)
    check_parser.set_defaults(run=_check)

    replay_parser = commands.add_parser("replay", help="re-run and show a match log",
                                        description=_replay.__doc__)
    replay_parser.add_argument("log", metavar="LOG")
    replay_parser.add_argument("--quiet", action="store_true", help="only verify")
    replay_parser.set_defaults(run=_replay)

    season = commands.add_parser("season", help="league seasons: run, status, standings, export")
    season_commands = season.add_subparsers(dest="season_command", required=True)
    run = season_commands.add_parser("run", help="play (or resume) a season",
                                     description=_season_run.__doc__)
    run.add_argument("season", metavar="SEASON.toml")
    run.add_argument("--parallelism", type=int, help="matches at once (overrides the file)")
    run.add_argument("--cluster", metavar="ADDRESS",
                     help="run the matches on a Dask cluster, e.g. tcp://head:8786")
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

    report = commands.add_parser("report", help="render a season into HTML",
                                 description=_report.__doc__)
    report.add_argument("season", metavar="SEASON",
                        help="the season file (or its season.sqlite store)")
    report.add_argument("--out", help="output folder (default: the season's [output] report)")
    report.set_defaults(run=_report)

    serve = commands.add_parser("serve", help="serve a rendered site on localhost",
                                description=_serve.__doc__)
    serve.add_argument("directory", nargs="?", default="reports", metavar="DIR")
    serve.add_argument("--port", type=int, default=8000)
    serve.set_defaults(run=_serve)
    return parser


def _limit_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--deadline", type=float, default=1.0,
                        help="seconds per decision (default 1)")
    parser.add_argument("--time-bank", type=float, default=10.0,
                        help="extra seconds per match (default 10)")


def _sandbox_options(parser: argparse.ArgumentParser) -> None:
    defaults = SandboxLimits()
    parser.add_argument("--sandbox", choices=BACKENDS, default="bubblewrap",
                        help="how bots are isolated (default bubblewrap; where it cannot run, "
                             "the weaker fallback, with a warning)")
    parser.add_argument("--memory", type=int, default=defaults.memory_mib, metavar="MIB",
                        help=f"memory cap per bot in MiB (default {defaults.memory_mib})")
    parser.add_argument("--processes", type=int, default=defaults.processes,
                        help=f"processes and threads per bot (default {defaults.processes})")
    parser.add_argument("--cpu-seconds", type=int, default=defaults.cpu_seconds,
                        help=f"CPU seconds per bot process (default {defaults.cpu_seconds})")
    parser.add_argument("--no-build", action="store_true",
                        help="run bot folders as they are, skipping their build steps")
    parser.add_argument("--offline-build", action="store_true",
                        help="no network during build steps (npm ci needs the registry)")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    raise SystemExit(main())
