"""A raw protocol client for misbehaving test bots: full control over what is sent."""

from __future__ import annotations

import os
import queue
from collections.abc import Iterator

import grpc

from arena.protocol import pb


class RawBot:
    def __init__(self, token: str | None = None,
                 options: list[tuple[str, int]] | None = None,
                 compression: grpc.Compression | None = None) -> None:
        self.outbox: queue.SimpleQueue[pb.PlayRequest | bytes | None] = queue.SimpleQueue()
        self.channel = grpc.insecure_channel(os.environ["ARENA_ADDRESS"], options=options,
                                             compression=compression)
        self.token = os.environ["ARENA_TOKEN"] if token is None else token
        self.others: list[object] = []

    def _outgoing(self) -> Iterator[pb.PlayRequest | bytes]:
        while (message := self.outbox.get()) is not None:
            yield message

    def send(self, message: pb.PlayRequest | bytes) -> None:
        """A message, or bytes sent as they are (whatever they parse as)."""
        self.outbox.put(message)

    def hello(self, every_variant: bool = False) -> None:
        variants = list(range(1, len(pb.Variant.keys()))) if every_variant else []
        self.send(pb.PlayRequest(hello=pb.Hello(token=self.token, bot_name="raw",
                                                bot_version="0", protocol_version=1,
                                                variants=variants)))

    def answer(self, request_id: int, index: int = 0) -> None:
        self.send(pb.PlayRequest(decision=pb.Decision(request_id=request_id,
                                                      action_index=index)))

    def responses(self, timeout: float | None = None) -> Iterator[pb.PlayResponse]:
        """The stream, opened (with a deadline of ``timeout`` seconds if given)."""
        return iter(self._play()(self._outgoing(), timeout=timeout))

    def another_stream(self) -> None:
        """A second stream on the same connection, saying hello again (never read)."""
        self.others.append(self._play()(iter([pb.PlayRequest(hello=pb.Hello(
            token=self.token, bot_name="raw", bot_version="0", protocol_version=1))])))

    def _play(self) -> grpc.StreamStreamMultiCallable:
        return self.channel.stream_stream(
            "/uno_arena.v1.RefereeService/Play",
            request_serializer=lambda m: m if isinstance(m, bytes) else m.SerializeToString(),
            response_deserializer=pb.PlayResponse.FromString)

    def close(self) -> None:
        self.outbox.put(None)
        self.channel.close()
