"""The stdio-json bridge: a bot in any language that reads and writes JSON lines.

    python -m arena.bots.stdio_bridge [--name NAME] [--version VERSION]
                                      [--variants stacking,seven_o,...] -- CMD ARGS...

The launcher starts this bridge in place of a bot whose ``bot.toml`` says
``protocol = "stdio-json"``. The bridge speaks gRPC to the referee (ARENA_ADDRESS,
ARENA_TOKEN), says hello for the bot (declaring the variants of its ``bot.toml``, which the
launcher passes as ``--variants``), and runs ``CMD ARGS...`` as its child:

* every ``PlayResponse`` from the referee is written to the child's stdin as one line of
  protobuf's canonical JSON mapping (lowerCamelCase names, enums by name, 64-bit integers
  as strings, fields at their default value left out);
* for every decision request the bridge reads one line from the child's stdout: a
  ``Decision`` in the same mapping, ``{"actionIndex": 0}`` (``requestId`` may be left out:
  the bridge fills in the pending one), or just an index, ``0``.

Misbehaviour maps onto the referee's fault policy (docs/rules.md §20): a line that is not a
decision is sent as an empty decision (a MALFORMED strike, the default action is played);
an answer naming another request is forwarded as it is (the referee drops a late answer,
strikes any other) and the pending request stays pending; lines printed while no decision
is pending, or after the answer in the same pipe read, are dropped; no line at all runs into
the deadline; a child that exits (or closes its stdout) closes the stream (disqualified).
The child is killed when the match ends. The child's stderr is the bot's log.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import IO, Any

import grpc
from google.protobuf import json_format  # type: ignore[import-untyped]

from arena.protocol import PROTOCOL_VERSION, pb, pb_grpc
from arena.protocol.convert import variants_to_wire
from arena.rules.options import VARIANTS

MAX_LINE_BYTES = 64 * 1024
"""A longer line from the bot is garbage (a decision is ~40 bytes)."""
EXIT_GRACE_SECONDS = 1.0
"""How long the bot may take to exit after match_end before it is killed."""
DROPPED_NOTES = 5
"""Dropped lines reported on stderr (then only counted)."""


def _note(message: str) -> None:
    print(f"[stdio-bridge] {message}", file=sys.stderr, flush=True)


def parse_decision(line: bytes, pending: int) -> tuple[pb.Decision, str | None]:
    """The decision a line from the bot stands for, answering request ``pending``, and why
    it is malformed (then the decision carries no action, which the referee strikes)."""
    try:
        data: Any = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return pb.Decision(request_id=pending), "not JSON"
    if isinstance(data, int) and not isinstance(data, bool):
        if 0 <= data < 2**32:
            return pb.Decision(request_id=pending, action_index=data), None
        return pb.Decision(request_id=pending), f"action index {data} out of range"
    if not isinstance(data, dict):
        return pb.Decision(request_id=pending), "not a JSON object or an index"
    decision = pb.Decision()
    try:
        json_format.ParseDict(data, decision)
    except (json_format.ParseError, ValueError, TypeError, RecursionError) as error:
        return pb.Decision(request_id=pending), f"not a Decision: {error}"
    if "requestId" not in data and "request_id" not in data:
        decision.request_id = pending
    if decision.WhichOneof("choice") is None:
        return pb.Decision(request_id=pending), "no actionIndex or action"
    return decision, None


def response_line(response: pb.PlayResponse) -> bytes:
    """One PlayResponse as one line of canonical protobuf JSON."""
    text: str = json_format.MessageToJson(response, indent=None)
    return text.encode() + b"\n"


class Bridge:
    """One match: the gRPC stream on one side, the child's pipes on the other."""

    def __init__(self, command: Sequence[str], name: str, version: str, address: str,
                 token: str, max_line: int = MAX_LINE_BYTES,
                 variants: Sequence[str] = ()) -> None:
        self.command = list(command)
        self.name = name
        self.version = version
        self.variants = tuple(variants)
        self.address = address
        self.token = token
        self.max_line = max_line
        self.lock = threading.Lock()
        self.pending: int | None = None
        self.finished = False
        self.child_gone = False
        self.dropped = 0
        self.outbox: queue.SimpleQueue[pb.PlayRequest | None] = queue.SimpleQueue()
        self.to_child: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.stream: Any = None
        self.child: subprocess.Popen[bytes] | None = None

    # -- the child -------------------------------------------------------------------------

    def _start_child(self) -> subprocess.Popen[bytes]:
        env = {k: v for k, v in os.environ.items() if k not in ("ARENA_ADDRESS", "ARENA_TOKEN")}
        env["ARENA_PROTOCOL"] = "stdio-json"
        # Same process group as the bridge: the launcher's kill reaches the child too.
        return subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=None, env=env, bufsize=0)

    def _read_child(self, stdout: IO[bytes]) -> None:
        """Reader thread: the lines of the bot's stdout, taken a pipe read at a time, so the
        extra lines a bot prints along with its answer are dropped, never taken as the
        answer to the next request."""
        fd = stdout.fileno()
        buffer = b""
        overlong = False  # inside a line too long to be a decision
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            *lines, buffer = (buffer + chunk).split(b"\n")
            batch: list[bytes | None] = []
            for line in lines:
                if overlong:  # the tail of a long line, already struck
                    overlong = False
                elif len(line) > self.max_line:
                    batch.append(None)
                elif line.strip():
                    batch.append(line)
            if len(buffer) > self.max_line:
                if not overlong:
                    batch.append(None)
                    overlong = True
                buffer = b""
            if batch:
                self._on_lines(batch)
        self._on_child_gone()

    def _on_lines(self, lines: list[bytes | None]) -> None:
        """Lines read together: the first answers the pending request (if any), the rest
        are dropped. None stands for a line over ``max_line`` bytes."""
        with self.lock:  # the next request cannot become pending in the middle
            for line in lines:
                pending, self.pending = self.pending, None
                if pending is None:
                    self.dropped += 1
                    if self.dropped <= DROPPED_NOTES:
                        _note("dropped a line printed while no decision was pending: "
                              f"{(line or b'<too long>')[:200]!r}")
                    continue
                problem: str | None
                if line is None:
                    decision = pb.Decision(request_id=pending)
                    problem = f"over {self.max_line} bytes"
                else:
                    decision, problem = parse_decision(line, pending)
                if problem is not None:
                    _note(f"request {pending}: malformed answer ({problem}): "
                          f"{(line or b'')[:200]!r}; sent as a decision with no action "
                          "(a strike)")
                elif decision.request_id != pending:
                    # A late answer to a request that timed out (the referee drops it) or
                    # a wrong id (the referee strikes it): either way, still pending.
                    self.pending = pending
                    _note(f"an answer to request {decision.request_id} while {pending} is "
                          "pending: forwarded; the request stays pending")
                self.outbox.put(pb.PlayRequest(decision=decision))

    def _on_child_gone(self) -> None:
        """The bot closed its stdout (it exited): unless the match is over, close the
        stream, which disqualifies the seat."""
        with self.lock:
            if self.finished:
                return
            self.child_gone = True
            stream = self.stream
        code = None
        if self.child is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = self.child.wait(timeout=0.5)
        _note("the bot closed its stdout" + (f" (exit code {code})" if code is not None else "")
              + "; closing the stream")
        self.outbox.put(None)
        if stream is not None:
            stream.cancel()

    def _write_child(self, stdin: IO[bytes]) -> None:
        """Writer thread: the lines for the bot's stdin, so a bot that does not read its
        input never blocks the stream (a match is at most a few MB of JSON)."""
        try:
            while (line := self.to_child.get()) is not None:
                stdin.write(line)
        except (OSError, ValueError):  # the bot is gone; the reader thread reports it
            pass
        finally:
            with contextlib.suppress(OSError, ValueError):
                stdin.close()

    def _stop_child(self, grace: float, writer: threading.Thread) -> None:
        child = self.child
        if child is None:
            return
        self.to_child.put(None)  # the writer closes the bot's stdin once all is written
        writer.join(timeout=grace)
        try:
            child.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            child.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=2)

    # -- the match -------------------------------------------------------------------------

    def _outgoing(self) -> Iterator[pb.PlayRequest]:
        while (message := self.outbox.get()) is not None:
            yield message

    def run(self) -> int:
        try:
            self.child = self._start_child()
        except OSError as error:
            _note(f"cannot start the bot {self.command!r}: {error}")
            return 127
        assert self.child.stdout is not None and self.child.stdin is not None
        reader = threading.Thread(target=self._read_child, args=(self.child.stdout,),
                                  daemon=True)
        writer = threading.Thread(target=self._write_child, args=(self.child.stdin,),
                                  daemon=True)
        writer.start()
        reader.start()  # at once: lines printed before the first request are dropped
        self.outbox.put(pb.PlayRequest(hello=pb.Hello(
            token=self.token, bot_name=self.name, bot_version=self.version,
            protocol_version=PROTOCOL_VERSION,
            variants=variants_to_wire(self.variants))))  # type: ignore[arg-type]
        channel = grpc.insecure_channel(self.address)
        code = 1
        try:
            stub = pb_grpc.RefereeServiceStub(channel)  # type: ignore[no-untyped-call]
            stream = stub.Play(self._outgoing())
            with self.lock:
                self.stream = stream
                if self.child_gone:  # the bot died before the stream was up
                    stream.cancel()
            for response in stream:
                kind = response.WhichOneof("message")
                if kind == "decision_request":
                    with self.lock:
                        self.pending = response.decision_request.request_id
                elif kind == "match_end":
                    with self.lock:
                        self.finished = True
                        self.pending = None
                self.to_child.put(response_line(response))
                if kind == "match_end":
                    code = 0
                    break
            else:
                _note("the referee closed the stream before the match ended")
        except grpc.RpcError as error:
            if not self.finished:
                _note(f"stream ended: {error.code()}")  # e.g. CANCELLED after the bot died
        finally:
            self.outbox.put(None)
            self._stop_child(EXIT_GRACE_SECONDS if code == 0 else 0.0, writer)
            channel.close()
        if self.dropped > DROPPED_NOTES:
            _note(f"{self.dropped} lines dropped in all")
        return code


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m arena.bots.stdio_bridge",
        description="Run a stdio-json bot: gRPC to the referee, JSON lines to the bot.")
    parser.add_argument("--name", default="stdio-bot", help="the bot name sent in hello")
    parser.add_argument("--version", default="0", help="the bot version sent in hello")
    parser.add_argument("--variants", default="",
                        help="the variants the bot supports, comma-separated (bot.toml's "
                             "variants), declared in hello")
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="-- then the bot's command and arguments")
    args = parser.parse_args(argv)
    command: list[str] = args.command
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        parser.error("give the bot's command after --")
    variants = [name for name in args.variants.split(",") if name]
    unknown = [name for name in variants if name not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant(s) {', '.join(unknown)}; known: {', '.join(VARIANTS)}")
    address = os.environ.get("ARENA_ADDRESS")
    token = os.environ.get("ARENA_TOKEN")
    if not address or not token:
        _note("ARENA_ADDRESS and ARENA_TOKEN must be set (the referee sets them)")
        return 2
    return Bridge(command, args.name, args.version, address, token,
                  variants=variants).run()


if __name__ == "__main__":
    raise SystemExit(main())
