"""``arena report`` (render a season's site) and ``arena serve`` (serve it on localhost)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.cli.common import port_number
from arena.cli.season import reader_errors, reading, season_or_exit
from arena.league.season import SeasonError, overlap
from arena.league.store import SeasonStore, StoreError, StoreMissing


def _report(args: argparse.Namespace) -> int:
    """Render a season's standings, matches and replays into a static HTML site."""
    target = Path(args.season)
    if target.suffix == ".sqlite":
        store_path, out = target, Path(args.out or Path("reports") / target.parent.name)
        if _among_the_seasons_files(out, store_path, ()):
            return 2
        try:
            SeasonStore(store_path, read_only=True).close()
        except StoreMissing:
            print(f"arena report: no results yet ({store_path} does not exist); run "
                  "`arena season run` first", file=sys.stderr)
            return 1
        except StoreError as error:
            print(f"arena report: {error}", file=sys.stderr)
            return 1
    else:
        season = season_or_exit(args.season)
        if season is None:
            return 2
        store_path, out = season.store_path, Path(args.out) if args.out else season.report
        if _among_the_seasons_files(out, store_path, season.entrants):
            return 2
        try:
            with reading(season):  # the store belongs to this season file, undamaged
                pass
        except (StoreError, SeasonError) as error:
            return reader_errors(season, error, "arena report")
    from concurrent.futures.process import BrokenProcessPool

    from arena.report.render import render_site  # after the checks: it loads the ratings' numpy

    started = time.perf_counter()
    try:
        summary = render_site(store_path, out)
    except StoreError as error:
        print(f"arena report: {error}", file=sys.stderr)
        return 1
    except BrokenProcessPool:
        print("arena report: a helper process of the render died (killed, or out of "
              "memory); nothing written is lost (each file is replaced whole): run "
              "`arena report` again", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"arena report: {error.filename or out}: cannot write the site "
              f"({error.strerror}); choose an output folder you may write (--out)",
              file=sys.stderr)
        return 1
    print(f"rendered {summary.pages} pages into {out}/ in {time.perf_counter() - started:.1f} s "
          f"({summary.match_pages_rendered} matches rendered, {summary.match_pages_reused} "
          f"unchanged); open {out / 'index.html'} or run `arena serve {out}`")
    if summary.log_problems:
        listed = "; ".join(f"{p.match_id} log {p.kind} ({p.path})"
                           for p in summary.log_problems)
        print(f"arena report: {len(summary.log_problems)} match log(s) damaged or missing, "
              f"listed on the site (their results come from the store): {listed}; restore "
              "them from a backup", file=sys.stderr)
        return 1
    return 0


def _among_the_seasons_files(out: Path, store_path: Path, entrants: Sequence[Any]) -> bool:
    """Whether ``out`` overlaps the season's output folder or a bot's (said on stderr): the
    site would be written among the season's own files and published with them (the check
    a season file's folders get)."""
    taken = [("the season's output folder", store_path.parent.resolve()),
             *((f"the bot folder of {bot.name}", bot.folder.resolve()) for bot in entrants)]
    for what, where in taken:
        if overlap(out.resolve(), where):
            print(f"arena report: {out} and {what} ({where}) overlap: the site would be "
                  "written among the season's own files (its store, with the season's key) "
                  "and published with them; choose another folder (--out)", file=sys.stderr)
            return True
    return False


def _serve(args: argparse.Namespace) -> int:
    """Serve a rendered site on localhost."""
    from arena.report.serve import make_server, season_sites

    directory = Path(args.directory)
    if not (directory / "index.html").exists():
        candidates = season_sites(directory)
        if len(candidates) == 1:
            directory = candidates[0]
        elif not candidates:
            print(f"arena serve: no index.html in {directory}; render one with `arena report`",
                  file=sys.stderr)
            return 1
        # Several seasons: / lists them, each served from its folder.
    try:
        server = make_server(directory, args.port)
    except OSError as error:  # a port in use, or one this user may not listen on
        print(f"arena serve: cannot listen on 127.0.0.1:{args.port} ({error.strerror}); "
              "choose another --port", file=sys.stderr)
        return 1
    print(f"serving {directory} at http://127.0.0.1:{server.server_port}/ (Ctrl-C to stop)",
          flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def register(commands: Any) -> None:
    report = commands.add_parser("report", help="render a season into HTML",
                                 description=_report.__doc__)
    report.add_argument("season", metavar="SEASON",
                        help="the season file (or its season.sqlite store)")
    report.add_argument("--out", help="output folder (default: the season's [output] report)")
    report.set_defaults(run=_report)

    serve = commands.add_parser("serve", help="serve a rendered site on localhost",
                                description=_serve.__doc__)
    serve.add_argument("directory", nargs="?", default="reports", metavar="DIR")
    serve.add_argument("--port", type=port_number, default=8000,
                       help="listen on this port (default 8000; 0: any free port)")
    serve.set_defaults(run=_serve)
