"""Submitting in every language, as a new author would: per bot, the upload's size and the
seconds from ``arena submit`` to a final status for a first version and for a second that
changes one source line; then how long a Python submission waits behind a running compile.

Each bot is written by ``arena new --lang L`` (which fetches its dependencies into the
folder, for offline local builds; ``arena submit`` leaves them out, since the server
fetches them from the lockfile) or copied from ``sample_bots/``, and submitted to
a real league server started for the run on loopback, with the caps and rules of
``sample_bots/league.toml`` (its data in a temporary folder). A bot the league refuses or
fails is reported with the reason, not left out.

Targets (2-core machine, quiet): Python <= 15 s; JavaScript <= 60 s; C++, Go, Java <= 3 min
first and <= 45 s second; Rust <= 5 min first and <= 60 s second; a Python submission's
wait behind a running compile <= 30 s.

    python -m benchmarks.submissions [--bots python javascript ...] [--timeout 1200]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
KITS = ("python", "javascript", "go", "rust", "java", "cpp", "stdio")
SAMPLES = {"sample-javascript": ROOT / "sample_bots" / "javascript",
           "sample-cpp": ROOT / "sample_bots" / "cpp"}
TARGETS = {"python": (15, 15), "javascript": (60, 60), "sample-javascript": (60, 60),
           "cpp": (180, 45), "sample-cpp": (180, 45), "go": (180, 45), "java": (180, 45),
           "rust": (300, 60)}
"""Seconds to active, first version and second, at most."""
WAIT_TARGET = 30.0
FINAL = ("active", "failed", "retired")


@dataclass
class Submitted:
    bot: str
    size: int | None
    seconds: float | None
    status: str
    note: str


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _arena(*args: str, env: dict[str, str] | None = None, timeout: float = 1800
           ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=timeout, env={**os.environ, **(env or {})})


@contextlib.contextmanager
def league(folder: Path) -> Iterator[tuple[str, Callable[[str], str]]]:
    """A server with the sample league's settings: its address, and a way to add an author
    (their token), as the organiser does while it runs."""
    text = (ROOT / "sample_bots" / "league.toml").read_text()
    port = _free_port()
    text = text.replace('data = "../runs/sample-league"', 'data = "data"')
    text = text.replace("port = 8080", f"port = {port}").replace("per_hour = 10",
                                                                  "per_hour = 100")
    path = folder / "league.toml"
    path.write_text(text)

    def author(name: str) -> str:
        return _arena("server", "add-author", name, "--league", str(path)).stdout.split()[-1]

    server = subprocess.Popen([sys.executable, "-m", "arena.cli", "server", str(path)],
                              cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/api/league", timeout=2).status_code == 200:
                    break
            time.sleep(0.2)
        yield url, author
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)


def write_bot(name: str, folder: Path, bot_name: str | None = None) -> Path:
    """The bot ``name`` (a kit, or a sample) written into ``folder / name``."""
    target = folder / name
    folder.mkdir(parents=True, exist_ok=True)
    bot_name = bot_name or f"bench-{name}"
    if name in SAMPLES:
        shutil.copytree(SAMPLES[name], target, ignore=shutil.ignore_patterns(
            "__pycache__", "build", "node_modules"))
        _rename(target, bot_name)
    else:
        done = _arena("new", "--lang", name, str(target), "--name", bot_name)
        if done.returncode != 0:
            raise RuntimeError(f"arena new --lang {name}: {done.stderr.strip()}")
    return target


def _rename(folder: Path, name: str) -> None:
    toml = folder / "bot.toml"
    lines = [f'name = "{name}"' if line.startswith("name =") else line
             for line in toml.read_text().splitlines()]
    toml.write_text("\n".join(lines) + "\n")


def change_one_line(folder: Path) -> None:
    """Append a comment to the bot's main source: a second version, its build changed."""
    for pattern, comment in (("*.py", "#"), ("*.js", "//"), ("*.go", "//"), ("*.rs", "//"),
                             ("*.java", "//"), ("*.cpp", "//"), ("*.cc", "//"),
                             ("*.sh", "#")):
        found = sorted(p for p in folder.rglob(pattern) if not any(
            part in ("node_modules", "vendor", ".cargo-home", ".m2", "target", "build")
            for part in p.relative_to(folder).parts))
        if found:
            with open(found[0], "a") as source:
                source.write(f"\n{comment} second version\n")
            return
    raise RuntimeError(f"{folder}: no source file to change")


def submit(url: str, token: str, folder: Path, timeout: float) -> Submitted:
    from arena.sandbox import load_manifest

    name = load_manifest(folder).name
    started = time.monotonic()
    done = _arena("submit", str(folder), "--server", url, "--wait", timeout=timeout,
                  env={"ARENA_TOKEN": token})
    seconds = time.monotonic() - started
    printed = done.stdout + done.stderr
    uploaded = re.search(r"\((\d+) bytes, sources", printed)  # what arena submit sent
    size = int(uploaded.group(1)) if uploaded else None
    lines = printed.strip().splitlines()
    status = "active" if done.returncode == 0 else "failed" if any(
        line.strip() == "failed" for line in lines) else "refused"
    note = "" if status == "active" else " / ".join(lines[-3:])[:300]
    return Submitted(name, size, seconds, status, note)


def queue_wait(url: str, rust_token: str, python_token: str, folder: Path,
               timeout: float) -> tuple[float | None, str]:
    """Seconds a Python submission spends queued while another author's Rust build runs,
    and what the compile was (a 60-second build step when the Rust kit is refused)."""
    from arena.server.uploads import pack

    rust = write_bot("rust", folder / "wait", "wait-rust")
    change_one_line(rust)  # new sources: a build, not a reused result
    compiling, what = "wait-rust", "the Rust kit's build"
    done = _arena("submit", str(rust), "--server", url, env={"ARENA_TOKEN": rust_token})
    if done.returncode != 0:
        slow = folder / "wait" / "slow"
        shutil.copytree(ROOT / "sample_bots" / "python" / "random", slow,
                        ignore=shutil.ignore_patterns("__pycache__"))
        _rename(slow, "wait-slow")
        with open(slow / "bot.toml", "a") as toml:
            toml.write('build = ["sh", "-c", "sleep 60"]\n')
        _arena("submit", str(slow), "--server", url, env={"ARENA_TOKEN": rust_token})
        compiling = "wait-slow"
        what = ("a 60-second build step (the Rust kit was refused: "
                f"{done.stderr.strip().splitlines()[-1][:120] if done.stderr.strip() else '?'})")
    python = write_bot("python", folder / "wait", "wait-python")
    change_one_line(python)
    deadline = time.monotonic() + timeout
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {rust_token}"},
                      timeout=30) as rust_client:
        while time.monotonic() < deadline and not any(
                v["bot"] == compiling and v["status"] == "building"
                for v in rust_client.get("/api/me").json()["versions"]):
            time.sleep(0.2)
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {python_token}"},
                      timeout=30) as client:
        response = client.post("/api/submissions", content=pack(python),
                               headers={"Content-Type": "application/gzip"})
        if response.status_code != 201:
            raise RuntimeError(f"the Python submission was refused: {response.text[:200]}")
        answer = response.json()
        submitted = time.monotonic()
        while time.monotonic() < deadline:
            version = client.get(f"/api/versions/{answer['id']}").json()
            if version["status"] != "queued":
                return time.monotonic() - submitted, what
            time.sleep(0.2)
    return None, what


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--bots", nargs="+", default=[*KITS, *SAMPLES],
                        choices=[*KITS, *SAMPLES])
    parser.add_argument("--timeout", type=float, default=1800.0,
                        help="seconds one submission may take")
    parser.add_argument("--no-wait-test", action="store_true",
                        help="leave out the Python-behind-Rust queue wait")
    args = parser.parse_args()
    rows: list[tuple[str, Submitted, Submitted | None]] = []
    with tempfile.TemporaryDirectory(prefix="arena-bench-submit-") as scratch, \
            league(Path(scratch)) as (url, author):
        for name in args.bots:
            try:
                folder = write_bot(name, Path(scratch) / "bots")
            except RuntimeError as error:
                rows.append((name, Submitted(name, None, None, "not written", str(error)[:200]),
                             None))
                continue
            token = author(f"author-{name}")  # each a new author: one bot each
            first = submit(url, token, folder, args.timeout)
            second = None
            if first.status == "active":
                change_one_line(folder)
                second = submit(url, token, folder, args.timeout)
            rows.append((name, first, second))
            print(f"{name}: {_cell(first)}; second {_cell(second)}", flush=True)
        wait, compiling = (None, "") if args.no_wait_test else queue_wait(
            url, author("compiler"), author("waiter"), Path(scratch), args.timeout)
    print("\nper bot: upload size, seconds from `arena submit` to its final status "
          "(first version; second, one line changed), target")
    for name, first, second in rows:
        target = TARGETS.get(name)
        wanted = f"{target[0]} s / {target[1]} s" if target else "-"
        print(f"  {name:<18} {_size(first.size):>9}  first {_cell(first):<28} second "
              f"{_cell(second):<28} target {wanted}{_verdict(first, second, target)}")
        for each in (first, second):
            if each is not None and each.note:
                print(f"      {each.status}: {each.note}")
    if not args.no_wait_test:
        shown = "not measured (timed out)" if wait is None else f"{wait:.1f} s"
        met = wait is not None and wait <= WAIT_TARGET
        print(f"\na Python submission queued while {compiling} runs waited {shown}: "
              f"target <= {WAIT_TARGET:.0f} s: {'met' if met else 'NOT met'}")


def _size(count: int | None) -> str:
    return "-" if count is None else f"{count / 1e6:.2f} MB" if count >= 1e5 else \
        f"{count / 1e3:.1f} kB"


def _cell(result: Submitted | None) -> str:
    if result is None:
        return "-"
    seconds = "" if result.seconds is None else f" in {result.seconds:.0f} s"
    return f"{result.status}{seconds}"


def _verdict(first: Submitted, second: Submitted | None,
             target: tuple[int, int] | None) -> str:
    if target is None:
        return ""
    met = (first.status == "active" and first.seconds is not None
           and first.seconds <= target[0] and second is not None
           and second.status == "active" and second.seconds is not None
           and second.seconds <= target[1])
    return ": met" if met else ": NOT met"


if __name__ == "__main__":
    main()
