"""The last few values computed, by key, shared by the server's threads: the ladder's
ratings and its settled checkpoints, match pages' models, the tokens checked."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

Key = TypeVar("Key", bound=Hashable)
Value = TypeVar("Value")


class Kept(Generic[Key, Value]):
    """At most ``most`` values, the least recently used dropped first. A value is computed
    outside the lock (two threads may both compute it: the values kept are pure functions
    of their keys, so either will do)."""

    def __init__(self, most: int) -> None:
        self.most = most
        self._values: OrderedDict[Key, Value] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Key) -> Value | None:
        with self._lock:
            if key not in self._values:
                return None
            self._values.move_to_end(key)
            return self._values[key]

    def put(self, key: Key, value: Value) -> None:
        with self._lock:
            self._values[key] = value
            self._values.move_to_end(key)
            while len(self._values) > self.most:
                self._values.popitem(last=False)

    def make(self, key: Key, compute: Callable[[], Value]) -> Value:
        """The value kept for ``key``, or ``compute()`` kept for it."""
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return self._values[key]
        value = compute()
        self.put(key, value)
        return value

    def drop(self, key: Key, value: Value) -> None:
        """Forget ``key`` if it still holds ``value`` (not one another thread put since)."""
        with self._lock:
            if self._values.get(key) is value:
                del self._values[key]

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._values

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
