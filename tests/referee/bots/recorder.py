"""A bot that keeps every event it is sent: ``python recorder.py OUT [N ...]``.

It plays the first legal action, except that its N-th decisions (1-based) are answered
with an index out of range (a fault, struck by the referee). Every event of every response
is appended to OUT, one base64 ``Event`` per line, in the order received.
"""

from __future__ import annotations

import base64
import sys

from rawbot import RawBot


def main() -> None:
    out, faulty = sys.argv[1], {int(n) for n in sys.argv[2:]}
    bot = RawBot()
    bot.hello()
    decisions = 0
    with open(out, "w") as kept:
        for response in bot.responses():
            for event in response.events:
                kept.write(base64.b64encode(event.SerializeToString()).decode() + "\n")
            kind = response.WhichOneof("message")
            if kind == "match_end":
                break
            if kind == "decision_request":
                decisions += 1
                bot.answer(response.decision_request.request_id,
                           999 if decisions in faulty else 0)
    bot.close()


if __name__ == "__main__":
    main()
