"""The league server (``arena server LEAGUE.toml``): authors submit bots over HTTP, each
submission becomes a version that is built and checked in the sandbox, active versions play
a continuous ladder rated with live TrueSkill, and the league ends with a final round robin
under a secret key, rated by the official standings.

It sits on top of everything (league, rating, report, sandbox, referee); nothing imports it.

* ``config``: the league file (``LEAGUE.toml``).
* ``store``: SQLite, the source of truth (authors, bots, versions, matches, results).
* ``uploads``: checking and unpacking an untrusted bot archive.
* ``validation``: build and conformance check of a queued version, in a worker process.
* ``ladder``: live ratings, the matchmaker, the phases, the final's schedule and standings.
* ``own_bots``: authors retiring their bots and deleting failed versions; ``challenges``:
  the unranked matches authors ask for, and their turns at the match slots.
* ``service``: the background threads (validation, then the ladder and the final) and
  what a restart puts right.
* ``organiser``: the organiser's token; ``overview``: what the organiser's state page
  shows; ``moments``: times as the pages say them.
* ``live``: the live updates' one watcher of the store and its event streams;
  ``live_match``: the public view of a ladder match in play, from its log so far.
* ``app``: the HTTP application (Starlette, served by uvicorn): its shared state,
  middleware and route table.
* ``routes``: its endpoints, by audience: ``public``, ``author``, ``organiser`` and
  ``api``, with what they share in ``common`` and ``submissions``.
"""
