"""An offline build that failed for want of the network says which tool tried to reach
which host (``arena.sandbox.offline``), from what real tools print when they cannot."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_sandbox_build import make_bot

from arena.sandbox import BuildError, SandboxLimits, load_manifest, prepare
from arena.sandbox.offline import network_hint

OUTPUTS = [
    ("npm ci", "npm error code ENOTFOUND\nnpm error syscall getaddrinfo\n"
     "npm error network request to https://registry.npmjs.org/@grpc%2fgrpc-js failed, "
     "reason: getaddrinfo ENOTFOUND registry.npmjs.org", "npm: registry.npmjs.org"),
    ("go build", 'go: downloading google.golang.org/grpc v1.60.0\ngo: google.golang.org/grpc'
     '@v1.60.0: Get "https://proxy.golang.org/google.golang.org/grpc/@v/v1.60.0.zip": dial '
     "tcp: lookup proxy.golang.org on [::1]:53: connect: network is unreachable",
     "go: proxy.golang.org"),
    ("cargo build", "    Updating crates.io index\nwarning: spurious network error (3 tries "
     "remaining): [6] Couldn't resolve host name (Could not resolve host: index.crates.io)\n"
     "error: failed to get `tonic` as a dependency of package `bot v0.1.0 (/bot)`",
     "cargo: index.crates.io"),
    ("mvn package", "[ERROR] Failed to execute goal on project bot: Could not resolve "
     "dependencies for project uno:bot:jar:1.0: Could not transfer artifact io.grpc:grpc-api:"
     "pom:1.60.0 from/to central (https://repo.maven.apache.org/maven2): "
     "repo.maven.apache.org: Temporary failure in name resolution",
     "maven: repo.maven.apache.org"),
    ("pip install", "WARNING: Retrying (Retry(total=4)) after connection broken by "
     "'NewConnectionError('<HTTPSConnection object>: Failed to establish a new connection: "
     "[Errno -3] Temporary failure in name resolution')': /simple/grpcio/",
     "pip: the network"),
    ("curl", "curl: (6) Could not resolve host: example.org", "example.org"),
    ("a compile error", "bot.c:3:1: error: expected ';' before '}' token\nmake: *** [bot] "
     "Error 1", None),
    ("a test that names a URL", "see https://example.org/docs for the API", None),
]


@pytest.mark.parametrize(("tool", "output", "hint"), OUTPUTS, ids=[o[0] for o in OUTPUTS])
def test_what_a_tool_that_could_not_fetch_printed_names_it_and_its_host(
        tool: str, output: str, hint: str | None) -> None:
    assert network_hint(output) == hint


def test_an_offline_build_that_fetches_says_what_it_tried_to_reach(tmp_path: Path) -> None:
    """A real build in the sandbox, with no network: npm asks its registry for a package."""
    source = make_bot(tmp_path / "bot", "npm view is-number version --fetch-retries=0 "
                      "--cache /tmp/npm-cache")
    with pytest.raises(BuildError) as caught:
        prepare(load_manifest(source), "bubblewrap", SandboxLimits(), tmp_path / "runs",
                trusted=True, cache=tmp_path / "cache")
    message = str(caught.value)
    assert "the build tried to reach the network (npm: registry.npmjs.org)" in message
    assert "builds here run with no network at all" in message
    # A plain build has the host's network: its failure is its own, and no advice is given.
    failing = make_bot(tmp_path / "plain", "echo 'curl: (6) Could not resolve host: "
                       "example.org'; exit 1")
    with pytest.raises(BuildError) as plain:
        prepare(load_manifest(failing), "plain", SandboxLimits(), tmp_path / "runs-plain",
                trusted=True, cache=tmp_path / "cache-plain")
    assert "Could not resolve host" in str(plain.value)
    assert "no network at all" not in str(plain.value)
