"""Bot archives from authors: packed by ``arena submit``, checked and unpacked here.

An upload is hostile until checked. The archive (a gzip-compressed tar) is read as a
stream, never trusting what its headers say: the bytes decompressed are counted as they
come and the read stops past the cap (a decompression bomb, or a tar header that claims a
huge member, goes no further than the cap); only regular files and folders are accepted,
with relative names free of ``..`` (no absolute paths, links, hard links, devices or
fifos); the number of entries is capped; the archive must hold a ``bot.toml`` at its top
that loads. Members are written with ``O_EXCL | O_NOFOLLOW`` into a fresh folder, which
is then renamed into place under the sources' SHA-256: what is stored is never changed
again (the same sources submitted twice share the folder).
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import hashlib
import io
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from arena.sandbox.manifest import BotManifest, ManifestError, load_manifest, source_entries
from arena.sandbox.trees import MOST_TREE_DEPTH, MOST_TREE_PATH_BYTES, path_problem, remove_tree

CHUNK = 64 * 1024
FOLDER_COST = 4096
"""What a folder costs against ``max_unpacked_bytes`` (a block of its file system)."""
BOT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
"""A bot's name on a league: it names files (its logs) and pages, so nothing else."""
LABEL_LENGTH = 40


class UploadRefused(Exception):
    """An archive that is not accepted; ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class Caps:
    max_bytes: int
    max_unpacked_bytes: int
    max_files: int


@dataclass(frozen=True)
class Unpacked:
    manifest: BotManifest
    content_hash: str
    archive_sha256: str


class _Budget(io.RawIOBase):
    """The decompressed stream, refused once more than ``limit`` bytes came out of it."""

    def __init__(self, source: io.BufferedIOBase, limit: int) -> None:
        self.source = source
        self.limit = limit
        self.used = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        wanted = min(len(buffer), self.limit - self.used + 1)
        try:
            data = self.source.read(wanted)
        except (OSError, EOFError, zlib.error) as error:
            raise UploadRefused(422, f"the archive is not a valid .tar.gz ({error})") from None
        self.used += len(data)
        if self.used > self.limit:
            raise UploadRefused(413, f"the archive unpacks to more than {self.limit} bytes "
                                "(max_unpacked_bytes)")
        buffer[:len(data)] = data
        return len(data)


UNPACK_CPU_SECONDS = 20
"""CPU an upload's unpacking may take, in its child process: a real one takes a second."""
UNPACK_WALL_SECONDS = 60
UNPACK_MEMORY_BYTES = 1 << 30
_DIGEST = re.compile(r"[0-9a-f]{64}")


def unpack_isolated(archive: bytes, caps: Caps, store: Path,
                    cpu_seconds: int = UNPACK_CPU_SECONDS) -> Unpacked:
    """``unpack`` in a child process under a CPU, memory and time limit: reading a hostile
    archive must not hold the server. A PAX header of 80,000 digits holds Python 3.11.7's
    ``tarfile`` (CVE-2024-6232, its regex quadratic in the header) and the GIL with it for
    12 s, every page waiting; 40,000 ``.gitignore`` patterns take 470 s.
    The child's work folder is made and removed here, whatever becomes of the child."""
    store.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".upload-", dir=store))
    try:
        try:
            done = subprocess.run(
                [sys.executable, "-m", "arena.server.uploads", str(store), str(work),
                 str(caps.max_bytes), str(caps.max_unpacked_bytes), str(caps.max_files),
                 str(cpu_seconds)],
                input=archive, capture_output=True, timeout=UNPACK_WALL_SECONDS, check=False)
        except subprocess.TimeoutExpired:
            raise UploadRefused(422, f"the archive took more than {UNPACK_WALL_SECONDS} s "
                                "to unpack") from None
        try:
            answer = json.loads(done.stdout)
        except ValueError:
            answer = None
        if done.returncode == -signal.SIGXCPU:
            raise UploadRefused(422, f"the archive took more than {cpu_seconds} s of CPU to "
                                "unpack")
        if done.returncode != 0 or not isinstance(answer, dict):
            if b"MemoryError" in done.stderr:
                raise UploadRefused(413, "the archive needed more than "
                                    f"{UNPACK_MEMORY_BYTES >> 20} MiB to unpack")
            raise UploadRefused(500, "the server could not unpack the archive (exit "
                                f"{done.returncode}); try again")
        if not answer.get("ok"):
            raise UploadRefused(int(answer["status"]), str(answer["reason"]))
        content_hash = str(answer["content_hash"])
        if not _DIGEST.fullmatch(content_hash):
            raise UploadRefused(500, "the server could not unpack the archive; try again")
        return Unpacked(load_manifest(store / content_hash), content_hash,
                        hashlib.sha256(archive).hexdigest())
    finally:
        remove_tree(work)


ABANDONED_SECONDS = 600
"""An upload's work folder or row this old belongs to no upload in progress (one takes
at most ``UNPACK_WALL_SECONDS``): a server killed while unpacking left it."""


def sweep_uploads(store: Path) -> int:
    """Remove the work folders of uploads a killed server left (233 MB of them in one
    measured case); how many."""
    swept = 0
    cutoff = time.time() - ABANDONED_SECONDS
    with contextlib.suppress(FileNotFoundError):
        for entry in os.scandir(store):
            if (entry.name.startswith(".upload-") and entry.is_dir(follow_symlinks=False)
                    and entry.stat(follow_symlinks=False).st_mtime < cutoff):
                remove_tree(Path(entry.path))
                swept += 1
    return swept


def _unpack_child() -> int:
    """``python -m arena.server.uploads STORE WORK MAX_BYTES MAX_UNPACKED MAX_FILES CPU``,
    the archive on stdin: ``unpack``'s outcome as one JSON object on stdout."""
    store, work, max_bytes, max_unpacked, max_files, cpu = sys.argv[1:7]
    resource.setrlimit(resource.RLIMIT_CPU, (int(cpu), int(cpu) + 1))
    resource.setrlimit(resource.RLIMIT_AS, (UNPACK_MEMORY_BYTES, UNPACK_MEMORY_BYTES))
    archive = sys.stdin.buffer.read(int(max_bytes) + 1)  # one more: unpack refuses it
    try:
        unpacked = unpack(archive, Caps(int(max_bytes), int(max_unpacked), int(max_files)),
                          Path(store), Path(work))
        answer: dict[str, object] = {"ok": True, "content_hash": unpacked.content_hash}
    except UploadRefused as refused:
        answer = {"ok": False, "status": refused.status, "reason": refused.reason}
    sys.stdout.write(json.dumps(answer))
    return 0


def _member_path(member: tarfile.TarInfo) -> PurePosixPath:
    name = member.name
    path = PurePosixPath(name)
    if not name or "\0" in name:
        raise UploadRefused(422, f"the archive has an entry with an empty name: {name!r}")
    if path.is_absolute() or name.startswith("/"):
        raise UploadRefused(422, f"the archive has an absolute path: {name}")
    if ".." in path.parts:
        raise UploadRefused(422, f"the archive has a path with '..': {name}")
    if not name.isprintable():  # a control character, or a name that is not UTF-8
        raise UploadRefused(422, f"the archive has a path that is not printable UTF-8 text: "
                            f"{name!r}")
    problem = path_problem(name)
    if problem:
        raise UploadRefused(422, f"the archive has {problem}; a bot's folder goes at most "
                            f"{MOST_TREE_DEPTH} folders deep, its paths at most "
                            f"{MOST_TREE_PATH_BYTES:,} bytes")
    parts = [p for p in path.parts if p != "."]
    if not parts:
        return PurePosixPath(".")
    return PurePosixPath(*parts)


def _kind_refused(member: tarfile.TarInfo) -> str | None:
    if member.issym():
        return f"a symbolic link ({member.name} -> {member.linkname})"
    if member.islnk():
        return f"a hard link ({member.name} -> {member.linkname})"
    if member.ischr() or member.isblk():
        return f"a device ({member.name})"
    if member.isfifo():
        return f"a fifo ({member.name})"
    if not (member.isreg() or member.isdir()):
        return f"a special entry ({member.name}, type {member.type!r})"
    return None


def unpack(archive: bytes, caps: Caps, store: Path, work: Path | None = None) -> Unpacked:
    """Check ``archive`` and store its sources under ``store/<sha256 of the sources>``;
    UploadRefused saying why not. ``work``: an empty folder under ``store`` to unpack in
    (made and removed here when None)."""
    if len(archive) > caps.max_bytes:
        raise UploadRefused(413, f"the archive is {len(archive)} bytes; the league accepts "
                            f"at most {caps.max_bytes} (max_bytes)")
    if not archive.startswith(b"\x1f\x8b"):
        raise UploadRefused(422, "not a gzip-compressed tar archive (.tar.gz); pack the bot "
                            "folder with `arena submit`")
    store.mkdir(parents=True, exist_ok=True)
    if work is None:
        work = Path(tempfile.mkdtemp(prefix=".upload-", dir=store))
    try:
        folder = work / "bot"
        folder.mkdir()
        _extract(archive, caps, folder)
        try:
            manifest = load_manifest(folder)
        except ManifestError as error:
            text = str(error).replace(str(folder), "the archive")
            raise UploadRefused(422, f"the archive's bot.toml: {text}") from None
        if not BOT_NAME.fullmatch(manifest.name):
            raise UploadRefused(422, f"the archive's bot.toml: name {manifest.name!r} must be "
                                "1 to 40 letters, digits, '.', '_' or '-', starting with a "
                                "letter or digit")
        if len(manifest.version) > LABEL_LENGTH or not manifest.version.isprintable():
            raise UploadRefused(422, "the archive's bot.toml: version must be at most "
                                f"{LABEL_LENGTH} printable characters")
        _keep_only_sources(folder)
        content_hash = manifest.content_digest()
        target = store / content_hash
        if not target.is_dir():
            _seal(folder)
            with contextlib.suppress(FileExistsError, OSError):
                os.rename(folder, target)  # atomic: a folder in place is whole
            if not target.is_dir():
                raise UploadRefused(500, "could not store the archive; try again")
        return Unpacked(load_manifest(target), content_hash,
                        hashlib.sha256(archive).hexdigest())
    finally:
        remove_tree(work)


def _keep_only_sources(folder: Path) -> None:
    """Remove what the sources' digest leaves out (``__pycache__``, what the archive's
    ``.gitignore`` names): the stored folder, shared by every upload of the same digest
    and run as it is by bots with no build step, then holds exactly what the digest covers
    (else an upload refused, or another author's, could leave compiled code or files that
    the next upload of the same sources would run). UploadRefused when bot.toml itself is
    left out."""
    try:
        covered = {entry.relative for entry in source_entries(folder)}
    except ManifestError as error:
        raise UploadRefused(422, str(error).replace(str(folder), "the archive")) from None
    if "bot.toml" not in covered:
        raise UploadRefused(422, "the archive's .gitignore leaves out bot.toml: a bot's "
                            "sources must include its bot.toml")
    for root, directories, files, root_fd in os.fwalk(folder, follow_symlinks=False):
        prefix = Path(root).relative_to(folder).parts
        for name in list(directories):
            if "/".join((*prefix, name)) not in covered:
                directories.remove(name)
                remove_tree(Path(root) / name)
        for name in files:
            if "/".join((*prefix, name)) not in covered:
                os.unlink(name, dir_fd=root_fd)


def _extract(archive: bytes, caps: Caps, folder: Path) -> None:
    budget = _Budget(gzip.GzipFile(fileobj=io.BytesIO(archive)),
                     caps.max_unpacked_bytes + 1024 * 1024)  # tar headers and padding
    entries = 0
    unpacked = 0
    try:
        stream = tarfile.open(fileobj=io.BufferedReader(budget, CHUNK), mode="r|")  # noqa: SIM115
        for member in stream:
            entries += 1
            if entries > caps.max_files:
                raise UploadRefused(413, f"the archive has more than {caps.max_files} "
                                    "entries (max_files)")
            refused = _kind_refused(member)
            if refused:
                raise UploadRefused(422, f"the archive holds {refused}; a bot archive holds "
                                    "only files and folders")
            relative = _member_path(member)
            if relative == PurePosixPath("."):
                continue
            parent_fd, created = _open_parents(folder, relative)
            # Folders the archive never listed cost an entry and a block each as well: 2,000
            # files 99 folders deep make 197,011 folders from 29 KB.
            entries += created
            unpacked += (created + member.isdir()) * FOLDER_COST
            if entries > caps.max_files:
                os.close(parent_fd)
                raise UploadRefused(413, f"the archive has more than {caps.max_files} "
                                    "entries, the folders its paths imply counted "
                                    "(max_files)")
            if unpacked > caps.max_unpacked_bytes:
                os.close(parent_fd)
                raise UploadRefused(413, "the archive unpacks to more than "
                                    f"{caps.max_unpacked_bytes} bytes, a folder counted "
                                    f"as {FOLDER_COST} (max_unpacked_bytes)")
            try:
                if member.isdir():
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(relative.name, 0o755, dir_fd=parent_fd)
                    continue
                source = stream.extractfile(member)
                assert source is not None
                try:
                    descriptor = os.open(relative.name, os.O_WRONLY | os.O_CREAT | os.O_EXCL
                                         | os.O_NOFOLLOW | os.O_CLOEXEC,
                                         0o755 if member.mode & 0o111 else 0o644,
                                         dir_fd=parent_fd)
                except FileExistsError:
                    raise UploadRefused(422, f"the archive holds {relative} twice") from None
                with open(descriptor, "wb") as output:
                    while chunk := source.read(CHUNK):
                        unpacked += len(chunk)
                        if unpacked > caps.max_unpacked_bytes:
                            raise UploadRefused(413, "the archive unpacks to more than "
                                                f"{caps.max_unpacked_bytes} bytes "
                                                "(max_unpacked_bytes)")
                        output.write(chunk)
            finally:
                os.close(parent_fd)
    except tarfile.TarError as error:
        raise UploadRefused(422, f"the archive is not a valid .tar.gz ({error})") from None
    except (EOFError, zlib.error, gzip.BadGzipFile) as error:
        raise UploadRefused(422, f"the archive is not a valid .tar.gz ({error})") from None
    except OSError as error:
        if error.errno in (errno.ENOSPC, errno.EDQUOT):
            raise UploadRefused(507, "the server's disk is full; try again later") from None
        raise UploadRefused(422, f"an entry of the archive cannot be stored "
                            f"({error.strerror})") from None
    if entries == 0:
        raise UploadRefused(422, "the archive is empty")


def _open_parents(folder: Path, relative: PurePosixPath) -> tuple[int, int]:
    """A descriptor of the folder that will hold ``relative``, reached one folder at a
    time without following links, and how many folders the archive did not list were
    created on the way."""
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    created = 0
    try:
        for part in relative.parts[:-1]:
            try:
                os.mkdir(part, 0o755, dir_fd=descriptor)
                created += 1
            except FileExistsError:
                pass
            try:
                child = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW,
                                dir_fd=descriptor)
            except NotADirectoryError:
                raise UploadRefused(422, f"the archive uses {part} as a file and a folder"
                                    ) from None
            os.close(descriptor)
            descriptor = child
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor, created


def _seal(folder: Path) -> None:
    """Folders 0755, files 0644 or 0755: readable by the bot's uid, written by nobody."""
    for root, directories, files in os.walk(folder):
        for name in directories:
            os.chmod(os.path.join(root, name), 0o755)
        for name in files:
            path = os.path.join(root, name)
            mode = os.lstat(path).st_mode
            os.chmod(path, 0o755 if mode & 0o111 else 0o644)
    os.chmod(folder, 0o755)


class TooLarge(ManifestError):
    """A bot folder that packs past a league's caps (found while packing, before the rest
    is read)."""


def pack(folder: Path, caps: Caps | None = None, leave_out: tuple[str, ...] = ()) -> bytes:
    """A bot folder as the .tar.gz ``arena submit`` uploads: its sources as
    ``arena.sandbox.manifest`` lists them (what .gitignore leaves out stays out), files
    and folders only, with normalised owners, times and modes (the same folder packs to
    the same bytes). With ``caps``, TooLarge as soon as the archive passes one of them,
    naming the folder's largest parts. ``leave_out``: top-level folders not packed (what
    the server fetches itself: ``arena.sandbox.fetch.left_out``)."""
    from arena.sandbox.manifest import check_folder, read_source, source_entries

    check_folder(folder)
    buffer = io.BytesIO()
    entries = unpacked = 0
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as compressed, \
            tarfile.open(fileobj=compressed, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for entry in source_entries(folder, modes=True):
            relative, kind = entry.relative, entry.kind
            if relative.split("/", 1)[0] in leave_out:
                continue
            info = tarfile.TarInfo(relative)
            info.mtime = 0
            if kind == "dir":
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                tar.addfile(info)
            elif kind == "link":
                raise ManifestError(f"{folder / relative}: a symbolic link; the league takes "
                                    "files and folders only (copy the file it points to)")
            else:
                data = read_source(folder, entry)
                info.size = len(data)
                info.mode = 0o755 if kind == "exec" else 0o644
                tar.addfile(info, io.BytesIO(data))
            entries += 1
            unpacked += FOLDER_COST if kind == "dir" else info.size
            if caps is not None:
                _within(folder, caps, entries, unpacked, buffer.tell())
    return buffer.getvalue()


def _within(folder: Path, caps: Caps, entries: int, unpacked: int, packed: int) -> None:
    past = (f"more than {caps.max_files:,} files and folders (max_files)"
            if entries > caps.max_files else
            f"more than {caps.max_unpacked_bytes:,} bytes of sources (max_unpacked_bytes)"
            if unpacked > caps.max_unpacked_bytes else
            f"more than {caps.max_bytes:,} bytes once packed (max_bytes)"
            if packed > caps.max_bytes else None)
    if past is not None:
        raise TooLarge(f"{folder}: {past}, past what the league takes; the largest parts: "
                       f"{largest_parts(folder)}")


def largest_parts(folder: Path, shown: int = 5) -> str:
    """The folder's largest top-level entries among its sources, with their sizes."""
    sizes: dict[str, int] = {}
    for entry in source_entries(folder):
        top, _, rest = entry.relative.partition("/")
        name = f"{top}/" if rest or entry.kind == "dir" else top
        sizes.setdefault(name, 0)
        if entry.kind != "dir":
            with contextlib.suppress(OSError):
                sizes[name] += (folder / entry.relative).lstat().st_size
    ranked = sorted(sizes.items(), key=lambda item: (-item[1], item[0]))[:shown]
    return ", ".join(f"{name} {_size(size)}" for name, size in ranked)


def _size(count: int) -> str:
    return (f"{count / 1e6:.1f} MB" if count >= 1e6 else f"{count / 1e3:.0f} kB"
            if count >= 1e3 else f"{count} bytes")


__all__ = ["Caps", "TooLarge", "Unpacked", "UploadRefused", "largest_parts", "pack",
           "sweep_uploads", "unpack", "unpack_isolated"]

if __name__ == "__main__":
    raise SystemExit(_unpack_child())
