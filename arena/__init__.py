"""UNO Arena: a bot tournament platform for UNO under the official Mattel rules."""

from arena import grpc_env

grpc_env.apply()  # before any module imports grpc

__version__ = "0.1.0"
