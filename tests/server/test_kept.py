"""The server's small keyed cache (``arena.server.kept.Kept``)."""

from __future__ import annotations

from arena.server.kept import Kept


def test_the_least_recently_used_goes_first() -> None:
    kept: Kept[str, int] = Kept(2)
    kept.put("a", 1)
    kept.put("b", 2)
    assert kept.get("a") == 1  # now the most recent
    kept.put("c", 3)
    assert "b" not in kept and kept.get("a") == 1 and kept.get("c") == 3


def test_make_computes_once_per_key() -> None:
    kept: Kept[str, list[int]] = Kept(4)
    calls: list[str] = []

    def compute() -> list[int]:
        calls.append("x")
        return [1]

    first = kept.make("k", compute)
    assert kept.make("k", compute) is first and calls == ["x"]


def test_drop_forgets_only_the_value_it_was_given() -> None:
    kept: Kept[str, list[int]] = Kept(4)
    old, new = [1], [2]
    kept.put("k", old)
    kept.put("k", new)  # another thread's, since
    kept.drop("k", old)
    assert kept.get("k") is new
    kept.drop("k", new)
    assert kept.get("k") is None
    kept.put("k", old)
    kept.clear()
    assert "k" not in kept
