"""The committed protobuf/gRPC stubs match ``protos/`` (regenerated with grpcio-tools)."""

from __future__ import annotations

from pathlib import Path

from arena.protocol.generate import ROOT, generate

STUBS = ("referee_pb2.py", "referee_pb2.pyi", "referee_pb2_grpc.py")


def test_committed_stubs_match_the_protos(tmp_path: Path) -> None:
    generate(tmp_path)
    for name in STUBS:
        fresh = (tmp_path / "arena/protocol/uno_arena/v1" / name).read_text()
        committed = (ROOT / "arena/protocol/uno_arena/v1" / name).read_text()
        assert fresh == committed, (
            f"{name} is stale: run `python -m arena.protocol.generate` and commit the result")
