"""The match pages' fast paths (a full report of a large season is mostly its match pages)
give what the plain ways give: a log's lines read as ``json`` reads them, the replay's
data file read back to the same value, each event line's step (made once a distinct line)
equal to the step made afresh, and the move list written as a template loop writes it."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jinja2 import Environment, select_autoescape

from arena.bots.policies import GreedyPolicy, RandomPolicy
from arena.referee.log import parse_line, read_log
from arena.referee.match import InProcessSeat
from arena.report.matchmodel import event_step, read_model
from arena.report.matchpage import data_script, read_data_script, render_logs, seat_names
from arena.report.templating import move_items
from arena.rules.options import RuleOptions
from tests.referee.conftest import play


def same(a: Any, b: Any) -> bool:
    """Equal, NaN equal to NaN, and of the same types (1 is not 1.0)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def json_values(finite: bool) -> st.SearchStrategy[Any]:
    """JSON values, integers past 64 bits included; NaN and infinities unless ``finite``."""
    return st.recursive(
        st.none() | st.booleans() | st.integers(-(2 ** 70), 2 ** 70)
        | st.floats(allow_nan=not finite, allow_infinity=not finite) | st.text(),
        lambda inner: (st.lists(inner, max_size=4)
                       | st.dictionaries(st.text(), inner, max_size=4)),
        max_leaves=12)


JSON_VALUES = json_values(finite=False)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES, st.booleans())
def test_a_line_reads_as_json_reads_it(value: Any, ascii_only: bool) -> None:
    """NaN, infinities, integers past 64 bits and lone surrogates (which orjson refuses)
    included."""
    line = (json.dumps(value, ensure_ascii=ascii_only) + "\n").encode("utf-8", "surrogatepass")
    assert same(parse_line(line), json.loads(line))


@pytest.mark.parametrize("line", [b'{"type": "event"', b"", b"nul", b'{"a": 1}}', b"[1,]",
                                  b'{"a": "\\x"}', b'{"a": "\xff"}', b'{"a": 1}\r{"b": 2}',
                                  b"\x00"], ids=repr)
def test_a_damaged_line_raises_what_json_raises(line: bytes) -> None:
    with pytest.raises(ValueError) as plain:
        json.loads(line)
    with pytest.raises(ValueError) as fast:
        parse_line(line)
    assert type(fast.value) is type(plain.value)
    assert str(fast.value) == str(plain.value)


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("fast-paths")
    out = []
    for seed in (1, 2):
        log = folder / f"m{seed}.jsonl.gz"
        play([InProcessSeat(GreedyPolicy(seed), "greedy ünï"), InProcessSeat(
            RandomPolicy(seed), "random <&>")], seed=seed, log=log,
             options=RuleOptions(target_score=200))
        out.append(log)
    return out


def test_each_event_step_is_the_step_made_afresh(logs: list[Path]) -> None:
    for log in logs:
        records = list(read_log(log))
        names = seat_names(records)
        events = [r for r in records if r["type"] == "event"]
        assert len({repr(r) for r in events}) < len(events)  # lines repeat: the cache is used
        model = read_model(records, names)
        steps = [step for round_ in model.data["rounds"] for step in round_["steps"]
                 if step["e"] != "Fault"]
        assert len(steps) == len(events)
        for step, record in zip(steps, events, strict=True):
            fresh = event_step(record, names)
            assert {k: v for k, v in step.items() if k not in ("dv", "l")} == fresh
        # Steps of the same line are distinct steps: each keeps its own decision.
        decided = [s for s in steps if "dv" in s]
        assert len({s["dv"] for s in decided}) == len(decided)


def test_the_replay_data_reads_back_as_it_was(logs: list[Path]) -> None:
    for log in logs:
        records = list(read_log(log))
        model = read_model(records, seat_names(records))
        text = data_script(model.data)
        assert read_data_script(text) == json.loads(json.dumps(model.data))
        assert "greedy ünï" in text  # UTF-8, as the file is written


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(), json_values(finite=True), max_size=4))
def test_any_replay_data_reads_back_as_it_was(value: dict[str, Any]) -> None:
    # Integers past 64 bits included: orjson refuses them, json writes them.
    assert same(read_data_script(data_script(value)), value)


def test_nan_and_infinities_are_written_as_null() -> None:
    text = data_script({"l": [math.nan, math.inf, -math.inf, 1.5]})
    assert read_data_script(text) == {"l": [None, None, None, 1.5]}


def test_a_log_holding_an_integer_past_64_bits_is_viewed(logs: list[Path],
                                                          tmp_path: Path) -> None:
    records = list(read_log(logs[0]))
    ended = next(r for r in records if r.get("event") == "RoundEnded")
    ended["scores"] = [2 ** 70, *ended["scores"][1:]]
    crafted = tmp_path / "crafted.jsonl.gz"
    with gzip.open(crafted, "wt", encoding="utf-8") as out:
        out.writelines(json.dumps(r) + "\n" for r in records)
    render_logs([crafted], tmp_path / "site")
    data = read_data_script((tmp_path / "site" / "replays" / "crafted.js").read_text())
    assert str(2 ** 70) in json.dumps(data)


LOOP = ('{% for line in lines %}<li id="{{ line.anchor }}"{% if line.fault %} class="bad"'
        '{% endif %}>{{ line.text }}{% if line.source in ("default", "autopilot") %} '
        '<span class="badge bad">{{ line.source }}</span>{% endif %}</li>{% endfor %}')
"""The replay page's move list as its template wrote it before ``move_items``."""


def test_the_move_list_is_what_its_template_loop_wrote(logs: list[Path]) -> None:
    template = Environment(autoescape=select_autoescape(default_for_string=True)
                           ).from_string(LOOP)
    tricky = [{"anchor": "round-1-step-1", "text": 'a <b> & "c" \'d\'', "fault": True,
               "source": "default"},
              {"anchor": "round-1-step-2", "text": "x", "fault": False, "source": "autopilot"},
              {"anchor": "round-1-step-3", "text": "y", "fault": False, "source": "bot"},
              {"anchor": "round-1-step-4", "text": "z", "fault": False, "source": None}]
    rounds = [tricky]
    for log in logs:
        records = list(read_log(log))
        rounds += [r["lines"] for r in read_model(records, seat_names(records)).moves]
    for lines in rounds:
        assert str(move_items(lines)) == template.render(lines=lines)
