"""The environment every bot starts with, under every backend (besides ARENA_ADDRESS,
ARENA_TOKEN and ARENA_SEAT, which the referee adds)."""

from __future__ import annotations

from arena import grpc_env

BOT_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8",
           "PYTHONDONTWRITEBYTECODE": "1", **grpc_env.current()}
