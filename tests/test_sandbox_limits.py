"""Sandbox limits, the backend factory and what a launcher records in the match log."""

from __future__ import annotations

import resource
from dataclasses import dataclass
from pathlib import Path

import pytest

import arena.sandbox as sandbox
from arena.sandbox import (
    Backend,
    BubblewrapLauncher,
    DockerLauncher,
    FallbackLauncher,
    PlainLauncher,
    SandboxError,
    SandboxLimits,
    load_manifest,
    make_launcher,
    sandbox_record,
    season_launcher,
)
from arena.sandbox.launcher import rlimits

ROOT = Path(__file__).resolve().parents[1]
GREEDY = load_manifest(ROOT / "sample_bots" / "python" / "greedy")


def test_defaults_are_the_documented_ones() -> None:
    limits = SandboxLimits()
    assert limits.memory_mib == 768 and limits.processes == 64
    assert limits.memory_bytes == 768 * 1024 * 1024
    assert not limits.build_network
    record = limits.to_record()
    assert record["memory_mib"] == 768 and record["tmpfs_mib"] == 64


@pytest.mark.parametrize("field", ["memory_mib", "processes", "cpu_seconds", "tmpfs_mib"])
def test_a_limit_must_be_positive(field: str) -> None:
    with pytest.raises(ValueError, match=field):
        SandboxLimits(**{field: 0})


def test_build_limits_are_roomier_but_keep_larger_settings() -> None:
    build = SandboxLimits().for_build()
    assert build.memory_mib >= 2048 and build.processes >= 256 and build.tmpfs_mib >= 512
    assert SandboxLimits(memory_mib=4096).for_build().memory_mib == 4096


def test_rlimits_use_address_space_only_without_a_memory_cgroup() -> None:
    limits = SandboxLimits(cpu_seconds=7, open_files=100, file_size_mib=2, processes=9)
    capped = {number: (soft, hard) for number, soft, hard in
              rlimits(limits, memory_capped=True, count_processes=True)}
    assert capped[resource.RLIMIT_CPU] == (7, 12)
    assert capped[resource.RLIMIT_NOFILE] == (100, 100)
    assert capped[resource.RLIMIT_FSIZE] == (2 * 1024 * 1024,) * 2
    assert capped[resource.RLIMIT_NPROC] == (9, 9)
    assert capped[resource.RLIMIT_CORE] == (0, 0)
    assert resource.RLIMIT_AS not in capped
    uncapped = {number: soft for number, soft, _ in
                rlimits(limits, memory_capped=False, count_processes=False)}
    assert uncapped[resource.RLIMIT_AS] == 2 * limits.memory_bytes
    assert resource.RLIMIT_NPROC not in uncapped


def test_factory_builds_each_backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(make_launcher("plain", GREEDY, log_dir=tmp_path), PlainLauncher)
    assert isinstance(make_launcher(Backend.FALLBACK, GREEDY, log_dir=tmp_path, trusted=True),
                      FallbackLauncher)
    assert isinstance(make_launcher("bubblewrap", GREEDY, log_dir=tmp_path),
                      BubblewrapLauncher)
    monkeypatch.setattr("shutil.which", lambda name, *a, **k: "/usr/bin/docker"
                        if name == "docker" else None)
    assert isinstance(make_launcher("docker", GREEDY, log_dir=tmp_path), DockerLauncher)
    with pytest.raises(SandboxError, match="unknown sandbox backend 'chroot'"):
        make_launcher("chroot", GREEDY)


def test_docker_without_an_engine_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shutil.which", lambda *a, **k: None)
    with pytest.raises(SandboxError, match="docker is not installed"):
        make_launcher("docker", GREEDY)


def test_unusable_bubblewrap_falls_back_loudly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sandbox.bubblewrap, "probe", lambda: "bwrap is not installed")
    launcher = make_launcher("bubblewrap", GREEDY, log_dir=tmp_path, trusted=True)
    assert isinstance(launcher, FallbackLauncher)
    assert "WARNING" in capsys.readouterr().err
    record = launcher.describe()
    assert record["backend"] == "fallback"
    assert record["warnings"][0].startswith("FALLBACK SANDBOX")
    assert "bwrap is not installed" in record["warnings"][1]


def test_the_log_record_names_backend_limits_and_isolation(tmp_path: Path) -> None:
    limits = SandboxLimits(memory_mib=512)
    launcher = make_launcher("bubblewrap", GREEDY, limits, tmp_path, "seat0")
    record = launcher.describe()
    assert record["backend"] == "bubblewrap"
    assert record["limits"]["memory_mib"] == 512
    assert "net" in record["isolation"]["namespaces"]
    assert record["isolation"]["seccomp"]
    fallback = make_launcher("fallback", GREEDY, limits, tmp_path, "seat1", trusted=True)
    merged = sandbox_record([launcher, fallback, None])
    assert merged["backend"] == "bubblewrap"
    assert any("FALLBACK" in warning for warning in merged["warnings"])
    assert sandbox_record([None]) == {}


def test_season_settings_select_backend_and_limits(tmp_path: Path) -> None:
    @dataclass(frozen=True)
    class Settings:
        backend: str = "fallback"
        memory_mb: int = 640
        processes: int = 32
        cpu_seconds: int = 30
        trusted_bots: bool = True

    launcher, record = season_launcher(Settings(), GREEDY, tmp_path, "seat0")
    assert isinstance(launcher, FallbackLauncher)
    assert record["limits"]["memory_mib"] == 640 and record["limits"]["processes"] == 32
    assert record["limits"]["cpu_seconds"] == 30


@pytest.mark.parametrize(("field", "value"), [
    ("memory_mib", 0), ("memory_mib", 1 << 21), ("processes", 10 ** 20),
    ("cpu_seconds", -1), ("cpu_cores", float("inf")), ("cpu_cores", float("nan")),
    ("output_bytes", 1 << 50), ("build_seconds", 10 ** 9),
])
def test_a_limit_no_kernel_would_hold_is_refused_by_name(field: str, value: object) -> None:
    """Past the most a limit may be (a TiB of memory, a year of CPU...), or not a positive
    finite number: refused when the limits are made, not as every bot failing to start."""
    with pytest.raises(ValueError, match=f"sandbox limit {field} must be positive and at most"):
        SandboxLimits(**{field: value})  # type: ignore[arg-type]
