"""What a bot sees of the host's runtimes: its language's toolchain without asking, and the
folders its bot.toml declares, which the sandbox checks first (an entrant must never reach
another entrant's folder, the referee's files or a season's output by declaring it)."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.sandbox import (
    BotManifest,
    BubblewrapLauncher,
    SandboxError,
    SandboxLimits,
    make_launcher,
    runtimes,
)
from arena.sandbox.environment import ARENA_PACKAGE
from arena.sandbox.manifest import KNOWN_LANGUAGES

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    bot = tmp_path / "bot"
    bot.mkdir()
    bot.chmod(0o755)
    return bot


@pytest.fixture
def opt_folder() -> Iterator[Path]:
    """A fresh folder under /opt (a system location a runtime may be declared in)."""
    path = Path("/opt") / f"arena-test-{secrets.token_hex(4)}"
    path.mkdir()
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def manifest(folder: Path, *declared: str, language: str = "ruby",
             run: tuple[str, ...] = ("/bin/true",)) -> BotManifest:
    return BotManifest(folder=folder, name="probe", version="1", language=language, run=run,
                       runtimes=tuple(declared))


def refused(folder: Path, entry: str, tmp_path: Path) -> str:
    with pytest.raises(SandboxError) as error:
        runtimes.declared_folders(manifest(folder, entry), [tmp_path / "logs"])
    message = str(error.value)
    assert message.startswith(f"{folder / 'bot.toml'}: field 'runtimes': {entry} is refused: ")
    assert "\n" not in message
    return message


# -- the automatic toolchains ------------------------------------------------------------


def test_every_known_language_has_a_toolchain_rule() -> None:
    assert set(KNOWN_LANGUAGES) <= set(runtimes.LANGUAGE_TOOLCHAINS)


@pytest.mark.parametrize(("language", "tool"), [("go", "go"), ("rust", "cargo"),
                                                ("rust", "rustc"), ("java", "java"),
                                                ("java", "mvn"), ("javascript", "node")])
def test_a_known_language_finds_its_tools_on_this_machine(folder: Path, language: str,
                                                          tool: str) -> None:
    found = runtimes.toolchain(manifest(folder, language=language), ["x"])
    assert found.folders, f"no {language} toolchain found (is {tool} on PATH?)"
    assert all(path.is_dir() for path in found.folders)
    assert any((Path(p) / tool).exists() for p in [*found.path, "/usr/bin"])


def test_java_brings_its_configuration_from_etc(folder: Path) -> None:
    found = runtimes.toolchain(manifest(folder, language="java"), ["java"])
    java = Path(shutil.which("java") or "").resolve()
    assert java.parent.parent in found.folders
    # Debian links the JDK's conf/ into /etc/java-N-openjdk, Maven's conf/ to /etc/maven.
    assert any(str(p).startswith("/etc/java-") for p in found.folders)
    assert Path("/etc/maven") in found.folders
    assert not any(p in (Path("/etc/ssl"), Path("/etc")) for p in found.folders)


def test_rust_runs_from_the_toolchain_not_through_rustup(folder: Path) -> None:
    found = runtimes.toolchain(manifest(folder, language="rust"), ["cargo"])
    [sysroot] = found.folders
    assert (sysroot / "bin" / "cargo").is_file() and (sysroot / "bin" / "rustc").is_file()
    assert found.path == (str(sysroot / "bin"),)


def run_in_sandbox(made: BubblewrapLauncher, argv: list[str]) -> tuple[int, str, str]:
    process = made.start(argv, {}, None)
    try:
        code = process.wait(30)
    finally:
        process.kill()
    return code, process.stdout_path.read_text(), process.stderr_path.read_text()


@pytest.mark.parametrize(("language", "command"), [
    ("go", "go version"), ("rust", "cargo --version && rustc --version"),
    ("java", "java -version && mvn --version"),
])
def test_a_known_language_runs_its_toolchain_in_the_sandbox(folder: Path, tmp_path: Path,
                                                             language: str, command: str
                                                             ) -> None:
    made = make_launcher("bubblewrap", manifest(folder, language=language), SandboxLimits(),
                         tmp_path / "logs", "probe")
    assert isinstance(made, BubblewrapLauncher)
    code, out, err = run_in_sandbox(made, ["/bin/sh", "-c", command])
    assert code == 0, out + err


# -- declared runtimes: what may be shown ------------------------------------------------


def test_a_declared_system_folder_is_shown_and_others_are_not(folder: Path, tmp_path: Path,
                                                              opt_folder: Path) -> None:
    (opt_folder / "lib.txt").write_text("a runtime file\n")
    (opt_folder / "lib.txt").chmod(0o644)
    script = f"cat {opt_folder}/lib.txt; ls /etc/java-17-openjdk >/dev/null && echo etc-ok"
    declared = make_launcher("bubblewrap", manifest(folder, str(opt_folder),
                                                    "/etc/java-17-openjdk"),
                             SandboxLimits(), tmp_path / "logs", "probe")
    assert isinstance(declared, BubblewrapLauncher)
    code, out, _ = run_in_sandbox(declared, ["/bin/sh", "-c", script])
    assert (code, out) == (0, "a runtime file\netc-ok\n")
    undeclared = make_launcher("bubblewrap", manifest(folder), SandboxLimits(),
                               tmp_path / "logs", "probe")
    assert isinstance(undeclared, BubblewrapLauncher)
    code, out, _ = run_in_sandbox(undeclared, ["/bin/sh", "-c", script])
    assert code != 0 and "a runtime file" not in out


def test_a_declared_symlink_is_bound_at_its_target(folder: Path, opt_folder: Path,
                                                   tmp_path: Path) -> None:
    (opt_folder / "jdk-1").mkdir()
    (opt_folder / "current").symlink_to(opt_folder / "jdk-1")
    assert runtimes.declared_folders(manifest(folder, str(opt_folder / "current")),
                                     [tmp_path]) == [opt_folder / "jdk-1"]


@pytest.mark.parametrize(("entry", "reason"), [
    ("/root", "/root holds root's home"),
    ("/root/.cargo", "/root holds root's home"),
    ("/home", "/home holds users' homes"),
    ("/proc/1", "/proc holds the processes of the machine"),
    ("/sys/fs/cgroup", "/sys holds the kernel's state"),
    ("/dev/shm", "/dev holds devices"),
    ("/run", "/run holds sockets and state of running programs"),
    ("/var/lib", "/var holds the machine's changing data"),
    ("/var/tmp", "/var holds the machine's changing data"),
    ("/tmp", "it overlaps /tmp/"),  # the bot's own folder is under /tmp here
    ("/", "it overlaps /tmp/"),
    ("/etc", "not a system folder"),
    ("/opt", "not a system folder"),
    ("/etc/ssh", "/etc/ssh may hold secrets"),
    ("/etc/ssl", "/etc/ssl may hold secrets"),
    ("/usr/lib/no-such-runtime", "no such folder on this machine"),
    ("/etc/passwd", "not a folder"),
])
def test_declared_runtimes_outside_system_folders_are_refused(
        folder: Path, tmp_path: Path, entry: str, reason: str) -> None:
    if entry == "/root" and not Path("/root").exists():
        pytest.fail("the test expects /root to exist")
    assert reason in refused(folder, entry, tmp_path)


def test_another_entrants_folder_is_refused(folder: Path, tmp_path: Path,
                                            opt_folder: Path) -> None:
    other = opt_folder / "entrants" / "alice"
    (other / "src").mkdir(parents=True)
    (other / "bot.toml").write_text('name = "alice"\n')
    assert f"it holds {other / 'bot.toml'}" in refused(folder, str(other), tmp_path)
    assert f"it lies inside {other}, which holds bot.toml" in refused(
        folder, str(other / "src"), tmp_path)
    assert "it holds" in refused(folder, str(opt_folder / "entrants"), tmp_path)


@pytest.mark.parametrize("marker", ["season.sqlite", "match-0001.jsonl.gz", ".arena-built",
                                    "seat0-x.stderr.log"])
def test_season_output_is_refused(folder: Path, tmp_path: Path, opt_folder: Path,
                                  marker: str) -> None:
    (opt_folder / "season" / "deep").mkdir(parents=True)
    (opt_folder / "season" / "deep" / marker).write_text("")
    assert "it holds" in refused(folder, str(opt_folder / "season"), tmp_path)


def test_a_symlink_into_a_refused_place_is_refused_by_its_target(
        folder: Path, tmp_path: Path, opt_folder: Path) -> None:
    (opt_folder / "innocent").symlink_to("/root")
    message = refused(folder, str(opt_folder / "innocent"), tmp_path)
    assert "/root holds root's home (it is /root)" in message


def test_a_folder_every_user_may_write_is_refused(folder: Path, tmp_path: Path,
                                                  opt_folder: Path) -> None:
    (opt_folder / "drop").mkdir()
    (opt_folder / "drop").chmod(0o777)
    assert "every user may write it" in refused(folder, str(opt_folder / "drop"), tmp_path)


def test_the_launchers_own_folders_are_refused(folder: Path, tmp_path: Path,
                                               opt_folder: Path) -> None:
    bot = opt_folder / "bot"
    bot.mkdir()
    logs = opt_folder / "logs"
    logs.mkdir()
    for entry, overlapped in ((bot, bot), (opt_folder, bot), (logs / "x", logs)):
        entry.mkdir(exist_ok=True)
        with pytest.raises(SandboxError, match=f"it overlaps {overlapped}"):
            runtimes.declared_folders(manifest(bot, str(entry)), [logs])


def test_the_referees_checkout_is_refused(folder: Path, tmp_path: Path) -> None:
    assert (ARENA_PACKAGE.parent / "pyproject.toml").exists()
    message = refused(folder, str(ARENA_PACKAGE.parent / "tests"), tmp_path)
    assert f"overlaps {ARENA_PACKAGE.parent}" in message or "/root" in message


def test_a_huge_folder_is_refused_rather_than_half_checked(folder: Path, tmp_path: Path,
                                                           opt_folder: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    for index in range(30):
        (opt_folder / f"f{index}").write_text("")
    monkeypatch.setattr(runtimes, "SCAN_LIMIT", 20)
    runtimes._marker_below.cache_clear()
    assert "too many to check" in refused(folder, str(opt_folder), tmp_path)
    runtimes._marker_below.cache_clear()


def test_the_operators_toolchain_homes_are_allowed(folder: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "toolchains"
    (home / "ruby-3.3").mkdir(parents=True)
    assert "/tmp holds" in refused(folder, str(home / "ruby-3.3"), tmp_path / "logs")
    monkeypatch.setenv(runtimes.OPERATOR_VARIABLE, str(home))
    assert runtimes.declared_folders(manifest(folder, str(home / "ruby-3.3")),
                                     [tmp_path / "logs"]) == [home / "ruby-3.3"]


def test_a_refused_runtime_stops_the_launcher_and_arena_check(folder: Path,
                                                              tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match="'runtimes': /home is refused"):
        make_launcher("bubblewrap", manifest(folder, "/home"), SandboxLimits(),
                      tmp_path / "logs", "probe")
    (folder / "bot.toml").write_text('name = "b"\nversion = "1"\nlanguage = "ruby"\n'
                                     'run = ["ruby", "bot.rb"]\nruntimes = ["/root"]\n')
    result = subprocess.run([sys.executable, "-m", "arena.cli", "check", str(folder),
                             "--logs", str(tmp_path / "logs")], capture_output=True,
                            text=True, timeout=120, cwd=ROOT, env={**os.environ})
    assert result.returncode == 2
    assert result.stderr.strip().startswith(
        f"arena check: {folder / 'bot.toml'}: field 'runtimes': /root is refused: /root holds "
        "root's home")


def test_only_configuration_folders_of_etc_follow_a_toolchain(tmp_path: Path) -> None:
    home = tmp_path / "jdk"
    (home / "conf" / "security").mkdir(parents=True)
    (home / "conf" / "security" / "java.security").symlink_to(
        "/etc/java-17-openjdk/security/java.security")
    (home / "lib").mkdir()
    (home / "lib" / "cacerts").symlink_to("/etc/ssl/certs/java/cacerts")  # a secret folder
    (home / "lib" / "users").symlink_to("/etc/passwd")  # a file, not a folder
    (home / "lib" / "relative").symlink_to("../conf")  # inside the home
    assert runtimes._etc_targets(home) == [Path("/etc/java-17-openjdk")]
