"""A bot's build step: once, sandboxed, on a private copy, with its own time limit."""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path

import pytest

from arena.sandbox import (
    BuildError,
    SandboxLimits,
    load_manifest,
    make_launcher,
    prepare,
)

BACKENDS = ["bubblewrap", "fallback", "plain"]


def make_bot(folder: Path, build: str, run: str = "cat out.txt", *,
             extra: dict[str, str] | None = None) -> Path:
    folder.mkdir(parents=True)
    folder.chmod(0o755)  # the sandboxed bot and build run under a uid of their own
    (folder / "bot.toml").write_text(  # a JSON string is a TOML basic string
        f'name = "builder"\nversion = "1"\nlanguage = "other"\n'
        f'build = ["sh", "-c", {json.dumps(build)}]\nrun = ["sh", "-c", {json.dumps(run)}]\n')
    for name, content in (extra or {}).items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return folder


def run_to_end(launcher: object, logs: Path, label: str) -> str:
    from arena.sandbox import SandboxLauncher

    assert isinstance(launcher, SandboxLauncher)
    process = launcher.start(list(launcher.manifest.run), {}, None)
    process.wait(timeout=30)
    process.kill()
    return (logs / f"{label}.stdout.log").read_text()


@pytest.mark.parametrize("backend", BACKENDS)
def test_build_runs_once_on_a_copy_and_the_bot_runs_from_it(tmp_path: Path,
                                                            backend: str) -> None:
    source = make_bot(tmp_path / "bot", "echo built >> out.txt; echo compiling",
                      extra={"main.c": "int main;\n"})
    original = load_manifest(source)
    built = prepare(original, backend, SandboxLimits(), tmp_path / "runs", trusted=True,
                    cache=tmp_path / "cache")
    assert built.folder != source and built.folder.parent == tmp_path / "cache"
    assert (built.folder / "out.txt").read_text() == "built\n"
    assert (built.folder / "main.c").exists()
    assert not (source / "out.txt").exists(), "the entrant's own folder is never written"
    again = prepare(original, backend, SandboxLimits(), tmp_path / "season2", trusted=True,
                    cache=tmp_path / "cache")
    assert again.folder == built.folder
    assert (built.folder / "out.txt").read_text() == "built\n", "built once, then reused"
    if backend != "plain":
        launcher = make_launcher(backend, built, SandboxLimits(), tmp_path / "logs", "run",
                                 trusted=True)
        assert run_to_end(launcher, tmp_path / "logs", "run") == "built\n"


def test_no_build_step_plays_exactly_the_sources_its_version_covers(tmp_path: Path) -> None:
    """Run from its own folder, a bot would also see what its .gitignore names, which its
    content hash leaves out: code there would change the bot, not its version. It plays
    from a copy of exactly its sources, kept in the build cache by their digest."""
    folder = tmp_path / "bot"
    (folder / "lib").mkdir(parents=True)
    (folder / "bot.toml").write_text('name = "b"\nversion = "1"\nlanguage = "other"\n'
                                     'run = ["./bot.sh"]\n')
    (folder / "bot.sh").write_text("#!/bin/sh\ncat lib/data.txt\n")
    (folder / "bot.sh").chmod(0o755)
    (folder / "lib" / "data.txt").write_text("kept\n")
    (folder / "alias.txt").symlink_to("lib/data.txt")
    (folder / ".gitignore").write_text("hidden.py\n__pycache__\n")
    (folder / "hidden.py").write_text("print('not the bot')\n")
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "bot.cpython-311.pyc").write_bytes(b"planted")
    manifest = load_manifest(folder)
    staged = prepare(manifest, "bubblewrap", SandboxLimits(), tmp_path / "runs")
    assert staged.folder != folder and staged.run == manifest.run
    assert sorted(p.name for p in staged.folder.iterdir()) == [
        ".gitignore", "alias.txt", "bot.sh", "bot.toml", "lib"]
    assert (staged.folder / "alias.txt").is_symlink()
    assert os.access(staged.folder / "bot.sh", os.X_OK)
    assert load_manifest(staged.folder).content_digest() == manifest.content_digest()
    again = prepare(load_manifest(folder), "bubblewrap", SandboxLimits(), tmp_path / "runs")
    assert again.folder == staged.folder
    (folder / "lib" / "data.txt").write_text("changed\n")
    changed = prepare(load_manifest(folder), "bubblewrap", SandboxLimits(), tmp_path / "runs")
    assert (changed.folder / "lib" / "data.txt").read_text() == "changed\n"
    assert (staged.folder / "lib" / "data.txt").read_text() == "kept\n"


@pytest.mark.parametrize("backend", BACKENDS)
def test_failing_build_names_the_bot_and_quotes_its_output(tmp_path: Path,
                                                           backend: str) -> None:
    source = make_bot(tmp_path / "bot", "echo step one; echo 'bot.c:3: error: oops' >&2; "
                                        "exit 3")
    with pytest.raises(BuildError) as caught:
        prepare(load_manifest(source), backend, SandboxLimits(), tmp_path / "runs",
                trusted=True)
    message = str(caught.value)
    assert "builder 1" in message and str(source) in message
    assert "exit code 3" in message
    assert "step one" in message and "bot.c:3: error: oops" in message


def test_a_failing_builds_escape_sequences_are_quoted_not_sent_to_the_terminal(
        tmp_path: Path) -> None:
    """A build's output is the bot's: its escape sequences (a window title, a cleared
    screen, a colour) are shown as escapes in the error the organiser reads."""
    source = make_bot(tmp_path / "bot", r"printf 'a\033]0;pwned\007b\033[2Jc\033[31md\n'; "
                                        r"printf 'e\302\233f\342\200\256g\n' >&2; exit 3")
    with pytest.raises(BuildError) as caught:
        prepare(load_manifest(source), "plain", SandboxLimits(), tmp_path / "runs",
                trusted=True)
    message = str(caught.value)
    assert r"a\x1b]0;pwned\x07b\x1b[2Jc\x1b[31md" in message
    assert r"e\x9bf\u202eg" in message
    assert not {"\x1b", "\x07", "\x9b", "\u202e"} & set(message)


def test_build_has_its_own_time_limit(tmp_path: Path) -> None:
    source = make_bot(tmp_path / "bot", "echo started; sleep 60")
    with pytest.raises(BuildError, match=r"timed out after 1 s(.|\n)*started"):
        prepare(load_manifest(source), "bubblewrap", SandboxLimits(build_seconds=1),
                tmp_path / "runs")


def test_build_is_sandboxed_offline_and_cannot_write_outside(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir(mode=0o777)
    outside.chmod(0o777)
    target = outside / "pwned"
    script = (f"touch /tmp/scratch && ! touch {target} && "
              "! python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 53), 2)' "
              "2>/dev/null && echo contained > out.txt")
    source = make_bot(tmp_path / "bot", script)
    built = prepare(load_manifest(source), "bubblewrap", SandboxLimits(), tmp_path / "runs")
    assert (built.folder / "out.txt").read_text() == "contained\n"
    assert not target.exists()


def test_copy_leaves_out_what_gitignore_lists(tmp_path: Path) -> None:
    source = make_bot(tmp_path / "bot", "test ! -e build/stale && test ! -e x.o && "
                                        "test -e keep.txt && echo clean > out.txt",
                      extra={".gitignore": "build/\n*.o\n# comment\n", "build/stale": "old",
                             "x.o": "obj", "keep.txt": "k"})
    built = prepare(load_manifest(source), "bubblewrap", SandboxLimits(), tmp_path / "runs")
    assert (built.folder / "out.txt").read_text() == "clean\n"


def test_a_toolchain_outside_the_package_manager_is_part_of_the_build_key(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another `go` first on PATH (a Go in /usr/local upgraded, a rustup toolchain, a JDK
    under /opt) builds with other tools, so it must not share a key."""
    from arena.sandbox.build import toolchain_identity

    toolchain_identity.cache_clear()
    before = toolchain_identity()
    tools = tmp_path / "go-1.99" / "bin"
    tools.mkdir(parents=True)
    (tools / "go").write_text("#!/bin/sh\necho go1.99\n")
    (tools / "go").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:{os.environ['PATH']}")
    toolchain_identity.cache_clear()
    try:
        changed = toolchain_identity()
        (tools / "go").write_text("#!/bin/sh\necho go1.99.1, a new build of it\n")
        toolchain_identity.cache_clear()
        upgraded = toolchain_identity()
    finally:
        toolchain_identity.cache_clear()
    assert len({before, changed, upgraded}) == 3


@pytest.mark.parametrize("backend", ["bubblewrap", "plain"])
def test_a_build_filling_the_disk_is_stopped_while_it_runs(
        tmp_path: Path, backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The output check after a build comes too late for a disk already full: a build
    that writes more than the output cap (here 64 MiB) is stopped as it writes, and
    nothing of it is kept."""
    build_module = importlib.import_module("arena.sandbox.build")  # the package exports build()

    monkeypatch.setattr(build_module, "OUTPUT_LIMIT_BYTES", 64 * 1024 ** 2)
    source = make_bot(tmp_path / "bot", "i=0; while :; do head -c 8388608 /dev/zero > f$i; "
                                        "i=$((i+1)); done")
    with pytest.raises(BuildError, match=r"was stopped: it had written more than 0\.0625 "
                                         r"GiB to the disk"):
        prepare(load_manifest(source), backend, SandboxLimits(), tmp_path / "runs",
                trusted=True, cache=tmp_path / "cache")
    assert [p.name for p in (tmp_path / "cache").iterdir() if not p.name.endswith(".lock")
            ] == []


def test_a_build_is_stopped_when_its_disk_runs_low(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # A disk with less free than the reserve: here every disk, by a reserve of an EiB.
    build_module = importlib.import_module("arena.sandbox.build")
    monkeypatch.setattr(build_module, "DISK_RESERVE_BYTES", 1 << 60)
    source = make_bot(tmp_path / "bot", "sleep 60")
    with pytest.raises(BuildError, match=r"the disk it builds on had less than "
                                         r"1099511627776 MiB free left"):
        prepare(load_manifest(source), "bubblewrap", SandboxLimits(), tmp_path / "runs",
                cache=tmp_path / "cache")
