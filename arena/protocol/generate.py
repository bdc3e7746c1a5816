"""Regenerate the Python stubs from ``protos/``: ``python -m arena.protocol.generate``."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROTO = "arena/protocol/uno_arena/v1/referee.proto"


def generate(out_dir: Path, protos_dir: Path = ROOT / "protos") -> None:
    """Write the stubs under ``out_dir/arena/protocol/uno_arena/v1``.

    The proto is mapped to the virtual path ``arena/protocol/...`` so that the generated
    imports name the package they live in.
    """
    from grpc_tools import protoc  # a test/dev dependency only

    args = [
        "protoc",
        f"-Iarena/protocol={protos_dir}",
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        PROTO,
    ]
    if protoc.main(args) != 0:
        raise RuntimeError("protoc failed: " + " ".join(args))


if __name__ == "__main__":
    generate(ROOT)
    print(f"generated stubs from {ROOT / 'protos'}", file=sys.stderr)
