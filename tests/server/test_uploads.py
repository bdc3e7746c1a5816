"""Uploads are hostile: every malicious or broken archive is refused over HTTP with the
right status and a reason, nothing of it is stored, and tokens and rate limits hold.

One server for the module (its league: max_bytes 200,000, max_unpacked_bytes 1,000,000,
max_files 50, 12 submissions an hour)."""

from __future__ import annotations

import gzip
import io
import os
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from league_servers import SAMPLES, Server, file_entry, league_server, tar_gz

from arena.server.uploads import (
    ABANDONED_SECONDS,
    Caps,
    UploadRefused,
    pack,
    sweep_uploads,
    unpack,
    unpack_isolated,
)

TOML = (SAMPLES / "random" / "bot.toml").read_bytes()
BOT = (SAMPLES / "random" / "bot.py").read_bytes()


def _special(name: str, kind: bytes, link: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    return info, None


def _bot(*extra: tuple[tarfile.TarInfo, bytes | None]) -> bytes:
    return tar_gz([file_entry("bot.toml", TOML), file_entry("bot.py", BOT), *extra])


def _bomb() -> bytes:
    """50 MB of zeros in a member (about 50 kB compressed)."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb") as compressed, \
            tarfile.open(fileobj=compressed, mode="w") as tar:
        for name, data in (("bot.toml", TOML), ("bot.py", BOT)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        info = tarfile.TarInfo("padding.bin")
        info.size = 50_000_000
        tar.addfile(info, _Zeros(info.size))
    return buffer.getvalue()


def _pax_bomb() -> bytes:
    """A pax header of 30 MB (tarfile would read it whole into memory): the budget stops
    the stream before."""
    info = tarfile.TarInfo("bot.py")
    info.size = len(BOT)
    info.pax_headers = {"comment": "A" * 30_000_000}
    return tar_gz([(info, BOT), file_entry("bot.toml", TOML)])


class _Zeros(io.RawIOBase):
    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        count = min(len(buffer), self.left)
        buffer[:count] = bytes(count)
        self.left -= count
        return count


MALICIOUS = {
    "symlink": (_bot(_special("link", tarfile.SYMTYPE, "/etc/shadow")), 422,
                "symbolic link"),
    "hardlink": (_bot(_special("hard", tarfile.LNKTYPE, "bot.py")), 422, "hard link"),
    "device": (_bot(_special("disk", tarfile.BLKTYPE)), 422, "device"),
    "chardevice": (_bot(_special("null", tarfile.CHRTYPE)), 422, "device"),
    "fifo": (_bot(_special("pipe", tarfile.FIFOTYPE)), 422, "fifo"),
    "dotdot": (_bot(file_entry("../escape.txt", b"x")), 422, ".."),
    "nested dotdot": (_bot(file_entry("src/../../escape.txt", b"x")), 422, ".."),
    "absolute": (_bot(file_entry("/tmp/arena-escape.txt", b"x")), 422, "absolute"),
    "bomb": (_bomb(), 413, "max_unpacked_bytes"),
    "pax bomb": (_pax_bomb(), 413, "max_unpacked_bytes"),
    "too many files": (_bot(*[file_entry(f"f{i}.txt", b"x") for i in range(60)]), 413,
                       "max_files"),
    "too big": (b"\x1f\x8b" + os.urandom(250_000), 413, "max_bytes"),
    "not gzip": (b"PK\x03\x04 a zip file", 422, ".tar.gz"),
    "not a tar": (gzip.compress(b"hello " * 100), 422, "tar"),
    "no bot.toml": (tar_gz([file_entry("bot.py", BOT)]), 422, "bot.toml"),
    "bad bot.toml": (tar_gz([file_entry("bot.toml", b'name = "x"\nbiuld = 1\n'),
                             file_entry("bot.py", BOT)]), 422, "bot.toml"),
    "nested bot.toml": (tar_gz([file_entry("bot.toml", TOML + b"deep = " + b"[" * 5000
                                           + b"]" * 5000 + b"\n"),
                                file_entry("bot.py", BOT)]), 422, "nested deeper"),
    "twice": (_bot(file_entry("bot.py", BOT)), 422, "twice"),
    "file and folder": (_bot(file_entry("lib", b"x"), file_entry("lib/x.py", b"x")), 422,
                        "a file and a folder"),
    "name too long": (_bot(file_entry("n" * 300, b"x")), 422, "cannot be stored"),
    "folders too deep": (_bot(file_entry("a/" * 150 + "x.py", b"x")), 422,
                         "nested more than 100 deep"),
    "path too long": (_bot(file_entry("/".join(["p" * 200] * 12), b"x")), 422,
                      "longer than 2,048 bytes"),
    "control character": (_bot(file_entry("a\x1b[2Jb.py", b"x")), 422, "not printable"),
    "not UTF-8": (_bot(file_entry("a\udcffb.py", b"x")), 422, "not printable"),
    "bad name": (tar_gz([file_entry("bot.toml", TOML.replace(b'name = "random"',
                                                             b'name = "../../evil"')),
                         file_entry("bot.py", BOT)]), 422, "name"),
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with league_server(tmp_path_factory.mktemp("uploads"), per_hour=len(MALICIOUS) + 3
                       ) as running:
        running.add_author("mallory")
        running.add_author("alice")
        running.add_author("bob")
        yield running


@pytest.mark.parametrize("case", sorted(MALICIOUS))
def test_malicious_archive_refused(server: Server, case: str) -> None:
    archive, status, reason = MALICIOUS[case]
    response = server.submit("mallory", archive)
    assert response.status_code == status, response.text
    assert reason in response.json()["error"]
    assert not Path("/tmp/arena-escape.txt").exists()
    stored = [p for p in (server.data / "bots").iterdir()] if (
        server.data / "bots").is_dir() else []
    assert all(not p.name.startswith(".upload-") for p in stored)  # no half-unpacked folder
    assert server.version_statuses("mallory") == {}


def test_tokens_required_and_checked(server: Server) -> None:
    archive = pack(SAMPLES / "random")
    with server.client() as anonymous:
        assert anonymous.post("/api/submissions", content=archive).status_code == 401
        assert anonymous.get("/api/me").status_code == 401
        assert anonymous.get("/api/matches").status_code == 200  # public, as the ladder
        wrong = anonymous.post("/api/submissions", content=archive,
                               headers={"Authorization": "Bearer 1.not-the-secret"})
        assert wrong.status_code == 401 and "not valid" in wrong.json()["error"]
        # Ids no row has, past SQLite's integers or in other digits: refused, not a 500.
        for number in ("99999999999999999999999999", "9223372036854775808", "\u0661"):
            odd = anonymous.get("/api/me", headers={"Authorization": f"Bearer {number}.x".encode()})
            assert odd.status_code == 401, number
        assert anonymous.get("/api/standings").status_code == 200  # public
        assert anonymous.get("/").status_code == 200


@pytest.mark.parametrize("path", [
    "/api/versions/{}", "/me/versions/{}", "/me/matches/m0001/stderr/{}",
    "/api/matches/{}", "/api/bots/{}", "/bots/{}.html", "/matches/{}.html", "/logs/{}.jsonl.gz",
])
@pytest.mark.parametrize("value", ["99999999999999999999999", "9223372036854775808", "%00",
                                   "x" * 3000, "%C0%AE%C0%AE"])
def test_odd_addresses_are_not_found_not_a_server_error(server: Server, path: str,
                                                        value: str) -> None:
    """Numbers past SQLite's 64-bit integers, NUL bytes, long or overlong-encoded names in
    an address: a 404 (or the login it needs), never a 500."""
    with server.client("alice") as client:
        status = client.get(path.format(value)).status_code
    assert status in (303, 401, 404), f"{path.format(value)[:80]} answered {status}"


def test_every_response_carries_the_security_headers(server: Server) -> None:
    with server.client("alice") as client:
        for path in ("/", "/api/standings", "/me", "/nowhere", "/assets/style.css"):
            headers = client.get(path).headers
            assert "script-src 'self'" in headers["content-security-policy"], path
            assert headers["x-content-type-options"] == "nosniff", path


def test_bot_names_belong_to_their_author(server: Server) -> None:
    archive = pack(SAMPLES / "random")
    first = server.submit("alice", archive)
    assert first.status_code == 201, first.text
    taken = server.submit("mallory", archive)
    assert taken.status_code == 409 and "another author" in taken.json()["error"]
    with server.client("mallory") as client:
        logs = client.get(f"/api/versions/{first.json()['id']}")
    assert logs.status_code == 403  # alice's build log and check report are hers


def test_rate_limit(server: Server) -> None:
    """mallory made one attempt per malicious case plus one with a taken name (when the
    module runs whole); a few more reach the limit, then 429 with Retry-After."""
    # Enough to pass the limit alone (the module's other tests may run on another worker).
    statuses = [server.submit("mallory", b"not an archive").status_code
                for _ in range(len(MALICIOUS) + 8)]
    assert 429 in statuses
    limited = statuses.index(429)
    assert all(status == 422 for status in statuses[:limited])
    assert all(status == 429 for status in statuses[limited:])
    response = server.submit("mallory", b"not an archive")
    assert response.headers.get("retry-after")


def test_unpack_stores_by_content_hash_read_only(tmp_path: Path) -> None:
    caps = Caps(200_000, 1_000_000, 50)
    first = unpack(pack(SAMPLES / "random"), caps, tmp_path)
    second = unpack(pack(SAMPLES / "random"), caps, tmp_path)
    assert first.content_hash == second.content_hash
    assert first.manifest.folder == tmp_path / first.content_hash
    assert [p.name for p in tmp_path.iterdir()] == [first.content_hash]
    for path in first.manifest.folder.rglob("*"):
        assert not path.stat().st_mode & 0o022  # nobody but root may change it


def test_a_stored_folder_holds_only_what_its_digest_covers(tmp_path: Path) -> None:
    """Uploads of the same sources share a folder, keyed by the sources' digest, which
    leaves out ``__pycache__`` and what ``.gitignore`` names; the first upload's extras
    left in it would let an upload refused (another author's bot name) plant compiled code
    that the owner's next upload of those sources runs. The extras are removed before the
    folder is stored: the same digest, the same bytes."""
    caps = Caps(200_000, 1_000_000, 50)
    gitignore = file_entry(".gitignore", b"notes/\n*.log\n")
    planted = unpack(_bot(gitignore, file_entry("__pycache__/bot.cpython-311.pyc", b"evil"),
                          file_entry("notes/plan.txt", b"evil"), file_entry("run.log", b"x")),
                     caps, tmp_path)
    honest = unpack(_bot(gitignore), caps, tmp_path)
    assert planted.content_hash == honest.content_hash
    stored = sorted(str(p.relative_to(honest.manifest.folder))
                    for p in honest.manifest.folder.rglob("*"))
    assert stored == [".gitignore", "bot.py", "bot.toml"]


@pytest.mark.parametrize("ignore", ["*", "*.toml", "bot.toml"])
def test_an_archive_whose_gitignore_leaves_out_its_bot_toml_is_refused(
        tmp_path: Path, ignore: str) -> None:
    """Its digest would not cover its name or its commands (with ``*``, no file at all:
    every such upload would share one folder, the first one's)."""
    with pytest.raises(UploadRefused, match=r"leaves out bot\.toml") as refused:
        unpack(_bot(file_entry(".gitignore", f"{ignore}\n".encode())),
               Caps(200_000, 1_000_000, 50),
               tmp_path)
    assert refused.value.status == 422
    assert [p.name for p in tmp_path.iterdir()] == []


def test_unpack_refuses_a_member_whose_header_lies(tmp_path: Path) -> None:
    """A member claiming more bytes than the cap is stopped by counting, not by trusting
    (or distrusting) the header alone."""
    info = tarfile.TarInfo("big.bin")
    info.size = 2_000_000
    archive = tar_gz([file_entry("bot.toml", TOML), (info, bytes(2_000_000))])
    with pytest.raises(UploadRefused) as refused:
        unpack(archive, Caps(200_000, 1_000_000, 50), tmp_path)
    assert refused.value.status == 413


def _failing_bot(name: str, build: str, run: str) -> bytes:
    toml = (f'name = "{name}"\nversion = "1"\nlanguage = "python"\n'
            f'run = ["python3", "bot.py"]\nbuild = ["sh", "-c", "{build}"]\n')
    return tar_gz([file_entry("bot.toml", toml.encode()), file_entry("bot.py", run.encode())])


def test_failed_builds_and_checks_go_to_their_author_only(server: Server) -> None:
    """A build that fails and a bot that crashes end ``failed``, with the build log or the
    check report (the bot's stderr quoted) for their author; another author gets 403; the
    ladder never sees them."""
    broken = server.submit("alice", _failing_bot(
        "broken-build", "echo compiling the bot; exit 3", "print('never run')"))
    crashing = server.submit("alice", _failing_bot(
        "crashy", "echo built > built.txt", "import sys\nprint('oops: no hello', "
        "file=sys.stderr)\nsys.exit(3)\n"))
    assert broken.status_code == crashing.status_code == 201
    server.wait_for(lambda: server.version_statuses("alice").get(("crashy", 1)) == "failed"
                    and server.version_statuses("alice").get(("broken-build", 1)) == "failed",
                    what="both versions failed")
    with server.client("alice") as alice, server.client("bob") as bob:
        build = alice.get(f"/api/versions/{broken.json()['id']}").json()
        check = alice.get(f"/api/versions/{crashing.json()['id']}").json()
        page = alice.get(f"/me/versions/{crashing.json()['id']}")
        assert bob.get(f"/api/versions/{crashing.json()['id']}").status_code == 403
        assert bob.get(f"/me/versions/{crashing.json()['id']}").status_code == 403
        matches = alice.get("/api/matches").json()["matches"]
    assert "compiling the bot" in build["build_log"]
    assert "exit code 3" in build["build_log"]
    assert build["check_report"] == ""
    assert "FAIL connects and says hello" in check["check_report"]
    assert "oops: no hello" in check["check_report"]
    assert "oops: no hello" in page.text
    assert not [m for m in matches
                if {"broken-build", "crashy"} & {seat["bot"] for seat in m["seats"]}]


def test_the_web_form_refuses_with_the_reason_on_the_page(server: Server) -> None:
    """The upload form (a browser's multipart POST, logged in by cookie) gives the same
    refusals as the API, on the author's page; a good archive is accepted."""
    with server.client() as client:
        client.cookies.set("arena_token", server.tokens["bob"])
        refused = client.post("/me/submit", files={
            "archive": ("evil.tar.gz", MALICIOUS["symlink"][0], "application/gzip")})
        assert refused.status_code == 422
        assert "symbolic link" in refused.text and 'id="error"' in refused.text
        empty = client.post("/me/submit", data={"other": "x"})
        assert empty.status_code == 422 and "choose a .tar.gz" in empty.text
        good = client.post("/me/submit", files={
            "archive": ("greedy.tar.gz", pack(SAMPLES / "greedy"), "application/gzip")})
        assert good.status_code == 303
        assert "Submitted greedy version 1" in client.get(good.headers["location"]).text
    with server.client() as client:
        anonymous = client.post("/me/submit", files={
            "archive": ("greedy.tar.gz", pack(SAMPLES / "greedy"), "application/gzip")})
        assert anonymous.status_code == 303 and "/login" in anonymous.headers["location"]


def test_submit_wait_follows_a_failing_version_to_its_report(
        server: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.cli import main

    folder = tmp_path / "crashing"
    folder.mkdir()
    (folder / "bot.toml").write_text('name = "crashing"\nversion = "1"\nlanguage = "python"\n'
                                     'run = ["python3", "bot.py"]\n')
    (folder / "bot.py").write_text("raise SystemExit('crashed before hello')\n")
    monkeypatch.setenv("ARENA_TOKEN", server.tokens["bob"])
    assert main(["submit", str(folder), "--server", server.url, "--wait"]) == 1
    out = capsys.readouterr().out
    assert "submitted crashing version 1" in out
    assert "failed" in out and "FAIL connects and says hello" in out
    assert "crashed before hello" in out


def _pax_digits(count: int) -> bytes:
    """A first member that is a pax header of ``count`` digits: Python 3.11.7's tarfile
    searches it with a regex quadratic in its length (CVE-2024-6232; fixed in 3.11.10),
    holding the GIL: 80,000 digits (180 bytes packed) held a server's pages for 12 s."""
    payload = b"1" * count
    header = bytearray(512)
    header[0:14] = b"././@PaxHeader"
    header[100:108] = b"0000644\0"
    header[108:116] = header[116:124] = b"0000000\0"
    header[124:136] = b"%011o\0" % len(payload)
    header[136:148] = b"00000000000\0"
    header[156:157] = b"x"
    header[257:265] = b"ustar\x0000"
    header[148:156] = b" " * 8
    header[148:156] = b"%06o\0 " % sum(header)
    tar = bytes(header) + payload + b"\0" * ((-len(payload)) % 512) + b"\0" * 1024
    return gzip.compress(tar, mtime=0)


def test_an_archive_that_holds_the_reader_is_stopped_in_a_process_of_its_own(
        tmp_path: Path) -> None:
    """The server unpacks in a child under a CPU limit: the child is killed, the upload
    refused in one line, its work folder removed; the server's own threads never parse."""
    caps = Caps(200_000, 1_000_000, 50)
    with pytest.raises(UploadRefused, match="more than 1 s of CPU") as refused:
        unpack_isolated(_pax_digits(300_000), caps, tmp_path, cpu_seconds=1)
    assert refused.value.status == 422
    assert list(tmp_path.iterdir()) == []


def test_unpacking_in_a_child_stores_what_unpacking_in_place_does(tmp_path: Path) -> None:
    caps = Caps(200_000, 1_000_000, 50)
    isolated = unpack_isolated(pack(SAMPLES / "random"), caps, tmp_path / "child")
    in_place = unpack(pack(SAMPLES / "random"), caps, tmp_path / "here")
    assert isolated.content_hash == in_place.content_hash
    assert isolated.manifest.name == "random" and isolated.manifest.folder.is_dir()
    assert [p.name for p in (tmp_path / "child").iterdir()] == [isolated.content_hash]
    with pytest.raises(UploadRefused, match="not a gzip-compressed tar") as refused:
        unpack_isolated(b"plain text", caps, tmp_path / "child")
    assert refused.value.status == 422


@pytest.mark.parametrize(("caps", "message"), [
    (Caps(200_000, 1_000_000, 50), "folders its paths imply counted"),
    (Caps(200_000, 60_000, 5_000), "a folder counted as 4096"),
])
def test_the_folders_an_archive_implies_count_against_its_caps(
        tmp_path: Path, caps: Caps, message: str) -> None:
    """1,990 files listed 99 folders deep, none of the folders listed, make 197,011
    folders (770 MB) from 29 KB, within max_files."""
    deep = [file_entry("/".join([f"d{index}", *"abcdefghijklmnop"]) + "/x", b"")
            for index in range(20)]
    with pytest.raises(UploadRefused, match=message) as refused:
        unpack(_bot(*deep), caps, tmp_path)
    assert refused.value.status == 413
    assert list(tmp_path.iterdir()) == []


def test_work_folders_a_killed_server_left_are_swept(tmp_path: Path) -> None:
    left, current = tmp_path / ".upload-left", tmp_path / ".upload-now"
    for folder in (left, current):
        (folder / "bot").mkdir(parents=True)
    old = time.time() - ABANDONED_SECONDS - 60
    os.utime(left, (old, old))
    assert sweep_uploads(tmp_path) == 1
    assert not left.exists() and current.is_dir()


def test_a_folder_past_the_caps_is_refused_while_it_packs(tmp_path: Path) -> None:
    """Before reading the rest of it (a 120 MB folder was packed whole, then refused), and
    naming what makes it large."""
    from arena.server.uploads import Caps, TooLarge, pack

    folder = tmp_path / "heavy"
    (folder / "vendor").mkdir(parents=True)
    (folder / "bot.toml").write_text('name = "heavy"\nversion = "1"\nlanguage = "python"\n'
                                     'run = ["python3", "bot.py"]\n')
    (folder / "bot.py").write_text("print('hi')\n")
    for n in range(4):
        (folder / "vendor" / f"blob{n}.bin").write_bytes(os.urandom(200_000))
    assert len(pack(folder)) > 800_000, "no caps: packed whole"
    with pytest.raises(TooLarge, match=r"more than 300,000 bytes once packed \(max_bytes\), "
                                       r"past what the league takes; the largest parts: "
                                       r"vendor/ 800 kB, bot\.toml \d+ bytes"):
        pack(folder, Caps(300_000, 10_000_000, 100))
    with pytest.raises(TooLarge, match=r"more than 3 files and folders \(max_files\)"):
        pack(folder, Caps(10_000_000, 10_000_000, 3))
    with pytest.raises(TooLarge, match=r"more than 500,000 bytes of sources"):
        pack(folder, Caps(10_000_000, 500_000, 100))


def test_submit_learns_the_caps_first_and_sends_nothing_too_large(
        server: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.cli import main

    league = httpx.get(f"{server.url}/api/league").json()
    assert league["uploads"]["max_bytes"] == 200_000
    assert league["validation"]["validators"] >= 1
    folder = tmp_path / "heavy"
    folder.mkdir()
    (folder / "bot.toml").write_text('name = "heavy"\nversion = "1"\nlanguage = "python"\n'
                                     'run = ["python3", "bot.py"]\n')
    (folder / "bot.py").write_text("print('hi')\n")
    (folder / "weights.bin").write_bytes(os.urandom(300_000))
    before = server.version_statuses("bob")
    monkeypatch.setenv("ARENA_TOKEN", server.tokens["bob"])
    assert main(["submit", str(folder), "--server", server.url]) == 1
    err = capsys.readouterr().err
    assert "more than 200,000 bytes once packed (max_bytes)" in err
    assert "the largest parts: weights.bin 300 kB" in err
    assert server.version_statuses("bob") == before
