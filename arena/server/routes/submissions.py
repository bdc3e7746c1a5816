"""Receiving a bot's archive and making it a queued version, for the submission form and
the API alike: the body read within its caps, the hourly limit, the archive's checks."""

from __future__ import annotations

import time

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from arena.server import ladder
from arena.server.events import event
from arena.server.routes.common import site_of
from arena.server.store import Author, Conflict, Version
from arena.server.uploads import Caps, UploadRefused, unpack_isolated
from arena.server.validating import lane_of, validation_key

FORM_OVERHEAD = 64 * 1024
"""Room for a multipart form's boundaries and fields around the archive."""
UPLOADS_AT_ONCE = 2
"""Upload bodies one author may be sending at once."""
BODIES_AT_ONCE = 16
"""Upload bodies the server receives at once (each up to ``max_bytes``, held in memory)."""


class Receiving:
    """The upload bodies being read, by author's id (the event loop's own: no lock)."""

    def __init__(self) -> None:
        self.by_author: dict[int, int] = {}


def receiving_of(request: Request) -> Receiving:
    receiving: Receiving = request.app.state.receiving
    return receiving


async def read_capped(request: Request, cap: int, author: Author) -> bytes:
    """The upload's body, refused before it is read when its author is past the hourly
    limit or already sending ``UPLOADS_AT_ONCE``, or the server is receiving
    ``BODIES_AT_ONCE``: stalled bodies cannot fill the server's memory, and a body the
    limit refuses is never read."""
    site = site_of(request)
    uploads = site.league.uploads
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > cap:
        raise UploadRefused(413, f"the upload is {declared} bytes; the league accepts "
                            f"at most {cap} (max_bytes)")
    since = time.time() - 3600
    sent = await run_in_threadpool(lambda: site.store().uploads_since(author.id, since))
    if sent >= uploads.per_hour:
        raise UploadRefused(429, f"at most {uploads.per_hour} submissions an hour "
                            "(per_hour); try again later")
    receiving = receiving_of(request).by_author
    mine = receiving.get(author.id, 0)
    if mine >= UPLOADS_AT_ONCE or sum(receiving.values()) >= BODIES_AT_ONCE:
        raise UploadRefused(429, "too many uploads are being received just now; try "
                            "again in a minute")
    receiving[author.id] = mine + 1
    try:
        chunks = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > cap:
                raise UploadRefused(413, f"the upload is over {cap} bytes; the league "
                                    "accepts no more (max_bytes)")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        receiving[author.id] -= 1
        if not receiving[author.id]:
            del receiving[author.id]


async def accept(request: Request, author: Author, archive: bytes) -> Version:
    """Phase, rate limit (counted as the upload arrives), the archive's checks, the
    phase again (the organiser may have closed submissions meanwhile), then a new
    queued version."""
    site = site_of(request)
    league = site.league
    store = site.store()

    def closed() -> UploadRefused | None:
        phase = ladder.current_phase(store, league)
        return None if phase == "open" else UploadRefused(
            409, f"the league is {phase}: submissions are closed")

    refusal = closed()
    if refusal is not None:
        raise refusal
    upload = store.reserve_upload(author.id, time.time() - 3600, league.uploads.per_hour)
    if upload is None:
        raise UploadRefused(429, f"at most {league.uploads.per_hour} submissions an hour "
                            "(per_hour); try again later")
    caps = Caps(league.uploads.max_bytes, league.uploads.max_unpacked_bytes,
                league.uploads.max_files)
    try:
        unpacked = await run_in_threadpool(unpack_isolated, archive, caps, league.data / "bots")
        refusal = closed()
        if refusal is not None:
            raise refusal
        manifest = unpacked.manifest
        # Its lane and validation key, known at once (the toolchains are looked at in a
        # thread the first time: it reads files).
        key = await run_in_threadpool(validation_key, unpacked.content_hash, manifest, league,
                                       author.id)
        try:
            version = store.add_version(author.id, manifest.name, manifest.version,
                                        unpacked.content_hash, unpacked.archive_sha256,
                                        str(manifest.folder),
                                        league.ladder.max_bots_per_author, upload)
        except Conflict as error:
            raise UploadRefused(409, str(error)) from None
        store.classify(version.id, lane_of(manifest), key)
        event("submission", author=author.name, bot=version.bot, version=version.number,
              version_id=version.id, bytes=len(archive), lane=lane_of(manifest))
        return version
    except UploadRefused as error:
        store.settle_upload(upload, f"refused: {error.reason}"[:500])
        event("submission_refused", author=author.name, status=error.status,
              reason=error.reason[:300])
        raise
    except BaseException:
        store.settle_upload(upload, "refused: the server could not take it")
        raise
