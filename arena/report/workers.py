"""Work done by forked helper processes while the render goes on: they start from
everything the render has read, and only what they return is pickled."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any, TypeVar

T = TypeVar("T")

_WORK: list[Callable[[], Any]] = []
"""What the helpers ``meanwhile`` forks will do (set just before they are forked)."""


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
        os.cpu_count() or 1)


@contextlib.contextmanager
def meanwhile(works: Sequence[Callable[[], Any]]) -> Iterator[list[Future[Any]]]:
    """Do ``works`` in forked helper processes, one each, while the caller goes on; the
    context ends when they all are done. On a machine of one core each work is done in
    this process when its result is asked for."""
    if cores() < 2 or not works:
        yield [_Later(work) for work in works]
        return
    global _WORK
    _WORK = list(works)
    try:
        with ProcessPoolExecutor(len(works), mp_context=get_context("fork")) as pool:
            # A fork-context pool forks all its processes at the first submit.
            jobs = [pool.submit(_do_work, index) for index in range(len(works))]
            _WORK = []
            yield jobs
    finally:
        _WORK = []


def _do_work(index: int) -> Any:
    return _WORK[index]()


class _Later(Future[T]):
    """A work done in this process when its result is first asked for."""

    def __init__(self, work: Callable[[], T]) -> None:
        super().__init__()
        self._work: Callable[[], T] | None = work

    def result(self, timeout: float | None = None) -> T:
        if self._work is not None:
            work, self._work = self._work, None
            try:
                self.set_result(work())
            except BaseException as error:
                self.set_exception(error)
        return super().result(timeout)


class Ends:
    """The two ends of a list of work two processes share (forked after it is made): one
    takes from the front, the other from the back, until they meet; each item is taken
    once, by whichever process is free first."""

    def __init__(self, count: int) -> None:
        self._ends: Any = get_context("fork").Array("q", [0, count])

    def take(self, back: bool) -> int | None:
        with self._ends.get_lock():
            front, end = self._ends[0], self._ends[1]
            if front >= end:
                return None
            if back:
                self._ends[1] = end - 1
                return int(end - 1)
            self._ends[0] = front + 1
            return int(front)
