"""Receiving a bot's archive and making it a queued version, for the submission form and
the API alike: the body read within its caps, the hourly limit, the archive's checks."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

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
BODIES_AT_ONCE = 32
"""Upload bodies the server receives at once (each up to ``max_bytes``, held in memory):
more than the authors' own limit lets a few of them hold."""
BODY_SECONDS = 30.0
BODY_BYTES_PER_SECOND = 50_000
"""A body must arrive within ``BODY_SECONDS`` plus a second per 50 kB of its cap (a 5 MB
cap: 130 s): a body sent a byte at a time cannot hold its place for longer."""
UNPACKS_AT_ONCE = 1
"""Archives unpacked at once (each a child process at full CPU); the others wait their
turn without a thread, so pages stay fast while uploads arrive."""


@dataclass(frozen=True)
class Received:
    body: bytes
    upload: int
    """The upload's row (``reserve_upload``): counted against the hourly limit from the
    moment its body starts."""


def body_deadline(cap: int) -> float:
    return BODY_SECONDS + cap / BODY_BYTES_PER_SECOND


class Receiving:
    """The upload bodies being read, by author's id (the event loop's own: no lock)."""

    def __init__(self) -> None:
        self.by_author: dict[int, int] = {}


def receiving_of(request: Request) -> Receiving:
    receiving: Receiving = request.app.state.receiving
    return receiving


def unpacking_of(request: Request) -> asyncio.Semaphore:
    """The app's turns at unpacking (``UNPACKS_AT_ONCE``)."""
    state = request.app.state
    if not hasattr(state, "unpacking"):  # made on the event loop that uses it
        state.unpacking = asyncio.Semaphore(UNPACKS_AT_ONCE)
    unpacking: asyncio.Semaphore = state.unpacking
    return unpacking


async def read_capped(request: Request, cap: int, author: Author) -> Received:
    """The upload's body, refused before it is read when its author is past the hourly
    limit or already sending ``UPLOADS_AT_ONCE``, or the server is receiving
    ``BODIES_AT_ONCE``: stalled bodies cannot fill the server's memory, and a body the
    limit refuses is never read. The upload counts against the hourly limit once its body
    starts, and a body that takes longer than ``body_deadline`` is refused (408)."""
    site = site_of(request)
    uploads = site.league.uploads
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > cap:
        raise UploadRefused(413, f"the upload is {declared} bytes; the league accepts "
                            f"at most {cap} (max_bytes)")
    since = time.time() - 3600
    receiving = receiving_of(request).by_author
    mine = receiving.get(author.id, 0)
    if mine >= UPLOADS_AT_ONCE or sum(receiving.values()) >= BODIES_AT_ONCE:
        raise UploadRefused(429, "too many uploads are being received just now; try "
                            "again in a minute")
    receiving[author.id] = mine + 1  # before any await: the next request counts it
    try:  # each thread has a connection of its own (site.store())
        upload = await run_in_threadpool(
            lambda: site.store().reserve_upload(author.id, since, uploads.per_hour))
    except BaseException:
        _received(receiving, author.id)
        raise
    if upload is None:
        _received(receiving, author.id)
        raise UploadRefused(429, f"at most {uploads.per_hour} submissions an hour "
                            "(per_hour); try again later")
    try:
        chunks = []
        size = 0
        deadline = body_deadline(cap)
        try:
            async with asyncio.timeout(deadline):
                async for chunk in request.stream():
                    size += len(chunk)
                    if size > cap:
                        raise UploadRefused(413, f"the upload is over {cap} bytes; the "
                                            "league accepts no more (max_bytes)")
                    chunks.append(chunk)
        except TimeoutError:
            raise UploadRefused(408, f"the upload's body took more than {deadline:g} s to "
                                "arrive; send it again") from None
        return Received(b"".join(chunks), upload)
    except BaseException as error:
        reason = error.reason if isinstance(error, UploadRefused) else "the body was cut off"
        await run_in_threadpool(
            lambda: site.store().settle_upload(upload, f"refused: {reason}"[:500]))
        raise
    finally:
        _received(receiving, author.id)


def _received(receiving: dict[int, int], author_id: int) -> None:
    receiving[author_id] -= 1
    if not receiving[author_id]:
        del receiving[author_id]


async def accept(request: Request, author: Author, archive: bytes, upload: int) -> Version:
    """Phase, the archive's checks (``UNPACKS_AT_ONCE`` at a time), the phase again (the
    organiser may have closed submissions meanwhile), then a new queued version; the
    upload ``upload`` (``read_capped``) is settled either way."""
    site = site_of(request)
    league = site.league
    store = site.store()

    def closed() -> UploadRefused | None:
        phase = ladder.current_phase(store, league)
        return None if phase == "open" else UploadRefused(
            409, f"the league is {phase}: submissions are closed")

    caps = Caps(league.uploads.max_bytes, league.uploads.max_unpacked_bytes,
                league.uploads.max_files)
    try:
        refusal = closed()
        if refusal is not None:
            raise refusal
        async with unpacking_of(request):
            unpacked = await run_in_threadpool(unpack_isolated, archive, caps,
                                               league.data / "bots")
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
