"""A person at the table (``arena play --human``): a seat played from a web page.

The seat joins the referee as any bot does, through its seat's socket with its one-time
token: ``client`` is the protocol client, ``table`` what the page shows and the choice it
waits for, ``app`` the page's server (Starlette, on 127.0.0.1 behind a one-time token), and
``host`` runs the match and the server together on one event loop. The referee sees a
seat like any other but for its clock: the seat is untimed (``MatchSpec.untimed``).
"""
