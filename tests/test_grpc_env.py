"""The gRPC transport settings (arena/grpc_env.py) reach every process of a match and are
understood by the installed grpcio."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from arena.grpc_env import GRPC_ENVIRONMENT
from arena.sandbox import PlainLauncher, load_manifest

ROOT = Path(__file__).resolve().parents[1]

# A server and a client in one process, one round trip over a Unix socket.
ROUND_TRIP = textwrap.dedent('''
    import asyncio, os, sys, tempfile
    import arena
    import grpc
    from arena.protocol import pb, pb_grpc

    class Echo(pb_grpc.RefereeServiceServicer):
        async def Play(self, request_iterator, context):
            await context.write(pb.PlayResponse(match_end=pb.MatchEnd()))
            await context.read()

    async def main():
        address = "unix:" + os.path.join(tempfile.mkdtemp(), "s.sock")
        server = grpc.aio.server()
        pb_grpc.add_RefereeServiceServicer_to_server(Echo(), server)
        server.add_insecure_port(address)
        await server.start()
        async with grpc.aio.insecure_channel(address) as channel:
            call = pb_grpc.RefereeServiceStub(channel).Play()
            await call.write(pb.PlayRequest(hello=pb.Hello()))
            reply = await call.read()
            await call.done_writing()
        await server.stop(None)
        from arena.sandbox.environment import BOT_ENV
        print(reply.WhichOneof("message"), os.environ.get("GRPC_EXPERIMENTS", ""),
              BOT_ENV["GRPC_EXPERIMENTS"])

    asyncio.run(main())
''')


def run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in GRPC_ENVIRONMENT}
    return subprocess.run([sys.executable, "-c", ROUND_TRIP], env={**clean, **env},
                          capture_output=True, text=True, timeout=60, check=False)


def test_importing_arena_sets_the_transport_settings_and_grpcio_knows_them() -> None:
    done = run({})
    assert done.returncode == 0, done.stderr
    setting = GRPC_ENVIRONMENT["GRPC_EXPERIMENTS"]
    assert done.stdout.split() == ["match_end", setting, setting]
    # grpcio names an experiment it does not know on stderr and ignores it: an upgrade that
    # drops these names would silently lose the speed-up.
    assert "experiment" not in done.stderr.lower(), done.stderr


def test_a_value_set_by_the_user_wins_for_the_referee_and_its_bots() -> None:
    done = run({"GRPC_EXPERIMENTS": "-event_engine_client"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["match_end", "-event_engine_client", "-event_engine_client"]


def test_bots_get_the_settings_in_their_environment(tmp_path: Path) -> None:
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "bot.toml").write_text('name = "env"\nversion = "1"\nlanguage = "python"\n'
                                  'run = ["python3", "-c", "import os; '
                                  'print(os.environ[\'GRPC_EXPERIMENTS\'])"]\n')
    process = PlainLauncher(load_manifest(bot), tmp_path, "seat0")({}, tmp_path)
    process.wait(30)
    process.kill()  # joins the threads that copy its output
    assert process.stdout_path.read_text().strip() == GRPC_ENVIRONMENT["GRPC_EXPERIMENTS"]
