"""``arena check``, ``arena play`` and ``arena replay`` as a user runs them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import BOTS, SAMPLES


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("bot", ["random", "greedy", "strategist"])
def test_check_passes_the_sample_bots(tmp_path: Path, bot: str) -> None:
    result = arena("check", str(SAMPLES / bot), "--logs", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    for kind in ("play or draw", "play drawn or keep", "choose colour",
                 "challenge or accept"):
        assert f"PASS answers {kind}: asked" in result.stdout
    assert "all checks passed" in result.stdout


def test_check_fails_a_broken_bot_with_a_useful_message(tmp_path: Path) -> None:
    bot = tmp_path / "broken"
    bot.mkdir()
    (bot / "bot.toml").write_text('name = "broken"\nversion = "1"\nlanguage = "python"\n'
                                  'run = ["python3", "bot.py"]\n')
    (bot / "bot.py").write_text("import sys\nprint('boom: missing model file', file=sys.stderr)\n"
                                "sys.exit(1)\n")
    result = arena("check", str(bot), "--logs", str(tmp_path / "logs"), cwd=tmp_path)
    assert result.returncode == 1
    assert "FAIL connects and says hello: the bot exited before saying hello" in result.stdout
    assert "see the bot's output in" in result.stdout
    # What it never did is not passed either.
    assert "PASS plays only legal actions" not in result.stdout
    assert "FAIL plays only legal actions: not tested: the bot never played" in result.stdout
    assert "FAIL answers in time: not tested" in result.stdout
    stderr_logs = list((tmp_path / "logs").glob("*stderr.log"))
    assert any("boom: missing model file" in p.read_text() for p in stderr_logs)


def test_check_fails_an_illegal_bot(tmp_path: Path) -> None:
    bot = tmp_path / "illegal"
    bot.mkdir()
    (bot / "bot.toml").write_text('name = "illegal"\nversion = "1"\nlanguage = "python"\n'
                                  'run = ["python3", "misbehave.py", "illegal"]\n')
    for script in ("misbehave.py", "rawbot.py"):  # a sandboxed bot sees only its own folder
        (bot / script).write_text((BOTS / script).read_text())
    result = arena("check", str(bot), "--logs", str(tmp_path / "logs"), cwd=tmp_path)
    assert result.returncode == 1
    assert "FAIL plays only legal actions: action index 999 out of range" in result.stdout


def test_bad_manifest_is_a_clear_error(tmp_path: Path) -> None:
    bot = tmp_path / "bad"
    bot.mkdir()
    (bot / "bot.toml").write_text('name = "bad"\nversion = "1"\nlanguage = "cobol"\n'
                                  'run = ["cobc"]\nbiuld = ["make"]\n')
    result = arena("play", str(bot), str(SAMPLES / "random"), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == (f"arena play: {bot / 'bot.toml'}: unknown field 'biuld' "
                                     "(did you mean 'build'?); the fields are name, version, "
                                     "author, language, protocol, run, build, vendor, runtimes, "
                                     "variants")


def test_play_then_replay(tmp_path: Path) -> None:
    # A long path: piped output keeps each message on one line (a script greps it).
    folder = tmp_path / ("logs-of-a-season-with-a-long-name-" * 3) / "logs"
    result = arena("play", str(SAMPLES / "strategist"), str(SAMPLES / "random"),
                   "--matches", "2", "--logs", str(folder), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "strategist 1.0" in result.stdout and "decisions/s" in result.stdout
    logs = sorted(folder.glob("*.jsonl.gz"))
    assert len(logs) == 2
    shown = arena("replay", str(logs[0]), cwd=tmp_path)
    assert shown.returncode == 0, shown.stdout
    assert f"{logs[0]}: replay agrees with the log: " in shown.stdout
    assert "first card:" in shown.stdout and "deals first" in shown.stdout


def test_replay_detects_a_tampered_log(tmp_path: Path) -> None:
    import gzip
    import json

    result = arena("play", str(SAMPLES / "greedy"), str(SAMPLES / "random"), "--matches", "1",
                   "--logs", str(tmp_path / "logs"), cwd=tmp_path)
    assert result.returncode == 0
    log = next((tmp_path / "logs").glob("*.jsonl.gz"))
    with gzip.open(log, "rt") as source:
        lines = [json.loads(line) for line in source]
    for line in lines:
        if line["type"] == "result":
            line["scores"] = [s + 1 for s in line["scores"]]
    with gzip.open(log, "wt") as out:
        out.writelines(json.dumps(line) + "\n" for line in lines)
    shown = arena("replay", "--quiet", str(log), cwd=tmp_path)
    assert shown.returncode == 1
    assert "final scores: logged" in shown.stdout


def test_a_logs_text_is_shown_not_run_by_replay_and_inspect(tmp_path: Path) -> None:
    """A match log is whoever wrote it's: seat names, fault reasons and sources that hold
    escape sequences or rich markup are printed as text by `arena replay` and `arena
    inspect` (no terminal control, no markup error)."""
    import gzip
    import json

    result = arena("play", str(SAMPLES / "greedy"), str(SAMPLES / "random"), "--matches", "1",
                   "--logs", str(tmp_path / "logs"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    log = next((tmp_path / "logs").glob("*.jsonl.gz"))
    with gzip.open(log, "rt") as source:
        lines = [json.loads(line) for line in source]
    for line in lines:
        if line["type"] == "seats":
            line["seats"][0]["name"] = "evil\x1b]0;pwned\x07[/x][red]"
    seats_at = next(i for i, line in enumerate(lines) if line["type"] == "seats")
    lines.insert(seats_at + 1, {"type": "fault", "seat": 0, "kind": "MALFORMED",
                                "reason": "oops [/] \x1b[2J\u202egone", "strikes": 1,
                                "disqualified": False})
    with gzip.open(log, "wt") as out:
        out.writelines(json.dumps(line) + "\n" for line in lines)
    for command in (("replay", str(log)), ("inspect", str(log), "--seat", "0")):
        shown = arena(*command, cwd=tmp_path)
        output = shown.stdout + shown.stderr
        assert "Traceback" not in output, output
        assert not {"\x1b", "\x07", "\u202e"} & set(output), command
        assert "\\x1b]0;pwned\\x07" in output, command
        assert "oops [/] \\x1b[2J\\u202egone" in output, command
    assert "replay agrees with the log" in arena("replay", str(log), cwd=tmp_path).stdout


@pytest.mark.parametrize(("args", "message"), [
    (("simulate", "random", "greedy", "--matches", "0"), "--matches: must be an integer ≥ 1"),
    (("simulate", "random", "greedy", "--matches", "-3"), "--matches: must be an integer ≥ 1"),
    (("play", "a", "b", "--matches", "0"), "--matches: must be an integer ≥ 1, not 0"),
    (("play", "a", "b", "--deadline", "-1"), "--deadline: must be a number of seconds from 0.01"),
    (("play", "a", "b", "--deadline", "nan"), "--deadline: must be a number of seconds"),
    (("play", "a", "b", "--time-bank", "inf"), "--time-bank: must be a number of seconds from 0 "),
    (("play", "a", "b", "--time-bank", "1e300"), "to 86400, not 1e300"),
])
def test_counts_and_time_limits_on_the_command_line_are_checked(
        capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str) -> None:
    """What a request could not carry (a NaN, an infinite or negative time) and a number
    of matches below 1 are usage errors, before anything starts (not tracebacks:
    ZeroDivisionError, ValueError, OverflowError)."""
    from arena.cli import main

    with pytest.raises(SystemExit) as exited:
        main(list(args))
    assert exited.value.code == 2
    assert message in capsys.readouterr().err
