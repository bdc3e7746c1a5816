"""``bot.toml``: what a bot folder declares about itself."""

from __future__ import annotations

import difflib
import fnmatch
import hashlib
import tomllib
from dataclasses import dataclass
from pathlib import Path

from arena.rules.options import VARIANTS

LANGUAGES = ("python", "javascript", "cpp", "stdio-json", "other")


class ManifestError(ValueError):
    """A bot folder or manifest a user must fix; the message names the file and field."""


@dataclass(frozen=True)
class BotManifest:
    folder: Path
    name: str
    version: str
    language: str
    run: tuple[str, ...]
    author: str = ""
    build: tuple[str, ...] = ()
    protocol: str = "grpc"
    variants: tuple[str, ...] = ()
    """The house rules (RULES.md §21-§32) the bot supports; none: official matches only."""

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}"

    def content_hash(self) -> str:
        """A hash of every file in the folder, so a changed bot is a new version."""
        digest = hashlib.sha256()
        patterns = ignored_patterns(self.folder)
        for path in sorted(p for p in self.folder.rglob("*") if p.is_file()):
            parts = path.relative_to(self.folder).parts
            if any(fnmatch.fnmatch(part, p) for part in parts for p in patterns):
                continue
            digest.update("/".join(parts).encode() + b"\0" + path.read_bytes() + b"\0")
        return digest.hexdigest()[:16]


def ignored_patterns(folder: Path) -> list[str]:
    """What is not part of a bot's sources: caches, and what its top-level .gitignore names
    (``node_modules/``, ``build/``...): left out of content hashes and build copies."""
    patterns = ["__pycache__", ".arena-built", ".git"]
    try:
        lines = (folder / ".gitignore").read_text().splitlines()
    except OSError:
        lines = []
    for line in lines:
        line = line.strip()
        if line and not line.startswith(("#", "!")):
            patterns.append(line.strip("/"))
    return patterns


def _argv(data: dict[str, object], key: str, where: str, required: bool) -> tuple[str, ...]:
    value = data.get(key)
    if value is None:
        if required:
            raise ManifestError(f"{where}: missing field '{key}' (a list of strings, e.g. "
                                "[\"python3\", \"bot.py\"])")
        return ()
    if not (isinstance(value, list) and value and all(isinstance(v, str) for v in value)):
        raise ManifestError(f"{where}: field '{key}' must be a non-empty list of strings")
    return tuple(value)


def load_manifest(folder: Path | str) -> BotManifest:
    """Read and check ``folder/bot.toml``."""
    folder = Path(folder).resolve()
    path = folder / "bot.toml"
    if not folder.is_dir():
        raise ManifestError(f"{folder}: no such bot folder")
    if not path.is_file():
        raise ManifestError(f"{path}: missing; a bot folder needs a bot.toml manifest")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ManifestError(f"{path}: not valid TOML: {error}") from None
    for key in ("name", "version", "language"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise ManifestError(f"{path}: field '{key}' must be a non-empty string")
    if data["language"] not in LANGUAGES:
        raise ManifestError(f"{path}: field 'language' is {data['language']!r}; "
                            f"expected one of {', '.join(LANGUAGES)}")
    protocol = data.get("protocol", "grpc")
    if protocol not in ("grpc", "stdio-json"):
        raise ManifestError(f"{path}: field 'protocol' must be \"grpc\" or \"stdio-json\"")
    return BotManifest(
        folder=folder, name=data["name"], version=data["version"],
        language=data["language"], run=_argv(data, "run", str(path), True),
        author=str(data.get("author", "")), build=_argv(data, "build", str(path), False),
        protocol=str(protocol), variants=_variants(data, path),
    )


def _variants(data: dict[str, object], path: Path) -> tuple[str, ...]:
    """The optional ``variants`` list: known variant names, in rulebook order."""
    value = data.get("variants", [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ManifestError(f"{path}: field 'variants' must be a list of variant names, e.g. "
                            "[\"stacking\", \"seven_o\"]")
    for name in value:
        if name not in VARIANTS:
            close = difflib.get_close_matches(name, VARIANTS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ManifestError(f"{path}: field 'variants' names an unknown variant {name!r}"
                                f"{hint}; known: {', '.join(VARIANTS)}")
    return tuple(name for name in VARIANTS if name in value)
