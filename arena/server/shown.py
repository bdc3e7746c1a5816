"""What authors read of the server's work (build logs, check reports, their bots' stderr)
names no server path: the league's data folder, the arena package's folder, Python's
installation and the home folder are each replaced by a name, wherever they occur."""

from __future__ import annotations

import re
import sysconfig
from pathlib import Path

import arena

HOME = "~"
DATA = "<league data>"
PACKAGE = "<arena>"
PYTHON = "<python>"


class ServerPaths:
    """The server's paths and the names shown for them, longest first (a data folder in
    the home folder is named as the data folder)."""

    def __init__(self, data: Path) -> None:
        named: dict[str, str] = {}
        for path, name in ((data, DATA), (Path(arena.__file__).parent.parent, PACKAGE),
                           *((Path(p), PYTHON) for p in _python_paths()),
                           (Path.home(), HOME)):
            for spelling in {str(path), str(path.resolve())}:
                # "/" or a system folder such as /usr would mangle every other path.
                if spelling.count("/") >= 2 or spelling == str(Path.home()) != "/":
                    named.setdefault(spelling.rstrip("/"), name)
        self.named = dict(sorted(named.items(), key=lambda item: -len(item[0])))
        # A path only where it ends (so /root is not found in /rootfs).
        self.pattern = re.compile("(?:" + "|".join(map(re.escape, self.named))
                                  + r")(?![A-Za-z0-9_.-])") if self.named else None

    def mask(self, text: str) -> str:
        if self.pattern is None:
            return text
        return self.pattern.sub(lambda found: self.named[found.group(0)], text)


def _python_paths() -> list[str]:
    """Where this Python's standard library and packages are (a traceback names them)."""
    paths = sysconfig.get_paths()
    return sorted({paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")
                   if key in paths})
