"""The wire protocol: generated protobuf/gRPC stubs (committed) and conversions.

Stubs live in ``arena/protocol/uno_arena/v1/``, generated from ``protos/`` by
``python -m arena.protocol.generate``; a test checks they match.
"""

from arena.protocol.uno_arena.v1 import referee_pb2 as pb
from arena.protocol.uno_arena.v1 import referee_pb2_grpc as pb_grpc

PROTOCOL_VERSION = pb.PROTOCOL_VERSION_1

__all__ = ["PROTOCOL_VERSION", "pb", "pb_grpc"]
