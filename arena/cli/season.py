"""``arena season``: run, status, standings and export of a league season.

Every problem a user can meet ends in one line on stderr, ``arena season: <file>: <what>;
<what to do>``, and a non-zero exit code: 2 for a season file to fix (or one that no
longer matches its store), 1 for the rest (another run holds the season, a damaged or
missing store, entrants that cannot play, a full disk), 130/143 when stopped by
SIGINT/SIGTERM, 141 when the reader of the output went away (``export | head``).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import dataclasses
import json
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import IO, TYPE_CHECKING, Any

from arena.cli.common import add_trust_option, key_argument
from arena.league.fingerprint import read_store
from arena.league.lock import SeasonBusy, holder
from arena.league.season import Season, SeasonError, load_season
from arena.league.store import SeasonStore, StoreError, StoreMissing
from arena.league.tiebreak import tiebreak_summary
from arena.rules.seeds import key_commitment
from arena.sandbox import SandboxError, require_containment
from arena.sandbox.manifest import ManifestError

if TYPE_CHECKING:  # imported by the commands that use them: a reader loads no executor,
    # no gRPC, no Dask and no ratings before it needs them (and `arena report` no Rich)
    from rich.console import Console

    from arena.league.cluster import ClusterTLS
    from arena.league.driver import RunSummary
    from arena.league.executor import Executor, JobOutcome

PROGRESS_SECONDS = 5.0
"""How often a run whose output is not a terminal prints a progress line."""
MAX_PARALLELISM = 256
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE


def fail(message: str, code: int = 1, command: str = "arena season") -> int:
    print(f"{command}: {message}", file=sys.stderr, flush=True)
    return code


def season_or_exit(path: str) -> Season | None:
    try:
        return load_season(path)
    except SeasonError as error:
        fail(str(error))
        return None


def never_run(season: Season) -> str:
    return (f"{season.path}: season {season.name} has not been run (no results in "
            f"{season.folder}); play it first: arena season run {season.path}")


@contextlib.contextmanager
def reading(season: Season) -> Iterator[SeasonStore]:
    """The season's store, read-only, after checking it belongs to the season file; bot
    folders changed since the last run are noted on stderr. Raises StoreError/SeasonError."""
    store, changes = read_store(season)
    try:
        for note in changes.notes():
            print(f"arena season: note: {note}", file=sys.stderr, flush=True)
        yield store
    finally:
        store.close()


def reader_errors(season: Season, error: Exception, command: str = "arena season") -> int:
    """The exit code (and the line) for a reader that could not read the season."""
    if isinstance(error, StoreMissing):
        return fail(never_run(season), 1, command)
    if isinstance(error, SeasonError):
        return fail(str(error), 2, command)
    return fail(str(error), 1, command)


# -- run ----------------------------------------------------------------------------------


class Interrupted(BaseException):
    """SIGINT or SIGTERM reached the driver: stop, keep what is recorded."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _interrupt(signum: int, _: FrameType | None) -> None:
    # Once: a second signal while stopping must not cut the clean-up short.
    for kind in (signal.SIGINT, signal.SIGTERM):
        signal.signal(kind, signal.SIG_IGN)
    raise Interrupted(signum)


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """SIGINT and SIGTERM raise Interrupted in the main thread while inside."""
    previous = {kind: signal.signal(kind, _interrupt) for kind in (signal.SIGINT,
                                                                   signal.SIGTERM)}
    try:
        yield
    finally:
        for kind, handler in previous.items():
            signal.signal(kind, handler)


class PlainProgress:
    """Progress for a log or a pipe: one plain line every few seconds, never a bar."""

    def __init__(self, total: int, out: IO[str]) -> None:
        self.total, self.out = total, out
        self.started = self.last = time.monotonic()

    def update(self, summary: RunSummary, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last < PROGRESS_SECONDS:
            return
        self.last = now
        done = summary.played + summary.failed
        rate = done / max(now - self.started, 1e-9) * 60
        left = f", about {(self.total - done) / rate:.0f} min left" if done and rate else ""
        print(f"{time.strftime('%H:%M:%S')} {done}/{self.total} matches, {summary.failed} "
              f"failed, {rate:.1f}/min{left}", file=self.out, flush=True)


def _season_run(args: argparse.Namespace) -> int:
    """Play every match of the season not yet recorded (stop any time; run again to resume)."""
    from rich.console import Console

    from arena.league.cluster import ClusterSecurityError, DaskExecutor, cluster_security
    from arena.league.driver import EntrantsRefused, RunStopped
    from arena.league.executor import LocalExecutor

    season = season_or_exit(args.season)
    if season is None:
        return 2
    if args.parallelism is not None:
        if not 1 <= args.parallelism <= MAX_PARALLELISM:
            return fail(f"--parallelism must be an integer from 1 to {MAX_PARALLELISM}, not "
                        f"{args.parallelism} (as [season] parallelism in the file)", 2)
        season = dataclasses.replace(season, parallelism=args.parallelism)
    if args.trust_bots:
        season = dataclasses.replace(
            season, sandbox=dataclasses.replace(season.sandbox, trusted_bots=True))
    cluster = args.cluster or season.cluster
    try:  # before anything is written: a refusal leaves no trace
        require_containment(season.sandbox.backend, season.sandbox.trusted_bots)
        security = cluster_security(cluster, _cluster_tls(args, season),
                                    args.insecure_cluster or season.insecure_cluster)
    except (SandboxError, ClusterSecurityError) as error:
        print(f"arena season: {error}", file=sys.stderr)
        return 2
    console = Console(soft_wrap=True)  # never wrap a path
    executor: Executor
    if cluster or season.executor == "dask":
        executor = DaskExecutor(cluster, season.parallelism, season.shared_bots,
                                season.pin_cores, security=security)
        placement = f"on the Dask cluster {cluster or '(local)'}"
    else:
        executor = LocalExecutor(season.parallelism, season.pin_cores)
        placement = f"{season.parallelism} at a time"
    latest: list[RunSummary] = []
    started = time.perf_counter()
    with interruptible():
        try:
            return _play(season, executor, placement, console, latest, started, args.key)
        except Interrupted as stop:
            name = signal.Signals(stop.signum).name
            played = latest[-1].played if latest else 0
            console.print(f"stopped by {name}: {played} match(es) recorded by this run; the "
                          "matches in flight were not recorded; run the same command again to "
                          "resume", style="yellow", highlight=False)
            return 128 + stop.signum
        except SeasonBusy as error:
            return fail(str(error))
        except (EntrantsRefused, StoreError) as error:
            return fail(str(error))
        except ManifestError as error:  # a bot folder changed since the season was read
            return fail(str(error), 2)
        except SeasonError as error:
            return fail(str(error), 2)
        except RunStopped as error:
            played = latest[-1].played if latest else 0
            return fail(f"stopped after recording {played} match(es) in this run: {error}")


def _play(season: Season, executor: Executor, placement: str, console: Console,
          latest: list[RunSummary], started: float, key: bytes | None) -> int:
    from rich.markup import escape
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    from arena.league.driver import run_season
    from arena.league.executor import LocalExecutor

    def start(summary: RunSummary) -> None:
        pending = summary.scheduled - summary.already_done
        where = placement
        if isinstance(executor, LocalExecutor) and executor.placement(pending):
            where += ", a core each"
        console.print(f"season [bold]{season.name}[/bold]: {len(season.entrants)} entrants, "
                      f"{summary.scheduled} matches at {season.table_size}-player tables, "
                      f"{summary.already_done} already done; sandbox "
                      f"{season.sandbox.backend}; {escape(where)}; output "
                      f"{escape(str(season.folder))}", highlight=False)

    def note(text: str) -> None:
        console.print(escape(text), highlight=False)

    if console.is_terminal:
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("{task.fields[failed]} failed"),
                   TextColumn("{task.fields[rate]}"), TimeRemainingColumn())
        progress = Progress(*columns, console=console)
        task = progress.add_task("matches", total=None, failed=0, rate="")

        def start_bar(summary: RunSummary) -> None:
            start(summary)
            progress.update(task, total=summary.scheduled - summary.already_done)
            progress.start()

        def on_bar(outcome: JobOutcome, summary: RunSummary) -> None:
            latest.append(summary)
            done = summary.played + summary.failed
            per_minute = done / max(time.perf_counter() - started, 1e-9) * 60
            progress.update(task, completed=done, failed=summary.failed,
                            rate=f"{per_minute:.1f}/min")
            _print_failure(progress.console, outcome)

        try:
            summary = run_season(season, executor, on_bar, note, start_bar, key=key)
        finally:
            progress.stop()
    else:
        plain: PlainProgress | None = None

        def start_line(summary: RunSummary) -> None:
            nonlocal plain
            start(summary)
            plain = PlainProgress(summary.scheduled - summary.already_done, sys.stdout)

        def on_line(outcome: JobOutcome, summary: RunSummary) -> None:
            latest.append(summary)
            assert plain is not None
            plain.update(summary, force=summary.played + summary.failed == plain.total)
            _print_failure(console, outcome)

        summary = run_season(season, executor, on_line, note, start_line, key=key)
    console.print(f"played {summary.played}, failed {summary.failed}, "
                  f"{summary.already_done} were already done; store "
                  f"{escape(str(season.store_path))}", highlight=False)
    store = SeasonStore(season.store_path, read_only=True)
    try:
        _print_standings(season, store, console)
    finally:
        store.close()
    return 1 if summary.failed else 0


def _cluster_tls(args: argparse.Namespace, season: Season) -> ClusterTLS | None:
    """The TLS files from the command line (all three) or else from the season file."""
    from arena.league.cluster import ClusterSecurityError, ClusterTLS

    given = [args.tls_ca_file, args.tls_cert, args.tls_key]
    if any(given):
        if not all(given):
            raise ClusterSecurityError("--tls-ca-file, --tls-cert and --tls-key go together")
        return ClusterTLS(*(Path(p) for p in given))
    return ClusterTLS(*season.cluster_tls) if season.cluster_tls else None


def _print_failure(console: Console, outcome: JobOutcome) -> None:
    from rich.markup import escape

    if outcome.error and outcome.stop is None:
        last = outcome.error.strip().splitlines()[-1]
        console.print(f"[red]match {outcome.match_id} failed:[/red] {escape(last)}",
                      highlight=False)


def separation_sentences(groups: list[list[str]]) -> list[str]:
    """In words: which entrants the data cannot separate."""
    sentences = []
    for names in groups:
        listed = ", ".join(names[:-1]) + f" and {names[-1]}"
        sentences.append(f"{listed} cannot be separated by this season's results: their "
                         "rank intervals overlap, so they share a rank.")
    return sentences


def _print_standings(season: Season, store: SeasonStore, console: Console) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from arena.league.driver import season_ratings

    ratings = season_ratings(store)
    names = {int(str(e["id"])): escape(f"{e['name']} {e['version']}")  # a bot names itself
             for e in store.entrants()}
    failed = store.matches(status="failed")
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
    if failed:
        console.print(f"{len(failed)} match(es) failed and count for no one: "
                      "`arena season status` says why")
    console.print("live = the running TrueSkill rating (mu - 3 sigma, schedule order, draw "
                  f"probability {ratings.live.draw_probability:.2%} from the season's ties)")


# -- readers ------------------------------------------------------------------------------


def _season_status(args: argparse.Namespace) -> int:
    """How far the season is: matches done, failed, to play."""
    season = season_or_exit(args.season)
    if season is None:
        return 2
    try:
        with reading(season) as store:
            counts = store.counts()
            total = sum(counts.values())
            print(f"season {season.name}: {counts['done']} done, {counts['failed']} failed, "
                  f"{counts['scheduled']} to play, of {total}")
            extra = tiebreak_summary(store)
            if extra["matches"]:
                print(f"  tie-break stage: {extra['matches']} extra matches in "
                      f"{extra['batches']} batch(es), {extra['done']} done (counted above)")
            running = holder(season.folder)
            if running is not None:
                print(f"  being played now by `arena season run` ({running.describe()})")
            for match in store.matches():
                if match["status"] == "failed":
                    error = str(match["error"] or "").strip().splitlines()
                    print(f"  {match['match_id']} failed ({match['attempts']} attempt(s)): "
                          f"{error[-1] if error else ''}")
    except StoreMissing:
        print(f"season {season.name}: not started ({season.store_path} does not exist)")
        return 0
    except (StoreError, SeasonError) as error:
        return reader_errors(season, error)
    return 0


def _season_standings(args: argparse.Namespace) -> int:
    """The leaderboard from the results recorded so far."""
    from rich.console import Console

    season = season_or_exit(args.season)
    if season is None:
        return 2
    try:
        with reading(season) as store:
            _print_standings(season, store, Console())
    except (StoreError, SeasonError) as error:
        return reader_errors(season, error)
    return 0


def _whole(value: float) -> float | int:
    """Wins count ties as halves: a whole number is printed as one."""
    return int(value) if float(value).is_integer() else value


def _season_export(args: argparse.Namespace) -> int:
    """Results and ratings as CSV or JSON."""
    from arena.league.driver import leaderboard, season_ratings

    season = season_or_exit(args.season)
    if season is None:
        return 2
    try:
        with reading(season) as store:
            entrants = {int(str(e["id"])): e for e in store.entrants()}
            results = store.results()
            board = leaderboard(store)
            official = season_ratings(store).official
    except (StoreError, SeasonError) as error:
        return reader_errors(season, error)
    if args.format == "json":
        text = json.dumps({
            "season": season.name,
            "ratings": [{"bot": entrants[s.entrant_id]["name"],
                         "version": entrants[s.entrant_id]["version"],
                         "mu": s.mu, "sigma": s.sigma, "conservative": s.conservative,
                         "matches": s.matches, "wins": _whole(s.wins),
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
                         "bot": entrants[r.entrant_id]["name"],
                         "version": entrants[r.entrant_id]["version"], "place": r.place,
                         "score": r.score, "rounds_won": r.rounds_won,
                         "strikes": r.strikes, "disqualified": r.disqualified,
                         "faults": list(r.faults)} for r in results],
        }, indent=2) + "\n"
    else:
        rows: list[list[object]] = [["match_id", "seat", "bot", "version", "place", "score",
                                     "rounds_won", "strikes", "disqualified"]]
        for r in results:
            entrant = entrants[r.entrant_id]
            rows.append([r.match_id, r.seat, entrant["name"], entrant["version"], r.place,
                         r.score, r.rounds_won, r.strikes, int(r.disqualified)])
        text = export_csv(rows)
    if args.out:
        return _write_file(Path(args.out), text)
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (``| head``): quietly, as other tools do; stdout is pointed
        # at /dev/null so that Python's own flush at exit fails no more.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    return 0


def export_csv(rows: list[list[object]]) -> str:
    """``rows`` as CSV text, no cell a spreadsheet formula."""
    import io

    from arena.spreadsheet import safe_cell

    buffer = io.StringIO()
    csv.writer(buffer).writerows([safe_cell(cell) for cell in row] for row in rows)
    return buffer.getvalue()


def _write_file(target: Path, text: str) -> int:
    """Write ``text`` to ``target`` whole (a temporary file renamed), or say why not."""
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        partial.write_text(text, newline="")
        partial.replace(target)
    except OSError as error:
        with contextlib.suppress(OSError):
            partial.unlink()
        where = target.parent if not target.parent.is_dir() else target
        fix = ("create that folder first" if not target.parent.is_dir()
               else "choose a file you may write")
        return fail(f"{where}: cannot write the export ({error.strerror}); {fix}")
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
    try:
        store = SeasonStore(season.store_path)
    except StoreError as error:
        return fail(str(error), 1, "arena season reveal")
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
    run.add_argument("--parallelism", type=int,
                     help=f"matches at once, 1 to {MAX_PARALLELISM} (overrides the file)")
    run.add_argument("--cluster", metavar="ADDRESS",
                     help="run the matches on a Dask cluster: tls://head:8786 with the TLS "
                          "options below, or a local address such as tcp://127.0.0.1:8786")
    run.add_argument("--tls-ca-file", metavar="FILE",
                     help="CA certificate that signed the cluster's certificates")
    run.add_argument("--tls-cert", metavar="FILE", help="the driver's TLS certificate")
    run.add_argument("--tls-key", metavar="FILE", help="the driver's TLS private key")
    run.add_argument("--insecure-cluster", action="store_true",
                     help="allow a plain-TCP cluster on another machine (only on a network "
                          "private to the cluster: the scheduler runs any code it is sent)")
    add_trust_option(run)
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
