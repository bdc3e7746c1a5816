"""A bot that speaks HTTP/2 by hand: ``python h2flood.py KIND``.

It says hello and answers every request legally (the first legal action) on its stream,
and from its first request on floods its own connection with HTTP/2 frames of one KIND:
``window-updates`` (WINDOW_UPDATE of 1 byte on the connection) or ``settings`` (empty
SETTINGS frames, each of which gRPC must acknowledge). Blocking writes: it spends no CPU
while the referee is busy parsing (gRPC bounds no frame but PINGs, and the parsing, on
threads the referee shares, would make the other seat's answers late).
"""

from __future__ import annotations

import struct
import sys
import threading

import h2raw as h2

from arena.protocol import pb

FLOOD = {
    "window-updates": h2.frame(h2.WINDOW_UPDATE, 0, 0, struct.pack(">I", 1)) * 4096,
    "settings": h2.frame(h2.SETTINGS, 0, 0) * 4096,
}[sys.argv[1]]

connection = h2.Connection()
flooding = threading.Event()


def flood() -> None:
    flooding.wait()
    try:
        while True:
            connection.send(FLOOD)
    except OSError:  # cut off
        return


connection.send(h2.PREFACE + h2.frame(h2.SETTINGS, 0, 0)
                + h2.frame(h2.HEADERS, h2.END_HEADERS, 1, h2.HEADER_BLOCK)
                + h2.message(h2.hello("h2flood")))
threading.Thread(target=flood, daemon=True).start()
try:
    for response in connection.responses(1):
        if response.HasField("decision_request"):
            connection.send(h2.message(pb.PlayRequest(decision=pb.Decision(
                request_id=response.decision_request.request_id, action_index=0))))
            flooding.set()
        elif response.HasField("match_end"):
            connection.send(h2.frame(h2.DATA, h2.END_STREAM, 1))
            break
except OSError:  # cut off
    pass
