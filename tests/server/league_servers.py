"""A real league server for the tests: ``python -m arena.cli server LEAGUE.toml`` in a
subprocess on a free port, talked to over HTTP with httpx. (A module of its own, not a
conftest: the report tests' conftest is imported under that name too.)"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from arena.server.config import League, load_league
from arena.server.store import LeagueStore

with warnings.catch_warnings():  # starlette would have httpx2 (its name for httpx's fork)
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: F401 - for the in-process tests

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_bots" / "python"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]

LEAGUE = """\
[league]
name = "test-league"
data = "data"

[ladder]
parallel = 2
placement_matches = 2
{ladder}

[final]
matches_per_group = 2

[uploads]
max_bytes = 200000
max_unpacked_bytes = 1000000
max_files = 50
per_hour = {per_hour}

[validation]
matches = 2
{validation}

[rules]
target_score = 100
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def arena(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True,
                          text=True, timeout=120, cwd=ROOT,
                          env={**os.environ, "COLUMNS": "250"})
    if check:
        assert done.returncode == 0, done.stderr
    return done


def write_league(folder: Path, per_hour: int = 50, ladder: str = "", extra: str = "",
                 validation: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "LEAGUE.toml"
    path.write_text(LEAGUE.format(per_hour=per_hour, ladder=ladder, validation=validation)
                    + extra)
    return path


@dataclass
class Server:
    league: Path
    port: int
    process: subprocess.Popen[bytes] | None = None
    tokens: dict[str, str] = field(default_factory=dict)
    options: tuple[str, ...] = ()
    """More options of ``arena server`` (``--log-format json``)."""

    @property
    def log(self) -> Path:
        """Where the server's stderr goes (its log)."""
        return self.league.parent / "server.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def data(self) -> Path:
        return self.league.parent / "data"

    def start(self) -> None:
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "arena.cli", "server", str(self.league),
                 "--port", str(self.port), *self.options], cwd=ROOT,
                stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.log.read_text(errors="replace")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/api/standings", timeout=2).status_code == 200:
                    return
            time.sleep(0.1)
        raise AssertionError("the server did not answer within 30 s")

    def stop(self, kind: signal.Signals = signal.SIGTERM) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(kind)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def add_author(self, name: str, cli: bool = False) -> str:
        """With ``cli``, as the README says (``arena server add-author``); else straight
        into the store (a second connection while the server runs, as the CLI's is)."""
        if cli:
            done = arena("server", "add-author", name, "--league", str(self.league))
            self.tokens[name] = done.stdout.strip().splitlines()[-1]
        else:
            store = LeagueStore(self.data / "league.sqlite")
            try:
                self.tokens[name] = store.add_author(name)
            finally:
                store.close()
        return self.tokens[name]

    def client(self, author: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.tokens[author]}"} if author else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)

    def submit(self, author: str, archive: bytes) -> httpx.Response:
        with self.client(author) as client:
            return client.post("/api/submissions", content=archive,
                               headers={"Content-Type": "application/gzip"})

    def wait_for(self, predicate: Callable[[], Any], timeout: float = 60,
                 what: str = "the condition") -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            assert self.process is None or self.process.poll() is None, "the server died"
            time.sleep(0.25)
        raise AssertionError(f"timed out waiting for {what}")

    def version_statuses(self, author: str) -> dict[tuple[str, int], str]:
        with self.client(author) as client:
            versions = client.get("/api/me").json()["versions"]
        return {(v["bot"], v["number"]): v["status"] for v in versions}


@contextlib.contextmanager
def league_server(folder: Path, **settings: Any) -> Iterator[Server]:
    server = Server(write_league(folder, **settings), free_port())
    server.start()
    try:
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """Headless Chromium (Debian's) under Playwright; a missing one fails, never skips."""
    from playwright.sync_api import sync_playwright

    assert CHROMIUM.is_file(), f"{CHROMIUM} is missing: apt-get install chromium"
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM),
                                              args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


def copy_bot(source: Path, target: Path, name: str | None = None,
             change: str | None = None) -> Path:
    """A sample bot copied (optionally renamed, or with a line added to bot.py: another
    version of the same bot)."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    if name is not None:
        toml = target / "bot.toml"
        text = toml.read_text()
        first = text.split("\n", 1)
        assert first[0].startswith("name = ")
        toml.write_text(f'name = "{name}"\n{first[1]}')
    if change is not None:
        with open(target / "bot.py", "a") as source_file:
            source_file.write(f"\n# {change}\n")
    return target


def tar_gz(entries: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    """An archive of hand-made entries (for the malicious ones)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for info, data in entries:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def file_entry(name: str, data: bytes, mode: int = 0o644) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    return info, data


def league_with_data(folder: Path) -> League:
    """The test league's file in ``folder``, loaded, its data folder made: for the app run
    in-process (``starlette.testclient.TestClient``)."""
    league = load_league(write_league(folder))
    league.data.mkdir(parents=True)
    return league


def sample_versions(store: LeagueStore, bots: tuple[tuple[str, str], ...] = (
        ("alice", "greedy"), ("bob", "random"))) -> list[int]:
    """An active version of each (author, sample Python bot), its author made: their ids."""
    seats = []
    for author, bot in bots:
        found = store.authenticate(store.add_author(author))
        assert found is not None
        version = store.add_version(found.id, bot, "1", bot, "sha", str(SAMPLES / bot), 3)
        store.activate(version.id, 1)
        seats.append(version.id)
    return seats
