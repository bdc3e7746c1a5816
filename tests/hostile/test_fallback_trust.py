"""The fallback sandbox runs trusted bots only.

It shows a bot the host's files as an unprivileged user sees them, so an untrusted bot is
refused under it, chosen or reached because bubblewrap cannot run, unless the organiser
opts in (``--trust-bots``, ``[sandbox] trusted_bots = true``). What it contains when it
runs is attacked in ``test_attacks.py``; here: the refusal, and the output folders that a
bot must not read.
"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from arena import sandbox
from arena.cli import main
from arena.league.season import load_season
from arena.sandbox import (
    FallbackLauncher,
    SandboxError,
    SandboxLimits,
    load_manifest,
    make_launcher,
    prepare,
    require_containment,
)

ROOT = Path(__file__).resolve().parents[2]
GREEDY = ROOT / "sample_bots" / "python" / "greedy"
RANDOM = ROOT / "sample_bots" / "python" / "random"


def unusable_bubblewrap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox.bubblewrap, "probe", lambda: "user namespaces are disabled")


def test_the_fallback_refuses_an_untrusted_bot_and_says_why() -> None:
    with pytest.raises(SandboxError) as caught:
        make_launcher("fallback", load_manifest(GREEDY))
    message = str(caught.value)
    assert "greedy" in message and "cannot contain an untrusted bot" in message
    assert "--trust-bots" in message and "trusted_bots = true" in message
    assert isinstance(make_launcher("fallback", load_manifest(GREEDY), trusted=True),
                      FallbackLauncher)


def test_falling_back_from_bubblewrap_refuses_too(monkeypatch: pytest.MonkeyPatch) -> None:
    unusable_bubblewrap(monkeypatch)
    with pytest.raises(SandboxError, match="user namespaces are disabled"):
        make_launcher("bubblewrap", load_manifest(GREEDY))
    with pytest.raises(SandboxError, match="--trust-bots"):
        require_containment("bubblewrap", trusted=False)
    require_containment("bubblewrap", trusted=True)
    assert isinstance(make_launcher("bubblewrap", load_manifest(GREEDY), trusted=True),
                      FallbackLauncher)


def test_a_build_under_the_fallback_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "bot.toml").write_text('name = "b"\nversion = "1"\nlanguage = "other"\n'
                                     'build = ["true"]\nrun = ["true"]\n')
    with pytest.raises(SandboxError, match="cannot contain an untrusted bot"):
        prepare(load_manifest(folder), "fallback", SandboxLimits(), tmp_path / "runs")


@pytest.mark.parametrize("command", [
    ["play", str(GREEDY), str(RANDOM), "--matches", "1"], ["check", str(GREEDY)]])
def test_play_and_check_refuse_without_trust_bots(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    code = main([*command, "--sandbox", "fallback", "--logs", str(tmp_path / "logs")])
    error = capsys.readouterr().err
    assert code == 2 and "cannot contain an untrusted bot" in error
    assert "Traceback" not in error


def season_file(tmp_path: Path, sandbox_table: str) -> Path:
    path = tmp_path / "season.toml"
    path.write_text(f"""
[season]
name = "trust"
matches_per_group = 1
duplicate_deals = false  # one match per pair: these tests count matches, not deals
entrants = ["{GREEDY}", "{RANDOM}"]

[rules]
target_score = 50

[sandbox]
{sandbox_table}

[output]
folder = "{tmp_path / 'out'}"
""")
    return path


def test_a_season_refuses_before_playing_unless_the_file_or_the_command_trusts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = season_file(tmp_path, 'backend = "fallback"')
    assert main(["season", "run", str(path)]) == 2
    assert "cannot contain an untrusted bot" in capsys.readouterr().err
    assert not (tmp_path / "out").exists(), "nothing played, nothing written"
    assert main(["season", "run", str(path), "--trust-bots"]) == 0
    trusted = season_file(tmp_path, 'backend = "fallback"\ntrusted_bots = true')
    assert load_season(trusted).sandbox.trusted_bots is True


def test_output_folders_are_the_organisers_alone(tmp_path: Path) -> None:
    """Logs, bot output and the season store (with its key) are in folders no bot's uid
    may enter."""
    logs = tmp_path / "logs"
    assert main(["play", str(GREEDY), str(RANDOM), "--matches", "1", "--target", "50",
                 "--logs", str(logs)]) == 0
    assert stat.S_IMODE(logs.stat().st_mode) == 0o700
    path = season_file(tmp_path, 'backend = "bubblewrap"')
    assert main(["season", "run", str(path)]) == 0
    assert stat.S_IMODE((tmp_path / "out").stat().st_mode) == 0o700
