"""``bot.toml``: what a bot folder declares about itself.

    name = "my-bot"                      # required
    version = "1.0"                      # required
    language = "go"                      # required: any name; known ones get their runtime
    run = ["./bot"]                      # required: argv, run in the bot folder
    author = "you"
    protocol = "grpc"                    # or "stdio-json" (JSON lines through the bridge)
    build = ["sh", "build.sh"]           # run once, sandboxed, offline, before the bot plays
    vendor = ["go", "mod", "vendor"]     # `arena vendor`: fetches dependencies into the folder
    runtimes = ["/usr/lib/jvm/temurin-25-jdk-amd64"]   # extra read-only system folders

Unknown fields are refused with the closest known one ("did you mean"): a misspelt ``biuld``
must not silently leave a bot unbuilt. ``name``, ``version`` and ``author`` are any text
but control characters and direction marks (``arena.text``): they are shown in organisers'
terminals and on pages.
"""

from __future__ import annotations

import difflib
import fnmatch
import hashlib
import os
import re
import stat
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from arena.formats import toml_table
from arena.rules.options import VARIANTS
from arena.sandbox.trees import MOST_TREE_DEPTH, MOST_TREE_PATH_BYTES, path_problem
from arena.text import name_problem, unshowable

KNOWN_LANGUAGES = ("python", "javascript", "typescript", "cpp", "c", "go", "rust", "java",
                   "kotlin", "stdio-json", "other")
"""Languages whose runtime the sandbox shows a bot without being told (``arena.sandbox.
runtimes``); any other name is accepted too, and its bot declares its ``runtimes``."""
FIELDS = ("name", "version", "author", "language", "protocol", "run", "build", "vendor",
          "runtimes", "variants")
MAX_RUNTIMES = 16
MOST_COMMAND_BYTES = 65_536
"""A command's words together (``run``, ``build``, ``vendor``; UTF-8, a byte between
words): generous for any real command (a long one goes in a script in the bot folder), far
below what a launch carries (its plan is one socket message of a couple of hundred KiB:
a 1.4 MB ``run`` raised "Message too long" out of ``arena check``; Linux itself takes
2 MiB of arguments and environment)."""
MOST_MANIFEST_BYTES = 1 << 20
"""A bot.toml's size, at most: a manifest is a dozen lines, and parsing 30 MB of TOML (an
upload packs it into 30 KB) held a league server's interpreter for 7.7 s."""
MOST_SOURCE_BYTES = 512 << 20
"""A bot's sources (what its content hash covers, a build copies and an upload packs),
at most, every file at its full size: past any real bot's (a fat jar is tens of MiB) and
under what hashing and copying may cost a season's start."""
MOST_SOURCE_ENTRIES = 100_000
"""A bot's sources' files and folders, at most."""
MOST_GITIGNORE_LINES = 1000
MOST_GITIGNORE_BYTES = 64 << 10
MOST_VERSION_CHARACTERS = 64
MOST_AUTHOR_CHARACTERS = 200
MOST_PATH_BYTES = 4096
"""A runtime folder's path, at most (Linux's PATH_MAX)."""
_LANGUAGE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9+#._-]{0,39}")


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
    """The house rules (docs/rules.md §21-§32) the bot supports; none: official matches only."""
    vendor: tuple[str, ...] = ()
    """Fetches the bot's dependencies into its folder, with the network, on the author's
    machine (``arena vendor``); never run by the referee."""
    runtimes: tuple[str, ...] = ()
    """Read-only host folders the bot's language needs beyond its automatic runtime; the
    sandbox checks each (``arena.sandbox.runtimes.declared_folders``) before binding it."""

    origin: Path | None = None
    """The author's own folder when ``folder`` is a copy of it (its build's output, or its
    sources as they play): what messages about the bot name."""

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}"

    @property
    def home(self) -> Path:
        """The folder the bot's author knows it by (see ``origin``)."""
        return self.origin or self.folder

    def content_hash(self) -> str:
        """A short hash of every file in the folder, so a changed bot is a new version (the
        season store's and the cluster's name for it)."""
        digest = hashlib.sha256()
        for entry in source_entries(self.folder):
            # fsencode: a name that is not UTF-8 is hashed as its bytes (the same bytes
            # as encode() for every other name)
            if entry.kind == "file":
                digest.update(os.fsencode(entry.relative) + b"\0")
                for chunk in file_chunks(self.folder, entry):
                    digest.update(chunk)
                digest.update(b"\0")
            elif entry.kind == "link":
                digest.update(os.fsencode(entry.relative) + b"\0->" + entry.target + b"\0")
        return digest.hexdigest()[:16]

    def content_digest(self) -> str:
        """The full SHA-256 of the bot's sources, unambiguously encoded (each entry's kind,
        path, mode and length): the key of its build output, which must not collide."""
        digest = hashlib.sha256()
        for entry in source_entries(self.folder, modes=True):
            size = len(entry.target) if entry.kind in ("dir", "link") else entry.size
            digest.update(f"{entry.kind}\0".encode() + os.fsencode(entry.relative)
                          + f"\0{size}\0".encode())
            if entry.kind in ("dir", "link"):
                digest.update(entry.target)
            else:
                for chunk in file_chunks(self.folder, entry):
                    digest.update(chunk)
        return digest.hexdigest()


@dataclass(frozen=True)
class SourceEntry:
    """One entry of a bot's sources (``source_entries``); a file's content is read by
    ``file_chunks`` or ``read_source``, a piece at a time, never all files at once."""

    relative: str
    kind: str
    """"dir", "link", "file", or "exec" (an executable file, when modes are asked for)."""
    target: bytes = b""
    """A link's target."""
    size: int = 0
    """A file's size when listed: reading it finds the same or refuses."""


def _ignoring(patterns: list[str]) -> re.Pattern[str]:
    """The patterns as one expression, compiled once: matched pattern by pattern, 40,000
    of them thrash ``fnmatch``'s cache and take 470 s for one upload."""
    return re.compile("|".join(fnmatch.translate(p) for p in patterns))


def _is_ignored(parts: tuple[str, ...], ignoring: re.Pattern[str]) -> bool:
    return any(ignoring.match(part) for part in parts)


def source_entries(folder: Path, *, modes: bool = False) -> list[SourceEntry]:
    """A bot folder's sources, sorted by path, without following links, leaving out what
    ``ignored_patterns`` names. ``modes``: a file's kind says whether it is executable.
    ManifestError for what a bot folder must not hold (see ``check_folder``), and past
    ``MOST_SOURCE_BYTES`` or ``MOST_SOURCE_ENTRIES``: a file's size is what it reads as,
    so a sparse file of a terabyte, a few KiB on disk, is a terabyte to hash and copy."""
    patterns = _ignoring(ignored_patterns(folder))
    found: list[SourceEntry] = []
    total = 0
    for root, directories, files, root_fd in os.fwalk(folder, follow_symlinks=False):
        relative_root = Path(root).relative_to(folder)
        directories[:] = sorted(d for d in directories
                                if not _is_ignored((*relative_root.parts, d), patterns))
        for name in sorted([*directories, *files]):
            parts = (*relative_root.parts, name)
            if _is_ignored(parts, patterns):
                continue
            relative = "/".join(parts)
            _check_path(folder, relative)  # before the walk goes deeper
            if len(found) >= MOST_SOURCE_ENTRIES:
                raise ManifestError(f"{folder}: more than {MOST_SOURCE_ENTRIES:,} files and "
                                    "folders; list what is not the bot's in its .gitignore")
            status = os.stat(name, dir_fd=root_fd, follow_symlinks=False)
            if stat.S_ISDIR(status.st_mode):
                found.append(SourceEntry(relative, "dir"))
            elif stat.S_ISLNK(status.st_mode):
                found.append(SourceEntry(relative, "link", os.readlink(
                    name, dir_fd=root_fd).encode("utf-8", "surrogateescape")))
            elif stat.S_ISREG(status.st_mode):
                total += status.st_size
                if total > MOST_SOURCE_BYTES:
                    raise ManifestError(
                        f"{folder}: its files come to more than {MOST_SOURCE_BYTES >> 20:,} "
                        f"MiB (at {relative}, counting every file's full size, sparse or "
                        "not); list what is not the bot's in its .gitignore")
                executable = modes and bool(status.st_mode & 0o111)
                found.append(SourceEntry(relative, "exec" if executable else "file",
                                         size=status.st_size))
            else:
                raise ManifestError(f"{folder}: {relative} is not a file, folder or link "
                                    "(a pipe, socket or device); a bot folder holds only "
                                    "files, folders and links within it")
    found.sort(key=lambda entry: entry.relative)
    return found


def file_chunks(folder: Path, entry: SourceEntry) -> Iterator[bytes]:
    """A source file's content, a MiB at a time. Opened below ``folder`` one name at a
    time, never through a link, and refused (ManifestError) unless it is still the regular
    file of the listed size: the folder may change after it was listed."""
    descriptor = _open_below(folder, entry.relative)
    with open(descriptor, "rb") as file:
        status = os.fstat(file.fileno())
        if not stat.S_ISREG(status.st_mode) or status.st_size != entry.size:
            raise ManifestError(f"{folder}: {entry.relative} changed while being read")
        left = entry.size
        while left > 0:
            chunk = file.read(min(left, 1 << 20))
            if not chunk:
                break
            left -= len(chunk)
            yield chunk
        if left or file.read(1):
            raise ManifestError(f"{folder}: {entry.relative} changed while being read")


def read_source(folder: Path, entry: SourceEntry) -> bytes:
    """A source file's whole content (see ``file_chunks``)."""
    return b"".join(file_chunks(folder, entry))


def _open_below(folder: Path, relative: str) -> int:
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    parts = relative.split("/")
    opened: list[int] = []
    try:
        directory = os.open(folder, flags | os.O_DIRECTORY)
        opened.append(directory)
        for part in parts[:-1]:
            directory = os.open(part, flags | os.O_DIRECTORY, dir_fd=directory)
            opened.append(directory)
        # O_NONBLOCK: a pipe put in the file's place must not block the open
        return os.open(parts[-1], flags | os.O_NONBLOCK, dir_fd=directory)
    except OSError as error:
        raise ManifestError(f"{folder}: {relative} changed while being read "
                            f"({error.strerror})") from None
    finally:
        for descriptor in opened:
            os.close(descriptor)


def _check_path(folder: Path, relative: str) -> None:
    problem = path_problem(relative)
    if problem:
        raise ManifestError(f"{folder}: the bot folder holds {problem}; a bot folder goes at "
                            f"most {MOST_TREE_DEPTH} folders deep, its paths at most "
                            f"{MOST_TREE_PATH_BYTES:,} bytes")


def check_folder(folder: Path) -> None:
    """ManifestError (one clear line) for a bot folder holding a link that leads nowhere or
    out of the folder, or a special file (a pipe, socket or device): copying, hashing,
    building or shipping the bot would otherwise follow it out of the folder or block on
    it."""
    root = os.path.realpath(folder)
    for directory, directories, files, directory_fd in os.fwalk(folder,
                                                                 follow_symlinks=False):
        for name in [*directories, *files]:
            relative = os.path.relpath(os.path.join(directory, name), folder)
            _check_path(folder, relative)  # before the walk goes deeper
            status = os.stat(name, dir_fd=directory_fd, follow_symlinks=False)
            if stat.S_ISLNK(status.st_mode):
                target = os.readlink(name, dir_fd=directory_fd)
                resolved = os.path.realpath(os.path.join(directory, name))
                if resolved != root and not resolved.startswith(root + os.sep):
                    raise ManifestError(
                        f"{folder}: {relative} is a symbolic link to {target}, outside the "
                        "bot folder; a bot folder must be self-contained: copy the file in")
                if not os.path.exists(resolved):
                    raise ManifestError(
                        f"{folder}: {relative} is a symbolic link to {target}, which does "
                        "not exist; remove it or make it point at a file in the folder")
            elif not (stat.S_ISDIR(status.st_mode) or stat.S_ISREG(status.st_mode)):
                raise ManifestError(
                    f"{folder}: {relative} is not a file, folder or link (a pipe, socket or "
                    "device); a bot folder holds only files, folders and links within it")


def ignored_patterns(folder: Path) -> list[str]:
    """What is not part of a bot's sources: caches, and what its top-level .gitignore names
    (``node_modules/``, ``build/``...): left out of content hashes and build copies."""
    patterns = ["__pycache__", ".arena-built", ".git"]
    try:
        with (folder / ".gitignore").open("rb") as ignore:
            text = ignore.read(MOST_GITIGNORE_BYTES + 1)
    except OSError:
        text = b""
    lines = text.decode("utf-8", "replace").splitlines()
    if len(text) > MOST_GITIGNORE_BYTES or len(lines) > MOST_GITIGNORE_LINES:
        raise ManifestError(f"{folder}: its .gitignore is longer than "
                            f"{MOST_GITIGNORE_LINES:,} lines or {MOST_GITIGNORE_BYTES >> 10} "
                            "KiB; a bot's needs a few")
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
    if any("\0" in word for word in value):
        raise ManifestError(f"{where}: field '{key}' holds a NUL character, which no "
                            "command's word can carry")
    size = sum(len(word.encode()) + 1 for word in value)
    if size > MOST_COMMAND_BYTES:
        raise ManifestError(f"{where}: field '{key}' is {size:,} bytes long; a command is at "
                            f"most {MOST_COMMAND_BYTES:,} (put a long one in a script in the "
                            "bot folder)")
    return tuple(value)


def _unknown_fields(data: dict[str, object], where: str) -> None:
    for key in data:
        if key not in FIELDS:
            close = difflib.get_close_matches(key, FIELDS, n=1, cutoff=0.6)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise ManifestError(f"{where}: unknown field '{key}'{hint}; the fields are "
                                f"{', '.join(FIELDS)}")


def _runtimes(data: dict[str, object], where: str) -> tuple[str, ...]:
    """The declared runtime folders, checked for form only (absolute, normalised); whether
    the sandbox may show them is decided when it starts the bot."""
    value = data.get("runtimes", [])
    if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        raise ManifestError(f"{where}: field 'runtimes' must be a list of absolute folder "
                            "paths, e.g. [\"/usr/lib/jvm/java-17-openjdk-amd64\"]")
    if len(value) > MAX_RUNTIMES:
        raise ManifestError(f"{where}: field 'runtimes' lists {len(value)} folders; at most "
                            f"{MAX_RUNTIMES}")
    for entry in value:
        path = PurePosixPath(entry)
        if (not path.is_absolute() or ".." in path.parts or "\0" in entry
                or len(entry.encode()) > MOST_PATH_BYTES):
            raise ManifestError(f"{where}: field 'runtimes': {entry!r} is not an absolute "
                                "folder path without '..'")
    return tuple(value)


def load_manifest(folder: Path | str) -> BotManifest:
    """Read and check ``folder/bot.toml``."""
    folder = Path(folder).resolve()
    path = folder / "bot.toml"
    if not folder.is_dir():
        raise ManifestError(f"{folder}: no such bot folder")
    if path.is_symlink() or not path.is_file():
        raise ManifestError(f"{path}: missing; a bot folder needs a bot.toml manifest "
                            "(a file, not a link)")
    check_folder(folder)
    source_entries(folder)  # within the sources' limits, before anything hashes or copies them
    with path.open("rb") as manifest:
        raw = manifest.read(MOST_MANIFEST_BYTES + 1)
    if len(raw) > MOST_MANIFEST_BYTES:
        raise ManifestError(f"{path}: more than {MOST_MANIFEST_BYTES:,} bytes; a bot.toml "
                            "is a dozen lines")
    try:
        data = toml_table(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ManifestError(f"{path}: not valid TOML: {error}") from None
    _unknown_fields(data, str(path))
    for key in ("name", "version", "language"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise ManifestError(f"{path}: field '{key}' must be a non-empty string")
    if not isinstance(data.get("author", ""), str):
        raise ManifestError(f"{path}: field 'author' must be a string")
    problem = name_problem(data["name"])
    if problem:
        raise ManifestError(f"{path}: field 'name' {problem}; a bot's name is shown beside "
                            "the others' and must read as itself")
    for key, most in (("version", MOST_VERSION_CHARACTERS), ("author", MOST_AUTHOR_CHARACTERS)):
        if len(data.get(key, "")) > most:
            raise ManifestError(f"{path}: field '{key}' is {len(data[key]):,} characters "
                                f"long; at most {most} (it is shown in tables and names "
                                "pages)")
        hidden = unshowable(data.get(key, ""))
        if hidden:
            raise ManifestError(f"{path}: field '{key}' holds {hidden}; a name is shown in "
                                "terminals and pages, so it may hold no control character "
                                "(an escape sequence, a line break) nor any that reverses "
                                "the text's direction")
        problem = name_problem(data[key], most) if data.get(key) else None
        if problem:  # blank, invisible, piled-up marks, mixed scripts
            raise ManifestError(f"{path}: field '{key}' {problem}; it is shown beside the "
                                "bot's name and must read as itself")
    language = data["language"].lower()
    if not _LANGUAGE_NAME.fullmatch(language):
        raise ManifestError(f"{path}: field 'language' is {data['language']!r}; give the "
                            "language's name (letters, digits, + # . _ -; e.g. \"ruby\"); "
                            f"these get their runtime automatically: {', '.join(KNOWN_LANGUAGES)}")
    protocol = data.get("protocol", "grpc")
    if protocol not in ("grpc", "stdio-json"):
        raise ManifestError(f"{path}: field 'protocol' must be \"grpc\" or \"stdio-json\"")
    return BotManifest(
        folder=folder, name=data["name"], version=data["version"],
        language=language, run=_argv(data, "run", str(path), True),
        author=str(data.get("author", "")), build=_argv(data, "build", str(path), False),
        protocol=str(protocol), variants=_variants(data, path),
        vendor=_argv(data, "vendor", str(path), False), runtimes=_runtimes(data, str(path)),
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
