"""The referee under the variants (docs/rules.md §21-§32): bots declare what they support and
are refused otherwise, before the match; §32's mistake penalty; logs replay; ``arena
check`` exercises the variants' decision kinds; ``arena play`` and seasons refuse early."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.league.driver import run_season
from arena.league.season import SeasonError, load_season
from arena.referee.faults import FaultKind
from arena.referee.log import read_log
from arena.referee.replay import replay
from arena.rules.options import RuleOptions

from .conftest import BOTS, SAMPLES, Tracker, misbehaving, play, sample

HOUSE = RuleOptions(stacking=True, seven_o=True, jump_in=True, target_score=200)


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_a_bot_that_does_not_declare_the_variants_is_refused_at_hello(
        tracker: Tracker) -> None:
    """The hello lists no variants: the bot is not seated, the match goes on without it."""
    started = time.perf_counter()
    outcome = play([tracker.seat(misbehaving("legal"), "old"),
                    tracker.seat(sample("greedy"), "greedy")], options=HOUSE)
    refused = outcome.seats[0]
    assert not refused.connected and refused.disqualified
    assert [f.kind for f in refused.faults] == [FaultKind.UNSUPPORTED_VARIANTS]
    reason = refused.faults[0].reason
    assert "the bot does not support the variant(s) stacking, seven_o, jump_in" in reason
    assert "raw" not in reason  # the hello's name is the bot's word, not the referee's
    assert "declares none" in reason
    assert outcome.places[0] == 2 and not outcome.seats[1].faults
    assert time.perf_counter() - started < 30  # not the hello timeout per decision
    tracker.assert_none_left()


def test_an_old_bot_keeps_working_in_an_official_match(tracker: Tracker) -> None:
    outcome = play([tracker.seat(misbehaving("legal"), "old"),
                    tracker.seat(sample("greedy"), "greedy")])
    assert all(not r.faults and r.connected for r in outcome.seats)


def test_declared_variants_are_seated_and_the_log_replays(tracker: Tracker,
                                                          tmp_path: Path) -> None:
    log = tmp_path / "house.jsonl.gz"
    outcome = play([tracker.seat(sample("strategist"), "s"),
                    tracker.seat(sample("random"), "r"),
                    tracker.seat(misbehaving("legal", variants=True), "raw")],
                   options=HOUSE, log=log)
    assert all(not r.faults for r in outcome.seats)
    asked = {kind for report in outcome.seats for kind in report.asked}
    assert {"STACK_OR_ACCEPT", "CHOOSE_SEAT", "JUMP_IN_OR_PASS"} <= asked
    header = next(read_log(log))
    assert header["rules"] == HOUSE.to_dict()
    assert header["rules"]["stacking"] and header["rules"]["mistake_penalty"] is False
    result = replay(log)
    assert list(result.match.scores) == list(outcome.scores)


def test_mistake_penalty_draws_two_instead_of_a_strike(tracker: Tracker,
                                                       tmp_path: Path) -> None:
    """§32: the illegal answer costs 2 cards, no strike; the default action is played; the
    log's penalty line replays."""
    log = tmp_path / "mistake.jsonl.gz"
    options = RuleOptions(mistake_penalty=True, target_score=100)
    outcome = play([tracker.seat(misbehaving("illegal", variants=True), "illegal"),
                    tracker.seat(sample("greedy"), "greedy")], options=options, log=log)
    report = outcome.seats[0]
    assert report.strikes == 0 and not report.disqualified
    assert [(f.kind, f.penalised, f.strikes) for f in report.faults] == [
        (FaultKind.ILLEGAL_ACTION, True, 0)]
    assert "draws 2 (§32)" in report.faults[0].reason
    records = list(read_log(log))
    penalty = next(i for i, r in enumerate(records) if r["type"] == "penalty")
    assert records[penalty - 1]["type"] == "fault" and records[penalty - 1]["penalised"]
    assert records[penalty + 1]["type"] == "decision"
    assert records[penalty + 1]["source"] == "default"
    mistakes = [r for r in records if r["type"] == "event" and r["event"] == "Drew"
                and r["reason"] == 11]
    assert len(mistakes) == 1 and mistakes[0]["amount"] == 2
    replay(log)


def test_without_the_variant_an_illegal_action_is_a_strike(tracker: Tracker) -> None:
    outcome = play([tracker.seat(misbehaving("illegal", variants=True), "illegal"),
                    tracker.seat(sample("greedy"), "greedy")],
                   options=RuleOptions(target_score=100))
    assert outcome.seats[0].strikes == 1
    assert not outcome.seats[0].faults[0].penalised


# -- arena check, arena play, seasons ----------------------------------------------------


def bot_folder(tmp_path: Path, mode: str, variants: str) -> Path:
    folder = tmp_path / mode
    folder.mkdir()
    (folder / "bot.toml").write_text(
        f'name = "{mode}"\nversion = "1"\nlanguage = "python"\n'
        f'run = ["python3", "misbehave.py", "{mode}", "variants"]\nvariants = [{variants}]\n')
    for script in ("misbehave.py", "rawbot.py"):
        (folder / script).write_text((BOTS / script).read_text())
    return folder


def test_check_fails_a_bot_that_mishandles_a_variant_decision(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, "bad-give_card", '"seven_o", "exchange_on_five"')
    result = arena("check", str(folder), "--logs", str(tmp_path / "logs"), cwd=tmp_path)
    assert result.returncode == 1, result.stdout
    assert "PASS answers choose seat: asked" in result.stdout
    assert "FAIL answers give card: asked" in result.stdout
    assert "answered late, illegally or not at all" in result.stdout
    assert "PASS answers play or draw" in result.stdout
    assert "jump in or pass" not in result.stdout  # not declared: not checked


def test_check_passes_a_bot_that_handles_its_declared_variant(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, "legal", '"jump_in"')
    result = arena("check", str(folder), "--logs", str(tmp_path / "logs"), cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert "PASS answers jump in or pass: asked" in result.stdout
    assert "stack or accept" not in result.stdout


def test_play_refuses_at_start_a_bot_without_the_variants(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, "legal", '"stacking"')
    result = arena("play", str(folder), str(SAMPLES / "greedy"), "--rule", "stacking",
                   "--rule", "seven_o", "--logs", str(tmp_path / "logs"), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1, result.stderr
    assert "arena play: bot legal 1 (" in result.stderr
    assert "does not support the variant(s) seven_o in force" in result.stderr
    assert "declares stacking" in result.stderr
    assert not (tmp_path / "logs").exists()


def test_play_with_variants_writes_them_in_the_log_header(tmp_path: Path) -> None:
    result = arena("play", str(SAMPLES / "strategist"), str(SAMPLES / "greedy"), "--matches",
                   "1", "--target", "100", "--rule", "stacking", "--rule", "seven_o",
                   "--rule", "jump_in", "--logs", str(tmp_path / "logs"), "--sandbox", "plain",
                   cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "house rules: stacking (§21), seven_o (§23), jump_in (§25)" in result.stdout
    header = next(read_log(tmp_path / "logs" / "match-0001.jsonl.gz"))
    assert {k for k, v in header["rules"].items() if v is True} >= {
        "stacking", "seven_o", "jump_in"}
    shown = arena("replay", str(tmp_path / "logs" / "match-0001.jsonl.gz"), cwd=tmp_path)
    assert shown.returncode == 0 and "replay agrees with the log" in shown.stdout


@pytest.mark.parametrize(("rules", "message"), [
    (["--rule", "stackin"], "unknown rule option 'stackin' (did you mean stacking?)"),
    (["--rule", "stack_two_on_four"], "stack_two_on_four is a kind of stacking (§21)"),
    (["--rule", "lazy_scoring", "--rule", "alternative_scoring"],
     "lazy_scoring (§31) scores no points"),
    (["--rule", "rounds=3"], "rounds = 3 only means something with lazy_scoring"),
    (["--rule", "turn_limit"], "turn_limit needs a whole number"),
])
def test_impossible_rules_are_one_clear_line(tmp_path: Path, rules: list[str],
                                             message: str) -> None:
    result = arena("simulate", "greedy", "random", *rules, cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr and result.stderr.count("\n") == 1, result.stderr


def test_a_season_refuses_before_the_first_match(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, "legal", '"stacking"')
    path = tmp_path / "season.toml"
    path.write_text(f"""
[season]
name = "house"
entrants = ["{folder}", "{SAMPLES / 'greedy'}"]
[rules]
stacking = true
jump_in = true
[output]
folder = "{tmp_path / 'out'}"
""")
    season = load_season(path)
    with pytest.raises(SeasonError) as caught:
        run_season(season)
    assert "entrant legal 1" in str(caught.value)
    assert "does not support the variant(s) jump_in" in str(caught.value)
    assert not (tmp_path / "out").exists()
    result = arena("season", "run", str(path), cwd=tmp_path)
    assert result.returncode == 2
    assert "does not support the variant(s) jump_in" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_season_file_sets_variants_in_its_rules_table(tmp_path: Path) -> None:
    path = tmp_path / "season.toml"
    body = f"""
[season]
name = "house"
entrants = ["{SAMPLES / 'greedy'}", "{SAMPLES / 'random'}"]
[rules]
{{rules}}
"""
    path.write_text(body.format(rules="stacking = true\nlazy_scoring = true\nrounds = 3"))
    rules = load_season(path).rules
    assert (rules.stacking, rules.lazy_scoring, rules.rounds) == (True, True, 3)
    path.write_text(body.format(rules="stack_two_on_four = true"))
    with pytest.raises(SeasonError) as caught:
        load_season(path)
    assert "[rules] stack_two_on_four is a kind of stacking (§21)" in str(caught.value)
