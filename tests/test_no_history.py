"""Code, docs and the README state what is true; the story of a change is in the commit
body and CHANGELOG.md. This test rejects the words that tell such a story."""

from __future__ import annotations

import re
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
    files = [ROOT / "README.md", ROOT / "CONTRIBUTING.md"]
    for top in WHERE:
        files += [path for path in (ROOT / top).rglob("*")
                  if path.suffix in SUFFIXES and path.is_file()
                  and "__pycache__" not in path.parts and "node_modules" not in path.parts
                  and "uno_arena" not in path.parts[-3:-1]]
    return [path for path in files if path != Path(__file__).resolve()]


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
