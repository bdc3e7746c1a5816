"""``arena view``: a match log's pages (match page and replay viewer), without a season."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def _view(args: argparse.Namespace) -> int:
    """Render match logs into HTML match and replay pages (with each seat's view, the
    faults and the time use), with an index of them; open the printed path in a browser."""
    from arena.report.matchpage import LogError, render_logs

    logs = [Path(name) for name in args.logs]
    out = Path(args.out) if args.out else logs[0].parent / "html"
    try:
        pages = render_logs(logs, out, title="arena view")
    except LogError as error:
        print(f"arena view: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"arena view: {out}: cannot write the pages ({error.strerror}); give "
              "--out a folder you may write", file=sys.stderr)
        return 1
    for page in pages:
        print(page)
    print(f"index: {out / 'index.html'}")
    return 0


def register(commands: Any) -> None:
    view = commands.add_parser("view", help="render match logs as HTML match and replay pages",
                               description=_view.__doc__)
    view.add_argument("logs", nargs="+", metavar="LOG")
    view.add_argument("--out", metavar="DIR",
                      help="folder for the pages (default: html/ beside the first log)")
    view.set_defaults(run=_view)
