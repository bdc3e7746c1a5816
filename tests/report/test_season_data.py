"""What the site reads from a store (``load_season_data``), on stores written here with
the store's own calls."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.league.schedule import schedule
from arena.league.store import MatchRecord, SeasonStore, SeatResult, StoreError
from arena.report.data import load_season_data


def _record(store: SeasonStore, match_id: str, first: int, second: int) -> None:
    """Seat 0 scores ``first`` and seat 1 ``second``; the higher score wins."""
    seats = (SeatResult(0, 1 if first >= second else 2, first, 1, 0, False, ()),
             SeatResult(1, 1 if second >= first else 2, second, 0, 0, False, ()))
    store.record(MatchRecord(match_id, 1.0, 10, 1, False, f"logs/{match_id}.jsonl.gz", seats))


def test_a_deal_finished_by_a_new_version_of_a_bot(tmp_path: Path) -> None:
    """A bot changed between the two matches of a duplicate deal (a run lets the new
    content play its remaining matches): the deal's verdict counts only the bots that
    played all of it, the net points each seat's bot's (the report stopped on it)."""
    store = SeasonStore(tmp_path / "season.sqlite")
    try:
        first = [store.entrant_id(name, "1.0", f"/bots/{name}", "old", {}) for name in "ab"]
        matches = schedule(2, 2, 2, duplicate_deals=True)
        assert matches[0].chance == matches[1].chance  # one deal, both seat orders
        store.schedule(matches, first)
        _record(store, matches[0].match_id, 50, 10)
        changed = [first[0], store.entrant_id("b", "1.0", "/bots/b", "new", {})]
        store.schedule(matches, changed)
        _record(store, matches[1].match_id, 30, 20)
    finally:
        store.close()
    data = load_season_data(tmp_path / "season.sqlite")
    a, old_b, new_b = first[0], first[1], changed[1]
    one, two = data.matches
    assert [r.entrant_id for r in one.results] == [a, old_b]
    assert [r.entrant_id for r in two.results] == [new_b, a]
    assert one.deal_matches == [two.match_id] and two.deal_matches == [one.match_id]
    # Over the deal: a +40 then -10, the old b -40, the new b +10.
    assert one.net == [30, -40] and two.net == [10, 30]
    assert {pair: (record.meetings, record.deals)
            for pair, record in data.head_to_head.items()} == {
        (a, old_b): (1, 0), (old_b, a): (1, 0), (new_b, a): (1, 0), (a, new_b): (1, 0)}


def test_a_table_seating_one_entrant_twice_is_damage(tmp_path: Path) -> None:
    """A table that seats one entrant twice: no schedule writes one (a copy of a bot is an
    entrant of its own), so the store was written by hand, and is named damaged rather
    than read (such tables, and places out of range, would otherwise be believed)."""
    store = SeasonStore(tmp_path / "season.sqlite")
    try:
        a, b = (store.entrant_id(name, "1.0", f"/bots/{name}", "h", {}) for name in "ab")
        matches = schedule(2, 2, 2)
        store.schedule(matches, [a, b])
        _record(store, matches[0].match_id, 50, 10)
        store.schedule(matches[1:], [a, a])  # the second match seats a twice
        _record(store, matches[1].match_id, 30, 20)
    finally:
        store.close()
    with pytest.raises(StoreError, match=r"seats an entrant twice: \[1, 1\]"):
        load_season_data(tmp_path / "season.sqlite")
