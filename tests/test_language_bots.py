"""Bots in any language: the JavaScript and C++ sample bots, and stdio-json bots behind the
bridge (``arena.bots.stdio_bridge``), played as real processes over the referee.

The JavaScript and C++ bots are made ready once per session by their own ``bot.toml``
(``vendor``: ``npm ci``; ``build``: ``cmake``). A missing toolchain fails the tests with
the packages to install: nothing here is skipped.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.protobuf import json_format

from arena.bots.policies import GreedyPolicy
from arena.bots.stdio_bridge import parse_decision
from arena.protocol import pb
from arena.referee import eventloop
from arena.referee.faults import FaultKind
from arena.referee.limits import Limits
from arena.referee.match import InProcessSeat, MatchOutcome, MatchSpec, Seat, run_match
from arena.referee.relay import SeatRelay
from arena.rules.options import OFFICIAL
from arena.sandbox import BotManifest, PlainLauncher, load_manifest
from arena.sandbox.fetch import ecosystems_of
from arena.sandbox.plain import resolve_command

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_bots"
PROTO = ROOT / "protos" / "uno_arena" / "v1" / "referee.proto"
BUILT = ("javascript", "cpp")
STRENGTH_MATCHES = 30

# What each build needs on PATH, and where it comes from on Debian.
TOOLCHAINS = {
    "javascript": (("node", "npm"), "Node.js 18+ and npm (Debian: apt-get install nodejs npm)"),
    "cpp": (("cmake", "c++", "protoc", "grpc_cpp_plugin", "pkg-config"),
            "apt-get install cmake g++ make pkg-config libgrpc++-dev libprotobuf-dev "
            "protobuf-compiler protobuf-compiler-grpc"),
}


def _build(language: str) -> float:
    folder = SAMPLES / language
    manifest = load_manifest(folder)
    tools, install = TOOLCHAINS[language]
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"cannot build the {language} sample bot: {', '.join(missing)} not found "
                    f"on PATH; install {install}", pytrace=False)
    command = manifest.build or manifest.vendor
    started = time.perf_counter()
    try:
        result = subprocess.run(command, cwd=folder, capture_output=True, text=True,
                                timeout=900, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the {language} build ({' '.join(command)}) took over 15 min",
                    pytrace=False)
    if result.returncode != 0:
        output = (result.stdout + result.stderr)[-4000:]
        pytest.fail(f"the {language} sample bot's build step failed "
                    f"({' '.join(command)} in {folder}, exit {result.returncode}); "
                    f"it needs {install}:\n{output}", pytrace=False)
    return time.perf_counter() - started


@pytest.fixture(scope="session")
def bots() -> dict[str, BotManifest]:
    """Every sample bot of this file, the JavaScript and C++ ones built (once)."""
    for language in BUILT:
        seconds = _build(language)
        print(f"\nbuilt the {language} sample bot in {seconds:.1f} s")
    return {
        "javascript": load_manifest(SAMPLES / "javascript"),
        "cpp": load_manifest(SAMPLES / "cpp"),
        "bash": load_manifest(SAMPLES / "bash"),
        "strategist": load_manifest(SAMPLES / "python" / "strategist"),
        "random": load_manifest(SAMPLES / "python" / "random"),
    }


def _play(seats: list[Seat], seed: int, limits: Limits | None = None,
          match_id: str = "") -> MatchOutcome:
    spec = MatchSpec(match_id or f"test-{seed}", seed, len(seats), OFFICIAL,
                     limits or Limits(), None)
    return eventloop.run(run_match(spec, seats))


def _faults(outcome: MatchOutcome) -> list[str]:
    return [f"seat {f.seat} ({outcome.seats[f.seat].name}): {f.kind.name} {f.reason}"
            for report in outcome.seats for f in report.faults]


# -- the sample bots ---------------------------------------------------------------------


@pytest.mark.parametrize("language", BUILT)
def test_proto_copy_is_up_to_date(language: str) -> None:
    copy = SAMPLES / language / "referee.proto"
    assert copy.read_bytes() == PROTO.read_bytes(), (
        f"{copy} differs from {PROTO}: copy it again (cp {PROTO.relative_to(ROOT)} "
        f"{copy.relative_to(ROOT)})")


def test_manifests() -> None:
    javascript, cpp, bash = (load_manifest(SAMPLES / n) for n in ("javascript", "cpp", "bash"))
    assert (javascript.language, javascript.run[0], javascript.build) == (
        "javascript", "node", ())
    assert [e.lockfile for e in ecosystems_of(javascript)] == ["package-lock.json"]
    assert cpp.language == "cpp" and cpp.build and "cmake" in " ".join(cpp.build)
    assert (bash.language, bash.protocol, bash.run) == ("stdio-json", "stdio-json",
                                                         ("bash", "bot.sh"))
    for folder, ignored in (("javascript", "node_modules/"), ("cpp", "build/")):
        assert ignored in (SAMPLES / folder / ".gitignore").read_text().split()


@pytest.mark.parametrize("language", ["javascript", "cpp", "bash"])
def test_sample_bot_passes_arena_check(bots: dict[str, BotManifest], language: str,
                                       tmp_path: Path) -> None:
    # The JavaScript bot's dependencies come from the fetch step: its build is offline.
    result = subprocess.run(
        [sys.executable, "-m", "arena.cli", "check", str(bots[language].folder),
         "--logs", str(tmp_path)],
        capture_output=True, text=True, timeout=300, check=False, cwd=ROOT)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "all checks passed" in output, output


def test_mixed_table_plays_without_faults(bots: dict[str, BotManifest], tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Python, JavaScript, C++ and a bash stdio-json bot at one table, two matches. Each
    gRPC library stays well within its seat's budget: a few of the relay's reads a request,
    where a request's grant pays for 16 (``arena.referee.relay``)."""
    names = ["strategist", "javascript", "cpp", "bash"]
    reads: dict[int, int] = {}
    close = SeatRelay.close

    def closing(relay: SeatRelay) -> None:
        seat = int(relay.upstream.rsplit("seat", 1)[1].removesuffix(".sock"))
        reads[seat] = relay.reads
        assert not relay.flooded
        close(relay)

    monkeypatch.setattr(SeatRelay, "close", closing)
    for index in range(2):
        reads.clear()
        order = names[index:] + names[:index]
        seats: list[Seat] = [PlainLauncher(bots[n], tmp_path / f"match{index}", f"seat{s}-{n}")
                             for s, n in enumerate(order)]
        outcome = _play(seats, 700 + index)
        assert _faults(outcome) == []
        assert all(r.connected and not r.disqualified for r in outcome.seats)
        assert [r.name for r in outcome.seats] == [bots[n].name for n in order]
        assert max(outcome.scores) >= OFFICIAL.target_score or outcome.round_limit_reached
        assert sorted(outcome.places)[0] == 1
        assert set(reads) == {0, 1, 2, 3}
        for report in outcome.seats:
            assert reads[report.seat] <= 4 * report.decisions + 10, (order, reads)
        print(f"\nmixed match {index + 1}: {dict(zip(order, outcome.scores, strict=True))}, "
              f"{outcome.decisions} decisions in {outcome.seconds:.1f} s")


@pytest.mark.parametrize("language", BUILT)
def test_beats_the_random_bot(bots: dict[str, BotManifest], language: str,
                              tmp_path: Path) -> None:
    """≥ 90% of 2-player matches to 500 against the Python random bot, seats alternating."""
    bot, opponent = bots[language], bots["random"]
    wins = 0.0
    started = time.perf_counter()
    for index in range(STRENGTH_MATCHES):
        bot_seat = index % 2
        seats: list[Seat] = [None, None]
        seats[bot_seat] = PlainLauncher(bot, tmp_path, f"m{index}-{bot.name}")
        seats[1 - bot_seat] = PlainLauncher(opponent, tmp_path, f"m{index}-random")
        outcome = _play(seats, 5000 + index, match_id=f"strength-{index}")
        assert not outcome.seats[bot_seat].faults, _faults(outcome)
        if outcome.places[bot_seat] == 1:
            wins += 1 / outcome.places.count(1)
    rate = wins / STRENGTH_MATCHES
    print(f"\n{bot.name} vs random: {wins:g}/{STRENGTH_MATCHES} wins ({rate:.0%}) "
          f"in {time.perf_counter() - started:.1f} s")
    assert rate >= 0.9


# -- the stdio-json bridge ---------------------------------------------------------------


def test_resolve_command_wraps_stdio_bots(tmp_path: Path) -> None:
    manifest = BotManifest(folder=tmp_path, name="b", version="2", language="stdio-json",
                           run=("bash", "bot.sh"), protocol="stdio-json")
    assert resolve_command(manifest) == [
        sys.executable, "-m", "arena.bots.stdio_bridge", "--name", "b", "--version", "2",
        "--", "bash", "bot.sh"]
    grpc_bot = BotManifest(folder=tmp_path, name="b", version="2", language="python",
                           run=("python3", "bot.py"))
    assert resolve_command(grpc_bot) == [sys.executable, "bot.py"]


PARSE_CASES = [
    (b'{"requestId": "7", "actionIndex": 2}\n', pb.Decision(request_id=7, action_index=2), None),
    (b'{"actionIndex": 0}', pb.Decision(request_id=9, action_index=0), None),
    (b'{"request_id": 3, "action_index": 1}', pb.Decision(request_id=3, action_index=1), None),
    (b"1\n", pb.Decision(request_id=9, action_index=1), None),
    (b'{"action": {"kind": "ACTION_KIND_DRAW"}}',
     pb.Decision(request_id=9, action=pb.Action(kind=pb.ACTION_KIND_DRAW)), None),
    (b"draw\n", pb.Decision(request_id=9), "not JSON"),
    (b"-1", pb.Decision(request_id=9), "out of range"),
    (b"true", pb.Decision(request_id=9), "not a JSON object"),
    (b'["actionIndex", 0]', pb.Decision(request_id=9), "not a JSON object"),
    (b'{"actionIndex": "zero"}', pb.Decision(request_id=9), "not a Decision"),
    (b'{"colour": "red"}', pb.Decision(request_id=9), "not a Decision"),
    (b'{"requestId": "4"}', pb.Decision(request_id=9), "no actionIndex"),
    (b"\xff\xfe", pb.Decision(request_id=9), "not JSON"),
    (b"[" * 50000 + b"]" * 50000, pb.Decision(request_id=9), "not JSON"),
    (b'{"action": ' * 500 + b"{}" + b"}" * 500, pb.Decision(request_id=9), "not a Decision"),
]


@pytest.mark.parametrize(("line", "expected", "problem"), PARSE_CASES,
                         ids=[repr(case[0])[:30] for case in PARSE_CASES])
def test_parse_decision(line: bytes, expected: pb.Decision, problem: str | None) -> None:
    decision, why = parse_decision(line, 9)
    assert decision == expected
    assert (why is None) if problem is None else (why is not None and problem in why)


def _stdio_bot(folder: Path, script: str, name: str = "stdio") -> BotManifest:
    """A stdio-json bot folder whose run command is a Python script."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.py").write_text(script)
    (folder / "bot.toml").write_text(
        f'name = "{name}"\nversion = "0"\nlanguage = "stdio-json"\nprotocol = "stdio-json"\n'
        'run = ["python3", "bot.py"]\n')
    return load_manifest(folder)


ANSWER_FIRST = """
import sys
for line in sys.stdin:
    if '"decisionRequest"' in line:
        print('{"actionIndex": 0}', flush=True)
"""

FAST = Limits(decision_deadline=0.5, time_bank=0.0, hello_timeout=5.0)


def _against_provoker(manifest: BotManifest, logs: Path, seed: int = 3,
                      limits: Limits = FAST) -> tuple[MatchOutcome, float]:
    seats: list[Seat] = [PlainLauncher(manifest, logs, f"seat0-{manifest.name}"),
                         InProcessSeat(GreedyPolicy(seed), "greedy")]
    started = time.perf_counter()
    outcome = _play(seats, seed, limits)
    return outcome, time.perf_counter() - started


def test_bridge_sends_canonical_json_lines(tmp_path: Path) -> None:
    record = tmp_path / "received.jsonl"
    bot = _stdio_bot(tmp_path / "bot", f"""
import sys
with open({str(record)!r}, "w") as out:
    for line in sys.stdin:
        out.write(line)
        out.flush()
        if '"decisionRequest"' in line:
            print('{{"actionIndex": 0}}', flush=True)
""")
    # The bridge alone (not the plain launcher, which kills the bot as soon as the match
    # ends): the bot reads everything up to match_end.
    bridge = _BridgeOnly(resolve_command(bot), bot.folder)
    outcome = _play([bridge, InProcessSeat(GreedyPolicy(3), "greedy")], 3)
    assert _faults(outcome) == []
    assert bridge.exit_code == 0
    lines = record.read_text().splitlines()
    messages = [json_format.Parse(line, pb.PlayResponse()) for line in lines]
    assert messages[0].WhichOneof("message") == "match_start"
    assert messages[0].match_start.players[0].name == "stdio"
    assert messages[-1].WhichOneof("message") == "match_end"
    requests = [m for m in messages if m.WhichOneof("message") == "decision_request"]
    assert len(requests) == outcome.seats[0].decisions
    assert '"decisionRequest": {"requestId": "1"' in next(
        line for line in lines if "decisionRequest" in line)


def test_bridge_garbage_is_struck_at_once(tmp_path: Path) -> None:
    bot = _stdio_bot(tmp_path / "bot", """
import sys
for line in sys.stdin:
    if '"decisionRequest"' in line:
        print("I play the red seven", flush=True)
""")
    outcome, seconds = _against_provoker(bot, tmp_path / "logs")
    kinds = [f.kind for f in outcome.seats[0].faults]
    assert kinds == [FaultKind.MALFORMED] * 3 + [FaultKind.STRIKE_LIMIT]
    assert outcome.seats[0].disqualified and outcome.places[0] == 2
    assert seconds < 15  # struck at once, not after deadlines
    stderr = (tmp_path / "logs" / "seat0-stdio.stderr.log").read_text()
    assert "malformed answer (not JSON)" in stderr


def test_bridge_bot_that_dies_is_disqualified(tmp_path: Path) -> None:
    bot = _stdio_bot(tmp_path / "bot", """
import sys
answered = 0
for line in sys.stdin:
    if '"decisionRequest"' in line:
        if answered == 3:
            sys.exit(3)
        answered += 1
        print('{"actionIndex": 0}', flush=True)
""")
    outcome, _ = _against_provoker(bot, tmp_path / "logs")
    faults = outcome.seats[0].faults
    assert [f.kind for f in faults] == [FaultKind.DISCONNECTED]
    assert outcome.seats[0].decisions == 3 and outcome.seats[0].disqualified
    stderr = (tmp_path / "logs" / "seat0-stdio.stderr.log").read_text()
    assert "exit code 3" in stderr


def test_bridge_survives_a_flood(tmp_path: Path) -> None:
    """`yes` floods stdout and never reads stdin: struck for malformed answers,
    disqualified, and the match still finishes."""
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "bot.toml").write_text(
        'name = "flood"\nversion = "0"\nlanguage = "stdio-json"\nprotocol = "stdio-json"\n'
        'run = ["yes", "no no no"]\n')
    outcome, seconds = _against_provoker(load_manifest(folder), tmp_path / "logs")
    kinds = [f.kind for f in outcome.seats[0].faults]
    assert kinds == [FaultKind.MALFORMED] * 3 + [FaultKind.STRIKE_LIMIT]
    assert seconds < 30


def test_bridge_answers_and_ignores_extra_lines(tmp_path: Path) -> None:
    """Lines printed while no decision is pending are dropped, not struck (here, a line
    after each answer, in the same write)."""
    bot = _stdio_bot(tmp_path / "bot", """
import sys
for line in sys.stdin:
    if '"decisionRequest"' in line:
        sys.stdout.write('{"actionIndex": 0}\\nthat was easy\\n')
        sys.stdout.flush()
""")
    outcome, _ = _against_provoker(bot, tmp_path / "logs", limits=Limits())
    assert _faults(outcome) == []
    stderr = (tmp_path / "logs" / "seat0-stdio.stderr.log").read_text()
    assert "dropped a line printed while no decision was pending" in stderr


def test_bridge_wrong_request_id_is_one_strike(tmp_path: Path) -> None:
    """An answer naming another request is forwarded (an out-of-turn strike) and the
    request stays pending, so the bot's next line still answers it."""
    bot = _stdio_bot(tmp_path / "bot", """
import json, sys
first = True
for line in sys.stdin:
    message = json.loads(line)
    if "decisionRequest" in message:
        if first:
            print('{"requestId": "999", "actionIndex": 0}', flush=True)
            first = False
        request_id = message["decisionRequest"]["requestId"]
        print(json.dumps({"requestId": request_id, "actionIndex": 0}), flush=True)
""")
    outcome, _ = _against_provoker(bot, tmp_path / "logs", limits=Limits())
    assert [f.kind for f in outcome.seats[0].faults] == [FaultKind.OUT_OF_TURN]
    assert not outcome.seats[0].disqualified


def test_bridge_late_answer_does_not_desynchronise(tmp_path: Path) -> None:
    """A bot that misses one deadline is struck once; its late answer (with its
    requestId) is not taken as the answer to the next request (sent at the first
    deadline, 1 s, and answered at 1.4 s, in time)."""
    bot = _stdio_bot(tmp_path / "bot", """
import json, sys, time
first = True
for line in sys.stdin:
    message = json.loads(line)
    if "decisionRequest" in message:
        if first:
            time.sleep(1.4)
            first = False
        request_id = message["decisionRequest"]["requestId"]
        print(json.dumps({"requestId": request_id, "actionIndex": 0}), flush=True)
""")
    outcome, _ = _against_provoker(bot, tmp_path / "logs",
                                   limits=Limits(decision_deadline=1.0, time_bank=0.0))
    assert [f.kind for f in outcome.seats[0].faults] == [FaultKind.TIMEOUT]
    assert not outcome.seats[0].disqualified


def test_bridge_long_line_is_one_strike(tmp_path: Path) -> None:
    bot = _stdio_bot(tmp_path / "bot", """
import sys
first = True
for line in sys.stdin:
    if '"decisionRequest"' in line:
        if first:
            sys.stdout.write("x" * 300000 + "\\n")
            first = False
        else:
            sys.stdout.write('{"actionIndex": 0}\\n')
        sys.stdout.flush()
""")
    outcome, _ = _against_provoker(bot, tmp_path / "logs", limits=Limits())
    assert [f.kind for f in outcome.seats[0].faults] == [FaultKind.MALFORMED]
    assert not outcome.seats[0].disqualified


class _BridgeOnly:
    """A launcher that starts the bridge in its own session and, at the end, gives it time
    to finish by itself before killing it: so the test sees what the bridge does to its
    child, not what the launcher's group kill does."""

    def __init__(self, command: list[str], cwd: Path) -> None:
        self.command = command
        self.cwd = cwd
        self.process: subprocess.Popen[bytes] | None = None
        self.exit_code: int | None = None

    def __call__(self, env: dict[str, str], socket_dir: Path) -> _BridgeOnly:
        full_env = {**os.environ, **env}
        self.process = subprocess.Popen(self.command, cwd=self.cwd, env=full_env,
                                        stdin=subprocess.DEVNULL, start_new_session=True)
        return self

    def poll(self) -> int | None:
        assert self.process is not None
        return self.process.poll()

    def kill(self) -> None:
        assert self.process is not None
        try:
            self.exit_code = self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with contextlib.suppress(OSError):  # a zombie is dead
        status = Path(f"/proc/{pid}/stat").read_text().split(") ")[-1].split()[0]
        return status != "Z"
    return True


@pytest.fixture
def leftover_pids() -> Iterator[list[int]]:
    pids: list[int] = []
    yield pids
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def test_bridge_kills_a_bot_that_outlives_the_match(tmp_path: Path,
                                                    leftover_pids: list[int]) -> None:
    pid_file = tmp_path / "child.pid"
    script = tmp_path / "stubborn.py"
    script.write_text(f"""
import os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
open({str(pid_file)!r}, "w").write(str(os.getpid()))
for line in sys.stdin:
    if '"decisionRequest"' in line:
        print('{{"actionIndex": 0}}', flush=True)
while True:  # stdin closed: the match is over, but this bot stays
    time.sleep(1)
""")
    bridge = _BridgeOnly([sys.executable, "-m", "arena.bots.stdio_bridge", "--name", "stubborn",
                          "--", sys.executable, str(script)], tmp_path)
    outcome = _play([bridge, InProcessSeat(GreedyPolicy(1), "greedy")], 11)
    pid = int(pid_file.read_text())
    leftover_pids.append(pid)
    assert _faults(outcome) == []
    assert outcome.seats[0].name == "stubborn"
    assert bridge.exit_code == 0
    assert not _alive(pid), "the bridge left its bot running"
