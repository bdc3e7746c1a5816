"""The site's templates are compiled once and kept (compiling them takes a quarter of a
second of every report, view and server start): a later process loads them compiled and
renders the same pages; a damaged, unwritable or foreign-writable cache is no cache, never
an error."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from jinja2 import DictLoader, Environment

from arena.report import bytecode
from arena.report.bytecode import CACHE_VARIABLE, bytecode_cache
from arena.report.logcheck import LogProblem
from arena.report.templating import environment, templates_version


def templates(env: Environment) -> list[str]:
    return [name for name in env.list_templates() if name.endswith(".html")]


def code(env: Environment, name: str) -> bytes:
    """The bytecode a template's pages are rendered by."""
    return env.get_template(name).root_render_func.__code__.co_code


def compile_refused(*_: Any, **__: Any) -> Any:
    raise AssertionError("a template was compiled though a compiled copy was kept")


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_VARIABLE, str(folder))
    return folder


def test_a_later_environment_loads_every_template_compiled(cache: Path) -> None:
    first = environment()
    for name in templates(first):
        first.get_template(name)
    kept = sorted(cache.glob("*.cache"))
    assert len(kept) == len(templates(first)), "one compiled file a template"
    assert all(p.name.startswith(templates_version()) for p in kept)
    later = environment()
    later.compile = compile_refused  # type: ignore[method-assign]
    for name in templates(later):
        later.get_template(name)
    assert all(code(first, name) == code(later, name) for name in templates(first))


def test_pages_rendered_from_the_cache_are_the_pages_compiled_afresh(
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    context = {"root": "../", "page": "x", "problem": None}
    warm = environment()
    warm.get_template("_log_problems.html")
    from_cache = environment()
    from_cache.compile = compile_refused  # type: ignore[method-assign]
    monkeypatch.setenv(CACHE_VARIABLE, "off")
    fresh = environment()
    assert fresh.bytecode_cache is None
    problems = {"m1": LogProblem("m1", "damaged", "cut short <here>", "logs/m1")}
    pages = [env.get_template("_log_problems.html").render(log_problems=problems, **context)
             for env in (from_cache, fresh)]
    assert "cut short &lt;here&gt;" in pages[0]
    assert pages[0] == pages[1]


@pytest.mark.parametrize("damage", [
    b"",                                   # emptied
    b"garbage, not a cache file at all",   # overwritten
    b"j2\x80\x04not a pickle",             # a magic-looking start, then nonsense
], ids=["emptied", "overwritten", "magic-then-nonsense"])
def test_a_damaged_cache_file_is_compiled_again(cache: Path, damage: bytes) -> None:
    first = environment()
    expected = code(first, "bot.html")
    for path in cache.glob("*.cache"):
        path.write_bytes(damage)
    again = environment()
    assert code(again, "bot.html") == expected
    # ... and the cache is mended for the next process.
    mended = environment()
    mended.compile = compile_refused  # type: ignore[method-assign]
    mended.get_template("bot.html")


def test_a_truncated_cache_file_is_compiled_again(cache: Path) -> None:
    expected = code(environment(), "standings.html")
    for path in cache.glob("*.cache"):
        path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    assert code(environment(), "standings.html") == expected


def test_no_cache_where_the_folder_cannot_be_made(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(CACHE_VARIABLE, str(blocker / "cache"))
    assert bytecode_cache("v") is None
    monkeypatch.setenv(CACHE_VARIABLE, str(blocker))
    assert bytecode_cache("v") is None
    env = environment()
    assert env.bytecode_cache is None
    assert env.get_template("bot.html") is not None


def test_no_cache_for_a_user_with_no_home(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.delenv(CACHE_VARIABLE, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(Path, "home", no_home)
    assert bytecode_cache("v") is None
    assert environment().get_template("bot.html") is not None


def test_no_cache_in_a_folder_others_can_write_to(cache: Path) -> None:
    cache.mkdir()
    for mode in (0o777, 0o770, 0o722):
        os.chmod(cache, mode)
        assert bytecode_cache("v") is None, oct(mode)
    os.chmod(cache, 0o700)
    assert bytecode_cache("v") is not None


def test_no_cache_through_a_symbolic_link(cache: Path, tmp_path: Path) -> None:
    real = tmp_path / "elsewhere"
    real.mkdir(mode=0o700)
    cache.symlink_to(real)
    assert bytecode_cache("v") is None


def test_a_cache_that_cannot_be_written_is_no_error(
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full_disk(*_: Any, **__: Any) -> Any:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tempfile, "NamedTemporaryFile", full_disk)
    env = environment()
    assert env.bytecode_cache is not None
    assert env.get_template("matches.html") is not None
    assert not list(cache.glob("*.cache"))


def test_the_default_folder_is_the_users_cache(monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    monkeypatch.delenv(CACHE_VARIABLE, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert bytecode.cache_folder() == tmp_path / "uno-arena" / "templates"
    assert bytecode_cache("v") is not None
    assert (tmp_path / "uno-arena" / "templates").stat().st_mode & 0o777 == 0o700


def test_code_of_another_version_never_loads_these(cache: Path) -> None:
    one, other = bytecode_cache("version-one"), bytecode_cache("version-two")
    assert one is not None and other is not None
    names = {"a.html": "{{ 1 + 1 }}"}
    Environment(loader=DictLoader(names), bytecode_cache=one).get_template("a.html")
    assert [p.name.split("-")[:2] for p in cache.glob("*.cache")] == [["version", "one"]]
    compiled: list[str] = []
    later = Environment(loader=DictLoader(names), bytecode_cache=other)
    compile_now = later.compile
    later.compile = lambda *a, **k: compiled.append(a[1]) or compile_now(*a, **k)  # type: ignore[method-assign]
    assert later.get_template("a.html").render() == "2"
    assert compiled == ["a.html"], "the same template under another version is compiled"
    assert sorted(p.name.split("-")[1] for p in cache.glob("*.cache")) == ["one", "two"]
