"""Build output does not reach the host.

A hostile build step leaves behind whatever could make the referee (root) write, change or
follow something outside its tree: links to host files and folders (one named like a
marker the referee knows, ``.arena-built``), a pipe, a socket, a hard link, a link
where a folder was. The referee must pack only folders and regular files, never following
a link, and run the bot from a fresh folder the build never had access to; an entrant's
own folder with a link out of it, or a pipe, is refused with one clear line.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.cli import main
from arena.sandbox import ManifestError, SandboxLimits, load_manifest, prepare
from arena.sandbox.bubblewrap import BubblewrapLauncher
from arena.sandbox.build import BuildError, build_key
from arena.sandbox.manifest import MOST_SOURCE_BYTES, file_chunks, source_entries

BACKENDS = ["bubblewrap", "fallback"]

HOSTILE_BUILD = """
set -e
echo built > out.txt
ln -s {victim} .arena-built           # a link where a referee would write its marker
ln -s {private} linked-dir            # or a folder it would chmod as it walked
ln -s /etc/passwd passwd
ln -s / root-of-host
mkdir -p deep/er && ln -s {victim} deep/er/victim
mkfifo pipe
python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("sock")'
ln out.txt hard.txt                   # a hard link: just another copy of its content
chmod 777 deep out.txt
echo done
"""


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Path]:
    """Host files a hostile build would like the referee to write or change: a file only
    root may write, a folder only root may enter."""
    folder = Path(tempfile.mkdtemp(prefix="arena-build-host-"))
    (folder / "victim.txt").write_text("the original\n")
    (folder / "victim.txt").chmod(0o644)
    (folder / "private").mkdir(mode=0o700)
    folder.chmod(0o755)
    yield folder
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


def make_bot(folder: Path, build: str) -> Path:
    folder.mkdir(parents=True)
    folder.chmod(0o755)
    (folder / "bot.toml").write_text(
        'name = "hostile-build"\nversion = "1"\nlanguage = "other"\n'
        f'build = ["sh", "-c", {json.dumps(build)}]\nrun = ["sh", "-c", "cat out.txt"]\n')
    return folder


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("backend", BACKENDS)
def test_what_a_build_leaves_behind_never_reaches_the_host(tmp_path: Path, host: Path,
                                                           backend: str) -> None:
    victim, private = host / "victim.txt", host / "private"
    passwd = digest(Path("/etc/passwd"))
    source = make_bot(tmp_path / "bot", HOSTILE_BUILD.format(victim=victim, private=private))
    built = prepare(load_manifest(source), backend, SandboxLimits(), tmp_path / "logs",
                    trusted=True, cache=tmp_path / "cache")
    # The host is untouched: nothing written through a link, no mode changed.
    assert victim.read_text() == "the original\n"
    assert stat.S_IMODE(private.stat().st_mode) == 0o700
    assert digest(Path("/etc/passwd")) == passwd
    # The bot runs from a fresh folder of folders and regular files only, the referee's,
    # which no bot may write; what the build made is there, the rest was left out.
    folder = built.folder
    assert folder.parent == tmp_path / "cache"
    kinds = {}
    for root, directories, files in os.walk(folder):
        for name in [*directories, *files]:
            path = Path(root, name)
            status = path.lstat()
            kinds[str(path.relative_to(folder))] = stat.S_IFMT(status.st_mode)
            assert status.st_uid == os.getuid(), path
            assert not status.st_mode & 0o022, f"{path} is writable by others"
            if stat.S_ISREG(status.st_mode):
                assert status.st_nlink == 1, path
    assert set(kinds.values()) <= {stat.S_IFDIR, stat.S_IFREG}, kinds
    assert (folder / "out.txt").read_text() == "built\n"
    assert (folder / "hard.txt").read_text() == "built\n"
    for gone in (".arena-built", "linked-dir", "passwd", "root-of-host", "deep/er/victim",
                 "pipe", "sock"):
        assert gone not in kinds, gone
    assert (folder / "deep" / "er").is_dir()
    log = "".join(p.read_text() for p in (tmp_path / "logs" / "builds").glob("*.stderr.log"))
    assert "left out 7 symbolic link(s) and special file(s)" in log


NESTING_BUILD = """python3 -c "
import os
for _ in range({levels}):
    os.mkdir('{name}')
    os.chdir('{name}')
open('leaf', 'w').write('x')
"
"""


@pytest.mark.parametrize(("name", "levels", "message"), [
    ("a", 3000, "folders nested more than 100 deep"),
    ("b" * 250, 30, "a path longer than 2,048 bytes"),
], ids=["3,000 folders deep", "paths of 7,500 bytes"])
def test_a_build_leaving_a_tree_no_walk_takes_fails_cleanly(
        tmp_path: Path, name: str, levels: int, message: str) -> None:
    """A build may leave folders nested thousands deep, or paths longer than the kernel
    takes whole (a RecursionError and an ENAMETOOLONG traceback to a naive walk, the work
    folder left in the cache): the build fails with one clear reason, and nothing of it stays."""
    source = make_bot(tmp_path / "bot", NESTING_BUILD.format(levels=levels, name=name))
    cache = tmp_path / "cache"
    with pytest.raises(BuildError, match=message) as error:
        prepare(load_manifest(source), "bubblewrap", SandboxLimits(), tmp_path / "logs",
                trusted=True, cache=cache)
    assert "\n" not in str(error.value)
    assert [p.name for p in cache.iterdir() if not p.name.endswith(".lock")] == []


def test_a_build_is_reused_across_seasons_by_its_key(tmp_path: Path) -> None:
    """A second season (another output folder) reuses the build: its command does not run
    again (no build log there); a changed bot is built anew."""
    source = make_bot(tmp_path / "bot", "echo built > out.txt")
    first = prepare(load_manifest(source), "bubblewrap", SandboxLimits(), tmp_path / "one",
                    cache=tmp_path / "cache")
    second = prepare(load_manifest(source), "bubblewrap", SandboxLimits(), tmp_path / "two",
                     cache=tmp_path / "cache")
    assert second.folder == first.folder
    assert list((tmp_path / "one" / "builds").glob("*.stdout.log"))
    assert not (tmp_path / "two" / "builds").exists(), "built again"
    (source / "new.txt").write_text("a change is a new build\n")
    third = prepare(load_manifest(source), "bubblewrap", SandboxLimits(), tmp_path / "two",
                    cache=tmp_path / "cache")
    assert third.folder != first.folder and (third.folder / "new.txt").exists()


@pytest.mark.parametrize("damage", ["emptied", "removed", "added"])
def test_a_damaged_build_in_the_cache_is_built_again(tmp_path: Path, damage: str) -> None:
    """A kept build is checked against the digest stored with it: a file emptied in the
    cache would be run as the author's bot, which would then fail its check."""
    source = make_bot(tmp_path / "bot", "echo built > out.txt")
    cache = tmp_path / "cache"
    first = prepare(load_manifest(source), "bubblewrap", SandboxLimits(), tmp_path / "one",
                    cache=cache)
    built = first.folder / "out.txt"
    assert built.read_text() == "built\n"
    built.chmod(0o644)
    if damage == "emptied":
        built.write_text("")
    elif damage == "removed":
        built.unlink()
    else:
        (first.folder / "planted.sh").write_text("echo planted\n")
    again = prepare(load_manifest(source), "bubblewrap", SandboxLimits(), tmp_path / "two",
                    cache=cache)
    assert again.folder == first.folder
    assert built.read_text() == "built\n" and not (first.folder / "planted.sh").exists()
    assert list((tmp_path / "two" / "builds").glob("*.stdout.log")), "not built again"


@pytest.mark.parametrize("shape", ["others may write it", "a link as its lock"])
def test_a_build_cache_others_could_change_is_refused(tmp_path: Path, shape: str) -> None:
    source = make_bot(tmp_path / "bot", "echo built > out.txt")
    cache = tmp_path / "cache"
    victim = tmp_path / "victim.txt"
    victim.write_text("kept\n")
    if shape == "others may write it":
        cache.mkdir(mode=0o777)
        cache.chmod(0o777)
        message = "only it may write"
    else:
        cache.mkdir(mode=0o755)
        key = build_key(load_manifest(source))
        (cache / f"{key}.lock").symlink_to(victim)
        message = "cannot be opened as a file"
    with pytest.raises(BuildError, match=message):
        prepare(load_manifest(source), "bubblewrap", SandboxLimits(), tmp_path / "one",
                cache=cache)
    assert victim.read_text() == "kept\n"
    assert not [p for p in cache.iterdir() if p.is_dir()]


# -- an entrant's own folder ---------------------------------------------------------------

@pytest.mark.parametrize(("make", "message"), [
    (lambda f: (f / "dangling").symlink_to(f / "nowhere"), "which does not exist"),
    (lambda f: (f / "escape").symlink_to("/etc/passwd"), "outside the bot folder"),
    (lambda f: (f / "up").symlink_to(".."), "outside the bot folder"),
    (lambda f: os.mkfifo(f / "pipe"), "not a file, folder or link"),
])
def test_an_entrant_folder_with_a_bad_link_or_a_pipe_is_one_clear_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], make: object,
        message: str) -> None:
    folder = make_bot(tmp_path / "bot", "true")
    make(folder)  # type: ignore[operator]
    with pytest.raises(ManifestError, match=message):
        load_manifest(folder)
    assert main(["check", str(folder)]) == 2
    error = capsys.readouterr().err
    assert message in error and "Traceback" not in error and str(folder) in error


def test_links_inside_an_entrant_folder_are_fine(tmp_path: Path) -> None:
    folder = make_bot(tmp_path / "bot", "true")
    (folder / "lib").mkdir()
    (folder / "lib" / "real.txt").write_text("x")
    (folder / "alias.txt").symlink_to("lib/real.txt")
    assert load_manifest(folder).content_hash()


def test_a_folder_whose_files_read_past_the_limit_is_one_clear_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A sparse file takes a few KiB on disk and reads as its full size: hashing it whole
    in memory would take 3 GB for 1 GiB, and a build would copy it whole."""
    folder = make_bot(tmp_path / "bot", "true")
    with (folder / "padding.bin").open("wb") as padding:
        padding.truncate(MOST_SOURCE_BYTES + 1)
    with pytest.raises(ManifestError, match="more than 512 MiB"):
        load_manifest(folder)
    assert main(["check", str(folder)]) == 2
    error = capsys.readouterr().err
    assert "512 MiB" in error and "Traceback" not in error
    (folder / ".gitignore").write_text("padding.bin\n")  # what is not the bot's
    assert load_manifest(folder).content_hash()


def test_a_bot_is_hashed_a_piece_at_a_time(tmp_path: Path) -> None:
    folder = make_bot(tmp_path / "bot", "true")
    with (folder / "padding.bin").open("wb") as padding:
        padding.truncate(200 << 20)
    manifest = load_manifest(folder)
    tracemalloc.start()
    try:
        manifest.content_hash()
        manifest.content_digest()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, f"hashing 200 MiB held {peak >> 20} MiB"


def test_the_hashes_cover_each_entry_as_documented(tmp_path: Path) -> None:
    """Streaming the files changed no hash: seasons and server stores keep them."""
    folder = make_bot(tmp_path / "bot", "true")
    (folder / "lib").mkdir()
    (folder / "lib" / "data.bin").write_bytes(bytes(range(256)) * 9000)  # past a chunk
    (folder / "run.sh").write_text("echo\n")
    (folder / "run.sh").chmod(0o755)
    (folder / "alias").symlink_to("run.sh")
    manifest = load_manifest(folder)
    files = {"bot.toml": (folder / "bot.toml").read_bytes(),
             "lib/data.bin": (folder / "lib" / "data.bin").read_bytes(),
             "run.sh": b"echo\n"}
    short = hashlib.sha256()
    full = hashlib.sha256()
    for name in sorted([*files, "lib", "alias"]):
        if name == "lib":
            full.update(b"dir\0lib\x000\0")
        elif name == "alias":
            short.update(b"alias\0->run.sh\0")
            full.update(b"link\0alias\x006\0run.sh")
        else:
            data = files[name]
            short.update(name.encode() + b"\0" + data + b"\0")
            kind = "exec" if name == "run.sh" else "file"
            full.update(f"{kind}\0{name}\0{len(data)}\0".encode() + data)
    assert manifest.content_hash() == short.hexdigest()[:16]
    assert manifest.content_digest() == full.hexdigest()


@pytest.mark.parametrize("swap", ["link", "pipe", "longer"])
def test_a_file_changed_after_the_listing_is_refused_not_followed(
        tmp_path: Path, swap: str) -> None:
    folder = make_bot(tmp_path / "bot", "true")
    (folder / "sub").mkdir()
    (folder / "sub" / "data.txt").write_text("listed\n")
    entries = {entry.relative: entry for entry in source_entries(folder)}
    target = folder / "sub" / "data.txt"
    if swap == "link":  # the folder on the way swapped for a link out
        (folder / "sub" / "data.txt").unlink()
        (folder / "sub").rmdir()
        (folder / "sub").symlink_to("/etc")
    elif swap == "pipe":
        target.unlink()
        os.mkfifo(target)
    else:
        target.write_text("listed, then longer\n")
    with pytest.raises(ManifestError, match="changed while being read"):
        list(file_chunks(folder, entries["sub/data.txt"]))


# -- bubblewrap mounts nothing a bot can shape ------------------------------------------------

def test_no_bind_source_lies_under_a_folder_a_bot_may_write(tmp_path: Path) -> None:
    """bubblewrap before 0.12 follows links in the parent folders of what it mounts: every
    folder on the way to a bind source must be the referee's and closed to others' writes
    (or sticky, as /tmp), and the source no link."""
    folder = make_bot(tmp_path / "bot", "true")
    socket_dir = Path(tempfile.mkdtemp(prefix="arena-match-"))
    try:
        socket_dir.chmod(0o755)
        launcher = BubblewrapLauncher(load_manifest(folder), tmp_path / "logs", "audit",
                                      SandboxLimits())
        for writable in (False, True):
            files: list[tuple[str, bytes]] = []
            args, _ = launcher._arguments(
                ["sh", "-c", "true"], {"ARENA_ADDRESS": f"unix:{socket_dir}/referee.sock"},
                socket_dir, SandboxLimits(), 1_600_000_001, False, writable, files)
            sources = [args[i + 1] for i, a in enumerate(args)
                       if a in ("--bind", "--ro-bind", "--ro-bind-try")]
            assert sources
            for source in sources:
                if not os.path.exists(source):
                    continue
                assert os.path.realpath(source) == source, f"{source} goes through a link"
                for parent in Path(source).parents:
                    status = parent.stat()
                    assert status.st_uid == 0, f"{parent} (on the way to {source})"
                    assert not status.st_mode & 0o022 or status.st_mode & stat.S_ISVTX, parent
            destinations = [args[i + 2] for i, a in enumerate(args)
                            if a in ("--bind", "--ro-bind", "--ro-bind-try")]
            writable_places = ["/bot"] if writable else []
            for destination in destinations:
                assert not any(destination.startswith(w + "/") for w in writable_places), \
                    f"{destination} is mounted under a folder the bot writes"
    finally:
        socket_dir.rmdir()
