"""UNO Arena: a bot tournament platform for UNO under the official Mattel rules."""

__version__ = "0.1.0"
