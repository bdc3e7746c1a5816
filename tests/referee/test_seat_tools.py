"""``arena inspect``, ``arena refeed``, ``arena view`` and the match pages of ``arena play``:
the tools a bot author reaches for to see why a bot played as it did."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from arena.referee.log import decode_answer, decode_asked, read_log
from arena.report.matchpage import read_data_script
from arena.rules.options import RuleOptions
from tests.referee.conftest import ROOT, Tracker, misbehaving, play, sample

SAMPLES = ROOT / "sample_bots"


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def faulty_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A short match of greedy (seat 0) against a bot that answers its 3rd request with
    an illegal index (seat 1); the bots' output kept beside the log, as a season does."""
    folder = tmp_path_factory.mktemp("faulty")
    log = folder / "m001.jsonl.gz"
    tracker = Tracker(folder / "m001")
    try:
        play([tracker.seat(sample("greedy"), "seat0-greedy"),
              tracker.seat(misbehaving("illegal"), "seat1-illegal")], seed=3, log=log,
             options=RuleOptions(target_score=100))
    finally:
        for process in tracker.processes:
            process.kill()
    return log


def one_line_error(result: subprocess.CompletedProcess[str], command: str) -> str:
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"arena {command}: "), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def test_inspect_prints_the_seats_decisions(faulty_log: Path, tmp_path: Path) -> None:
    result = arena("inspect", str(faulty_log), "--seat", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    decisions = [r for r in read_log(faulty_log) if r["type"] == "decision" and r["seat"] == 1]
    assert out.splitlines()[0] == (f"{faulty_log}: seat 1 (raw), {len(decisions)} "
                                   "decisions")
    assert len(re.findall(r"^decision \d+: ", out, re.M)) == len(decisions)
    # The fault, then the decision it was made in: what was asked, the legal options, the
    # bot's answer and who made the move.
    fault = out.index("FAULT illegal_action: action index 999 out of range")
    third = out[fault:].split("\ndecision 4:")[0]
    assert third.split("\n")[1].startswith("decision 3: ")
    asked = decode_asked(decisions[2])
    assert asked is not None
    assert f"(request {asked.request_id})" in third
    assert "  hand: " in third and "  legal: [0] " in third
    assert "  answer: option 999 (there are" in third
    assert "made by DEFAULT (the referee, after a fault)" in third
    assert re.search(r"\d+\.\d ms of a 300 ms deadline, time bank left 0\.00 s", third)
    assert "made by the bot" in out


def test_inspect_into_a_closed_pipe_is_quiet(faulty_log: Path, tmp_path: Path) -> None:
    """``arena inspect LOG --seat 1 | head -1``: the reader goes away, nothing is said."""
    process = subprocess.Popen([sys.executable, "-m", "arena.cli", "inspect", str(faulty_log),
                                "--seat", "1"], cwd=tmp_path, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # long before the command has loaded: its first write breaks
    error = process.stderr.read()
    assert process.wait(timeout=60) == 141, error
    assert error == ""


def test_inspect_and_refeed_errors_are_one_line(faulty_log: Path, tmp_path: Path) -> None:
    missing = tmp_path / "nothing.jsonl.gz"
    assert "no such match log" in one_line_error(
        arena("inspect", str(missing), "--seat", "0", cwd=tmp_path), "inspect")
    damaged = tmp_path / "damaged.jsonl.gz"
    damaged.write_bytes(faulty_log.read_bytes()[:400])
    assert "damaged match log" in one_line_error(
        arena("inspect", str(damaged), "--seat", "0", cwd=tmp_path), "inspect")
    not_gzip = tmp_path / "text.jsonl.gz"
    not_gzip.write_text("hello\n")
    assert "damaged match log" in one_line_error(
        arena("inspect", str(not_gzip), "--seat", "0", cwd=tmp_path), "inspect")
    assert "no seat 5; this match had seats 0 to 1" in one_line_error(
        arena("inspect", str(faulty_log), "--seat", "5", cwd=tmp_path), "inspect")
    bot = str(SAMPLES / "python" / "greedy")
    assert "no seat 2" in one_line_error(
        arena("refeed", str(faulty_log), "--seat", "2", "--decision", "1", bot,
              cwd=tmp_path), "refeed")
    line = one_line_error(arena("refeed", str(faulty_log), "--seat", "0", "--decision",
                                "9999", bot, cwd=tmp_path), "refeed")
    assert re.search(r"seat 0 made \d+ decision\(s\); --decision 9999 is out of range", line)
    assert "out of range" in one_line_error(
        arena("refeed", str(faulty_log), "--seat", "0", "--decision", "0", bot,
              cwd=tmp_path), "refeed")
    assert "no such match log" in one_line_error(
        arena("refeed", str(missing), "--seat", "0", "--decision", "1", bot, cwd=tmp_path),
        "refeed")


def test_a_log_with_a_damaged_line_is_one_line_too(faulty_log: Path, tmp_path: Path
                                                   ) -> None:
    """Whole gzip and JSON, but a decision line without its seat, and one whose wire
    request is not base64: one line each, never a traceback."""
    records = list(read_log(faulty_log))
    for damage in ("no seat", "bad wire"):
        lines = []
        for record in records:
            if record["type"] == "decision" and record["seat"] == 1 and record["request"] == 1:
                if damage == "no seat":
                    record = {k: v for k, v in record.items() if k != "seat"}
                else:
                    record = {**record, "asked": "%%% not base64"}
            lines.append(json.dumps(record))
        log = tmp_path / f"{damage.replace(' ', '-')}.jsonl.gz"
        log.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
        viewed = arena("view", str(log), "--out", str(tmp_path / "pages"), cwd=tmp_path)
        inspected = arena("inspect", str(log), "--seat", "1", cwd=tmp_path)
        if damage == "no seat":
            assert "a damaged match log" in one_line_error(viewed, "view")
            assert "a damaged match log" in one_line_error(inspected, "inspect")
        else:  # the rest of the log is fine: the damaged request is said where it is
            assert viewed.returncode == 0, viewed.stderr
            assert inspected.returncode == 0, inspected.stderr
            assert "the logged request is damaged: a damaged wire message" in inspected.stdout


def test_refeed_of_a_fault_gives_the_bots_answer_beside_the_logged_one(
        faulty_log: Path, tmp_path: Path) -> None:
    """Re-fed the decision it answered illegally, the fault-free greedy answers legally:
    the answers differ, and say so (exit code 1)."""
    result = arena("refeed", str(faulty_log), "--seat", "1", "--decision", "3",
                   str(SAMPLES / "python" / "greedy"), "--logs", str(tmp_path / "out"),
                   "--sandbox", "plain", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "  logged answer: option 999 (out of range 0..3)" in result.stdout
    assert re.search(r"  bot's answer:  \S.* \(\d+\.\d ms\)", result.stdout)
    assert result.stdout.rstrip().endswith("DIFFERENT answer")


def seat_decisions(log: Path, seat: int) -> list[dict]:
    return [r for r in read_log(log) if r["type"] == "decision" and r["seat"] == seat]


def seat_named(log: Path, name: str) -> int:
    seats = next(r["seats"] for r in read_log(log) if r["type"] == "seats")
    return next(s["seat"] for s in seats if s["name"] == name)


def play_log(bot: str, folder: Path, least_decisions: int = 4) -> tuple[Path, int]:
    """A short match of the sample bot ``bot`` against greedy, by `arena play`, in which
    ``bot`` made at least ``least_decisions`` decisions: the log and the bot's seat. The
    deals are secret, so a match to 100 can end before a seat has played that often: of
    three matches (the seats alternate), the one where ``bot`` decided most."""
    result = arena("play", str(SAMPLES / bot), str(SAMPLES / "python" / "greedy"),
                   "--matches", "3", "--target", "100", "--logs", str(folder),
                   "--build-network", cwd=folder.parent)
    assert result.returncode == 0, result.stdout + result.stderr
    logs = sorted(folder.glob("match-*.jsonl.gz"))
    assert len(logs) == 3
    name = next(r["seats"][0]["name"] for r in read_log(logs[0]) if r["type"] == "seats")
    plays = [(log, seat_named(log, name)) for log in logs]
    log, seat = max(plays, key=lambda play: len(seat_decisions(*play)))
    assert len(seat_decisions(log, seat)) >= least_decisions
    return log, seat


# The deterministic sample bots: their answer is a function of the request and their seed.
# The JavaScript and C++ strategists break exact ties with their seeded generator, which
# every play with a coloured card advances: from a fresh start they give the logged answer
# unless an earlier decision of the match drew from it and the current one has a tie, so
# the first decisions are checked. The random bot draws every answer from its generator:
# only its first decision (a fresh generator, as in the match) is reproducible.
REFEEDS = {"python/greedy": (1, 2, 3, -1), "python/strategist": (1, 2, 3, -1),
           "bash": (1, 2, -1), "javascript": (1, 2, 3, -1), "cpp": (1, 2, 3, -1),
           "python/random": (1, 2, 3, -1)}


def test_the_sdks_generator_is_a_function_of_the_seed_and_the_observation() -> None:
    """``turn.rng`` starts from the same state for the same match seed and observation,
    however many decisions the bot made before (what ``arena refeed`` needs of it), and
    from another state for another observation or seed; the in-process random policy
    draws as the random sample does through it."""
    import random

    from arena.bots.policies import RandomPolicy
    from arena.bots.sdk import Turn
    from arena.protocol import pb
    from arena.protocol.convert import decision_request
    from arena.protocol.wire import observation_bytes
    from arena.rules import Match

    match = Match(2, random.Random(5))
    observations = []
    while len(observations) < 6:
        observations.append((match.observation(match.current_seat), match.legal_actions()))
        match.apply(match.legal_actions()[0])

    def turn(seed: int, request_id: int, index: int) -> Turn:
        observation, legal = observations[index]
        request = decision_request(request_id, observation, legal, 1000, 1000)
        return Turn(request, observation, legal, [], pb.MatchStart(seed=seed))

    def draws(seed: int, request_id: int, index: int) -> list[float]:
        return [turn(seed, request_id, index).rng.random() for _ in range(3)]

    top = 2**64 - 1
    assert draws(top, 7, 0) == draws(top, 99, 0)
    assert len({tuple(draws(seed, 1, index)) for seed in (0, 1, top)
                for index in range(6)}) == 18
    for seed in (0, 3, top):
        for index, (observation, legal) in enumerate(observations):
            assert RandomPolicy(seed).decide(observation, legal) == (
                turn(seed, index + 1, index).rng.choice(legal))
            assert (turn(seed, 1, index).request.observation.SerializeToString()
                    == observation_bytes(observation))


@pytest.mark.parametrize("bot", list(REFEEDS))
def test_refeed_reproduces_the_logged_answer(bot: str, tmp_path: Path) -> None:
    # The deals come from a fresh secret key, kept beside the logs: refeed finds it and
    # gives the bot its own match seed (the random bot's first answer depends on it).
    log, seat = play_log(bot, tmp_path / "play", max(REFEEDS[bot]))
    decisions = seat_decisions(log, seat)
    assert all(r["source"] == "bot" for r in decisions)
    for number in REFEEDS[bot]:
        number = number if number > 0 else len(decisions)
        result = arena("refeed", str(log), "--seat", str(seat), "--decision", str(number),
                       str(SAMPLES / bot), "--logs", str(tmp_path / "refeed"),
                       "--build-network", cwd=tmp_path)
        assert result.returncode == 0, (number, result.stdout + result.stderr)
        assert result.stdout.rstrip().endswith("same answer")
        answer = decode_answer(decisions[number - 1])
        asked = decode_asked(decisions[number - 1])
        assert answer is not None and asked is not None
        assert f"(request {asked.request_id})" in result.stdout


def test_view_renders_a_logs_match_pages(faulty_log: Path, tmp_path: Path) -> None:
    out = tmp_path / "pages"
    result = arena("view", str(faulty_log), "--out", str(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [str(out / "matches" / "m001.html"),
                                          f"index: {out / 'index.html'}"]
    match_page = (out / "matches" / "m001.html").read_text()
    replay_page = (out / "replays" / "m001.html").read_text()
    data = read_data_script((out / "replays" / "m001.js").read_text())
    # The fault is linked from the match page to its step in the replay.
    anchor = re.search(r'href="\.\./replays/m001\.html#(round-\d+-step-\d+)">see it in the '
                       r'replay</a>', match_page)
    assert anchor and data["marks"][0]["a"] == anchor.group(1)
    assert '<svg class="chart time-chart"' in match_page
    # The replay page loads its data from the file beside it, not inline.
    assert '<script src="m001.js"></script>' in replay_page
    assert "arenaReplay" not in replay_page
    # Each seat's view, decoded: the faulty seat's third decision.
    views = [v for v in data["decisions"] if v["s"] == 1]
    assert views[2]["src"] == "default" and "out of range" in views[2]["ans"]
    assert views[2]["lg"] and views[2]["h"]
    # The bots' stderr, from the bot output kept beside the log.
    assert data["stderr"] == [
        (faulty_log.parent / "m001" / f"seat{s}-{n}.stderr.log").read_text()
        for s, n in ((0, "greedy"), (1, "illegal"))]
    # Without JavaScript: the moves as a list, the default marked.
    noscript = replay_page[replay_page.index("<noscript>"):]
    steps = sum(len(r["steps"]) for r in data["rounds"])
    assert noscript.count("<li id=\"round-") == steps
    assert '<span class="badge bad">default</span>' in noscript
    assert (out / "index.html").is_file() and (out / "logs" / "m001.jsonl.gz").is_file()


def test_view_of_an_older_log_without_the_seats_view(faulty_log: Path, tmp_path: Path
                                                      ) -> None:
    """A log of the older format, without the seat's view (latency on the decision line, no
    request, no timing lines), renders and inspects."""
    old = tmp_path / "old.jsonl.gz"
    lines = []
    for record in read_log(faulty_log):
        if record["type"] == "timing":
            continue
        if record["type"] == "decision":
            record.pop("asked", None)
            record.pop("answer", None)
            record["latency_ms"] = 1.5
        lines.append(json.dumps(record, separators=(",", ":")))
    old.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    result = arena("view", str(old), "--out", str(tmp_path / "pages"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    data = read_data_script((tmp_path / "pages" / "replays" / "old.js").read_text())
    assert all("k" not in v and v["l"] == 1.5 for v in data["decisions"])
    inspected = arena("inspect", str(old), "--seat", "1", cwd=tmp_path)
    assert inspected.returncode == 0, inspected.stderr
    assert "this log does not keep the request" in inspected.stdout


def test_play_writes_the_match_pages(tmp_path: Path) -> None:
    folder = tmp_path / "play"
    result = arena("play", str(SAMPLES / "python" / "greedy"),
                   str(SAMPLES / "python" / "strategist"), "--matches", "2", "--target",
                   "100", "--logs", str(folder), "--sandbox", "plain", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"match pages: {folder / 'html' / 'index.html'}" in result.stdout.replace("\n", "")
    for match in ("match-0001", "match-0002"):
        for page in (f"matches/{match}.html", f"replays/{match}.html", f"replays/{match}.js"):
            assert (folder / "html" / page).is_file(), page
    assert "match-0002.html" in (folder / "html" / "index.html").read_text()


def test_arena_play_names_each_seat_by_its_bot_toml_not_its_hello(tmp_path: Path) -> None:
    """The greedy sample's hello always says "greedy": entered as "honest" (its bot.toml),
    the log, the summary and the other seat know it as that, as a hello could name its
    seat anything, another entrant or a verdict on one."""
    import shutil

    folder = tmp_path / "honest"
    shutil.copytree(SAMPLES / "python" / "greedy", folder)
    toml = folder / "bot.toml"
    toml.write_text(toml.read_text().replace('name = "greedy"', 'name = "honest"'))
    result = arena("play", str(folder), str(SAMPLES / "python" / "random"), "--matches", "1",
                   "--target", "50", "--logs", str(tmp_path / "logs"), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "honest 1.0" in result.stdout
    seats = next(r["seats"] for r in read_log(tmp_path / "logs" / "match-0001.jsonl.gz")
                 if r["type"] == "seats")
    assert [s["name"] for s in seats] == ["honest", "random"]
