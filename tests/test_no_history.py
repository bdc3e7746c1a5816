"""Code, docs and the README state what is true; the story of a change is in the commit
body and CHANGELOG.md. This test rejects the words that tell such a story."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WHERE = ("arena", "tests", "docs", "sample_bots", "docker")
SUFFIXES = {".py", ".md", ".html", ".js", ".css", ".toml", ".txt", ".cfg", ".yml",
            ".yaml", ".sh", ".cpp", ".h", ".go", ".rs", ".java", ".proto"}
HISTORY = re.compile(
    r"\bstop \d+\b"  # a stop of development ("stop 43")
    r"|\bfound (?:by|in|on) (?:an? )?(?:re-?)?(?:attack|review|CI)\b"
    r"|\bre-?attack\b"
    r"|\b(?:attack|code) review\b|\(review\b|\bby review\b"
    r"|\bsince (?:stop|issue)\b"
    r"|\bissue \d+\b",
    re.IGNORECASE)


def _texts() -> list[Path]:
    """The project's own files (what git tracks: no dependency or build output)."""
    listed = subprocess.run(["git", "ls-files", "README.md", "CONTRIBUTING.md", *WHERE],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout
    files = [ROOT / name for name in listed.splitlines()]
    return [path for path in files
            if path.suffix in SUFFIXES and path.is_file() and not path.is_symlink()
            and "uno_arena" not in path.parts[-3:-1] and path != Path(__file__).resolve()]


def test_no_history_in_code_docs_or_the_readme() -> None:
    found = []
    for path in _texts():
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if HISTORY.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}")
    assert not found, "history belongs in CHANGELOG.md:\n" + "\n".join(found)


def test_the_pattern_catches_what_it_should() -> None:
    for story in ("Since stop 42 the relay picks", "found by attack: a bot", "(review, stop 39)",
                  "Found by re-attack", "issue 22's view", "found in CI"):
        assert HISTORY.search(story), story
    for plain in ("the events since the last message", "a bot may stop reading",
                  "stop the season", "the issue tracker"):
        assert not HISTORY.search(plain), plain
