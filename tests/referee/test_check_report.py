"""What ``arena check`` tells an author besides PASS/FAIL: where its match logs are (kept),
how a crashed bot ended (exit code or signal, the end of its stderr), and habits worth a
warning (never calling UNO, never challenging, answering near the deadline)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from arena.referee.check import (
    Habits,
    describe_exit,
    habits,
    percentile,
    stderr_tail,
    warnings,
)
from arena.referee.log import MatchLogWriter
from arena.rules.actions import ACCEPT, CHALLENGE, DRAW

from .conftest import ROOT, SAMPLES


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def sdk_bot(folder: Path, decide_body: str, prelude: str = "") -> Path:
    """A Python bot on the SDK whose decide(turn) is ``decide_body``."""
    folder.mkdir()
    (folder / "bot.toml").write_text(f'name = "{folder.name}"\nversion = "1"\n'
                                     'language = "python"\nrun = ["python3", "bot.py"]\n')
    (folder / "bot.py").write_text(
        "import os, signal, sys\nfrom arena.bots.sdk import run\nfrom arena.rules import *\n"
        f"{prelude}\ndef decide(turn):\n{decide_body}\n"
        f"run(decide, name={folder.name!r}, version='1')\n")
    return folder


def test_check_keeps_its_match_logs_and_says_where(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    result = arena("check", str(SAMPLES / "strategist"), "--logs", str(logs), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    start = lines.index("match logs (arena replay LOG shows one turn by turn):")
    assert lines[start + 1:start + 3] == [f"  {logs / 'check-1.jsonl.gz'}",
                                          f"  {logs / 'check-2.jsonl.gz'}"]
    assert f"  {logs / 'check-1-strategist.stderr.log'}" in lines
    replayed = arena("replay", str(logs / "check-2.jsonl.gz"), "--quiet", cwd=tmp_path)
    assert "replay agrees with the log" in replayed.stdout
    assert "WARN" not in result.stdout  # the strategist calls UNO, challenges, answers fast


def test_check_warns_about_a_bot_that_never_challenges(tmp_path: Path) -> None:
    result = arena("check", str(SAMPLES / "greedy"), "--logs", str(tmp_path / "logs"),
                   cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    # Its variant matches (greedy declares every variant) add to the official ones.
    assert re.search(r"WARN never challenges a Wild Draw Four \(accepted all \d+\): ",
                     result.stdout), result.stdout
    assert result.stdout.rstrip().endswith("all checks passed (1 warning)")


def test_check_warns_about_a_bot_that_never_calls_uno(tmp_path: Path) -> None:
    # It sends its play as an action without the UNO flag, so the table catches it (§14).
    bot = sdk_bot(tmp_path / "silent", "    action = turn.legal_actions[0]\n"
                                       "    return action & ~UNO_CALL if action < 128 else action")
    result = arena("check", str(bot), "--logs", str(tmp_path / "logs"), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "WARN never calls UNO: caught " in result.stdout


def test_a_crash_gives_its_exit_code_stderr_and_log(tmp_path: Path) -> None:
    bot = sdk_bot(tmp_path / "fragile", "    print('about to fail', file=sys.stderr)\n"
                                        "    sys.exit(3)")
    logs = tmp_path / "logs"
    result = arena("check", str(bot), "--logs", str(logs), cwd=tmp_path)
    assert result.returncode == 1
    out = result.stdout
    assert (f"CRASH in check-1, check-2: exit code 3; the last lines of its stderr "
            f"({logs / 'check-1-fragile.stderr.log'}):") in out
    assert "  | about to fail" in out
    assert f"  the match log: {logs / 'check-1.jsonl.gz'}" in out


def test_a_bot_killed_by_a_signal_is_said_so(tmp_path: Path) -> None:
    bot = sdk_bot(tmp_path / "segv", "    global answered\n    answered += 1\n"
                                     "    if answered == 5:\n"
                                     "        print('corrupted state', file=sys.stderr, "
                                     "flush=True)\n"
                                     "        os.kill(os.getpid(), signal.SIGSEGV)\n"
                                     "    return turn.legal_actions[0]",
                  prelude="answered = 0")
    result = arena("check", str(bot), "--logs", str(tmp_path / "logs"), "--matches", "1",
                   cwd=tmp_path)
    assert result.returncode == 1
    # The sandbox reports a signal as 128 + its number, as a shell does.
    assert "CRASH in check-1: exit code 139, i.e. killed by signal 11 (SIGSEGV); " in result.stdout
    assert "  | corrupted state" in result.stdout
    assert "FAIL finishes full matches: the bot closed its stream" in result.stdout


@pytest.mark.parametrize(("code", "said"), [
    (None, "still running (it closed its stream without exiting)"),
    (0, "exit code 0"), (3, "exit code 3"), (-9, "killed by signal 9 (SIGKILL)"),
    (137, "exit code 137, i.e. killed by signal 9 (SIGKILL)"),
    (139, "exit code 139, i.e. killed by signal 11 (SIGSEGV)"), (255, "exit code 255"),
])
def test_exit_statuses_read_as_people_say_them(code: int | None, said: str) -> None:
    assert describe_exit(code) == said


def write_log(path: Path, seat: int, decisions: list[tuple[int, float]],
              events: list[dict[str, object]], deadline: float = 1.0) -> Path:
    log = MatchLogWriter(path)
    log.write({"type": "header", "limits": {"decision_deadline": deadline}})
    for record in events:
        log.write({"type": "event", **record})
    for action, latency in decisions:
        log.write({"type": "decision", "seat": seat, "request": 1, "action": action,
                   "name": "x", "source": "bot", "latency_ms": latency})
    log.write({"type": "decision", "seat": 1 - seat, "request": 2, "action": CHALLENGE,
               "name": "x", "source": "in-process", "latency_ms": 0.0})
    log.close()
    return path


def test_habits_are_read_from_the_bots_seat_only(tmp_path: Path) -> None:
    path = write_log(tmp_path / "a.jsonl.gz", 1, [(ACCEPT, 3.0), (ACCEPT, 5.0), (DRAW, 4.0)],
                     [{"event": "UnoCalled", "seat": 1, "counted": True},
                      {"event": "UnoCalled", "seat": 1, "counted": False},
                      {"event": "UnoCaught", "seat": 1}, {"event": "UnoCaught", "seat": 0}])
    found = habits([(path, 1)])
    assert (found.uno_calls, found.uno_missed, found.challenged, found.accepted) == (1, 1, 0, 2)
    assert found.latencies_ms == [3.0, 5.0, 4.0] and found.deadline_ms == 1000.0
    said = warnings(found)
    assert [w.split(":")[0] for w in said] == ["forgot to call UNO 1 of 2 times",
                                               "never challenges a Wild Draw Four (accepted all 2)"]


def test_answers_near_the_deadline_are_warned_about(tmp_path: Path) -> None:
    fast = [10.0] * 94
    near = warnings(Habits(latencies_ms=fast + [600.0] * 6, deadline_ms=1000.0))
    assert len(near) == 1 and near[0].startswith(
        "answers near the deadline: 95% of its answers took up to 600 ms, over half the "
        "1000 ms deadline")
    assert warnings(Habits(latencies_ms=fast + [10.0] + [900.0] * 5, deadline_ms=1000.0)) == []
    assert percentile([5.0, 1.0, 3.0, 2.0, 4.0], 0.95) == 5.0
    assert percentile([1.0] * 19 + [9.0], 0.95) == 1.0


def test_a_stdio_bot_that_times_out_is_told_to_flush() -> None:
    said = warnings(Habits(latencies_ms=[]), stdio=True, timeouts=2)
    assert said == [warning for warning in said if "flush stdout after every answer" in warning]
    assert len(said) == 1
    assert warnings(Habits(latencies_ms=[]), stdio=False, timeouts=2) == []


def test_the_guides_tell_stdio_authors_to_flush() -> None:
    guide = (ROOT / "docs" / "bots.md").read_text()
    assert "Flush stdout after every answer" in guide
    assert "Flush stdout after every answer" in (ROOT / "arena" / "kits" / "stdio" /
                                                 "README.md").read_text()
    assert signal.SIGSEGV.value == 11  # the crash test's figures assume Linux numbering


def test_a_crashed_bots_stderr_is_quoted_with_its_escape_sequences_shown(tmp_path: Path
                                                                         ) -> None:
    """The end of a crashed bot's stderr, quoted in `arena check`'s report: what a terminal
    would run (a window title, a cleared screen) is written as escapes."""
    stderr = tmp_path / "seat0.stderr.log"
    stderr.write_bytes(b"starting\n\x1b]0;pwned\x07oops\x1b[2J\n\xc2\x9bgone\r\n")
    assert stderr_tail(stderr) == ["starting", "\\x1b]0;pwned\\x07oops\\x1b[2J",
                                   "\\x9bgone"]
