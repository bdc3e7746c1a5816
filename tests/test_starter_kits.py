"""Starter kits: ``arena new BOT_DIR --lang LANG`` writes a bot that passes ``arena check`` in
the bubblewrap sandbox, its build running offline from the dependencies ``arena new`` fetched
into the folder; and every copy of the protocol is the protocol.

Each kit's times are printed (``pytest -s``): writing and fetching, then the check with its
sandboxed build. A missing toolchain fails with what to install: nothing here is skipped.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena import kits
from arena.sandbox import load_manifest
from arena.sandbox.build import cache_root
from arena.sandbox.fetch import ecosystems_of
from arena.sandbox.pipeline import ready_key

ROOT = Path(__file__).resolve().parents[1]
PROTO = ROOT / "protos" / "uno_arena" / "v1" / "referee.proto"
SKIPPED_FOLDERS = {".git", "node_modules", "vendor", "build", "target", ".m2", ".cargo-home",
                   "runs", "reports", "__pycache__"}


def arena(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None,
          timeout: float = 900) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=cwd,
                            capture_output=True, text=True, timeout=timeout, check=False,
                            env=env)
    return result, time.perf_counter() - started


@pytest.mark.parametrize("language", sorted(kits.KITS))
def test_a_new_kit_passes_arena_check_built_offline(language: str, tmp_path: Path) -> None:
    kit = kits.KITS[language]
    missing = kits.missing_tools(kit)
    if missing:
        pytest.fail(f"the {language} kit needs " + "; ".join(
            f"{t.command} ({t.source})" for t in missing) + " (see .ci/setup)", pytrace=False)
    folder = tmp_path / f"my-{language}-bot"
    made, new_seconds = arena("new", str(folder), "--lang", language)
    assert made.returncode == 0, made.stdout + made.stderr
    assert f"a {language} bot named my-{language}-bot" in made.stdout
    manifest = load_manifest(folder)
    assert manifest.name == f"my-{language}-bot"

    logs = tmp_path / "logs"
    checked, check_seconds = arena("check", str(folder), "--logs", str(logs))
    output = checked.stdout + checked.stderr
    assert checked.returncode == 0, output
    assert "all checks passed" in checked.stdout, output
    assert "WARN" not in checked.stdout, output
    if manifest.build or ecosystems_of(manifest):  # made ready once, kept by content:
        assert (cache_root() / ready_key(manifest)).is_dir(), output  # seasons reuse it
    # The check's match logs are kept; their header shows the build had no network.
    [log, *_] = sorted(logs.glob("*.jsonl.gz"))
    with gzip.open(log, "rt") as lines:
        header = json.loads(next(lines))
    assert header["sandbox"]["backend"] == "bubblewrap"
    assert header["sandbox"]["limits"]["build_network"] is False
    print(f"\n{language} kit: arena new (with its dependencies) {new_seconds:.1f} s, "
          f"arena check (build included) {check_seconds:.1f} s")


def test_kit_files_have_the_bots_name_and_the_protocol() -> None:
    for kit in kits.KITS.values():
        written = dict(kits.files(kit, "zed-9"))
        for path, content in written.items():
            assert kits.PLACEHOLDER.encode() not in content, f"{kit.language}: {path}"
        assert b'name = "zed-9"' in written[next(p for p in written if p.name == "bot.toml")]
        if kit.proto is not None:
            assert written[next(p for p in written if str(p) == kit.proto)] == PROTO.read_bytes()


def test_every_kit_manifest_loads(tmp_path: Path) -> None:
    for kit in kits.KITS.values():
        folder = tmp_path / kit.language
        folder.mkdir()
        kits.write(kit, folder, "some-bot")
        manifest = load_manifest(folder)
        assert manifest.name == "some-bot"
        assert bool(manifest.vendor) == (kit.language in ("javascript", "go", "rust", "java"))


def test_every_copy_of_the_protocol_is_the_protocol() -> None:
    """Sample bots keep copies (a test cannot regenerate them); the kits keep none: ``arena
    new`` writes the package's own, which is a link to the protocol."""
    canonical = PROTO.read_bytes()
    copies = []
    for root, folders, files in os.walk(ROOT):
        folders[:] = [f for f in folders if f not in SKIPPED_FOLDERS and f != ".ci"]
        copies += [Path(root) / f for f in files if f.endswith(".proto")]
    assert len(copies) >= 4, copies
    for copy in copies:
        assert copy.read_bytes() == canonical, (
            f"{copy} differs from {PROTO}: copy it again (cp {PROTO.relative_to(ROOT)} "
            f"{copy.relative_to(ROOT)})")
    assert (ROOT / "arena" / "kits" / kits.PROTO).resolve() == PROTO.resolve()
    assert kits.proto() == canonical


def test_new_refuses_an_existing_folder_and_writes_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "taken"
    folder.mkdir()
    (folder / "mine.txt").write_text("keep me\n")
    result, _ = arena("new", str(folder), "--lang", "python")
    assert result.returncode == 2
    assert result.stderr.strip() == (f"arena new: {folder} already exists and is not an empty "
                                     "folder; choose another folder (nothing was written)")
    assert [p.name for p in folder.iterdir()] == ["mine.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


def test_new_fills_an_empty_folder(tmp_path: Path) -> None:
    folder = tmp_path / "empty-bot"
    folder.mkdir()
    result, _ = arena("new", str(folder), "--lang", "stdio")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "bot.py", "bot.toml"]


@pytest.mark.parametrize("name", ["My_Bot", "9lives", "bot-", "a" * 41, "x y"])
def test_new_refuses_a_name_no_package_manager_takes(tmp_path: Path, name: str) -> None:
    result, _ = arena("new", str(tmp_path / "bot"), "--lang", "go", "--name", name)
    assert result.returncode == 2
    assert "cannot name a bot: use lower-case letters, digits and '-'" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_failed_fetch_leaves_nothing_behind(tmp_path: Path) -> None:
    fake = tmp_path / "fake-bin"
    fake.mkdir()
    for tool in ("npm", "node"):
        (fake / tool).write_text("#!/bin/sh\necho 'npm: the registry is unreachable' >&2\n"
                                 "exit 7\n")
        (fake / tool).chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"}
    result, _ = arena("new", str(tmp_path / "js-bot"), "--lang", "javascript", env=env)
    assert result.returncode == 2
    assert "the registry is unreachable" in result.stderr
    assert ("fetching the javascript kit's dependencies failed (npm ci --ignore-scripts "
            "--no-audit --no-fund: exit code 7" in result.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fake-bin"]


def test_a_missing_toolchain_is_named_before_anything_is_written(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": "/nonexistent"}
    result, _ = arena("new", str(tmp_path / "go-bot"), "--lang", "go", env=env)
    assert result.returncode == 2
    assert "the go kit needs go (https://go.dev/dl/); protoc (Debian: apt-get install " \
           "protobuf-compiler) on PATH" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_no_vendor_then_arena_vendor(tmp_path: Path) -> None:
    folder = tmp_path / "later-bot"
    result, _ = arena("new", str(folder), "--lang", "javascript", "--no-vendor")
    assert result.returncode == 0, result.stderr
    assert f"arena vendor {folder} puts them there" in result.stdout
    assert not (folder / "node_modules").exists()
    fetched, _ = arena("vendor", str(folder))
    assert fetched.returncode == 0, fetched.stderr
    assert (folder / "node_modules" / "@grpc" / "grpc-js" / "package.json").is_file()
    nothing, _ = arena("vendor", str(ROOT / "sample_bots" / "python" / "greedy"))
    assert nothing.returncode == 0 and "has no vendor command: nothing to fetch" in nothing.stdout


def test_builds_are_offline_alike_in_check_play_and_season() -> None:
    """One default for the build network everywhere, so that a bot that passes `arena
    check` also builds in a season (and `--build-network` is the same switch for both)."""
    from arena.cli import build_parser
    from arena.league.season import SandboxSettings
    from arena.sandbox import SandboxLimits, limits_from

    parser = build_parser()
    for command in (["check", "b"], ["play", "a", "b"]):
        assert parser.parse_args(command).build_network is False
        assert parser.parse_args([*command, "--build-network"]).build_network is True
    assert SandboxSettings().build_network is False
    assert SandboxLimits().build_network is False
    assert limits_from(SandboxSettings()).build_network is False


def test_a_folder_that_cannot_be_written_is_one_line() -> None:
    result, _ = arena("new", "/proc/arena-kit-test", "--lang", "python")
    assert result.returncode == 2
    assert result.stderr == ("arena new: cannot write /proc/arena-kit-test: No such file or "
                             "directory (nothing was written)\n")
