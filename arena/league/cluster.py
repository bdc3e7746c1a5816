"""The Dask executor: each match is one task on a Dask worker.

The driver ships every bot folder once, by content hash; a worker unpacks it into its own
cache (once per worker and hash), plays the match with the local sandbox, and returns the
result with the compressed match log and the bots' output files. The driver writes those
into the season folder and the store, so the store stays the source of truth: Dask keeps
futures in memory only, and a restarted driver resumes from the store as locally.

The scheduler runs whatever code its clients send on the workers, so ``DaskExecutor`` refuses
an address that is not on this machine unless the connection is TLS with certificates
(``cluster_security``), or the organiser says the network is private (``insecure=True``,
``--insecure-cluster``): see docs/clusters.md.

A task whose worker dies is retried by Dask; one that keeps killing workers
(``distributed.scheduler.allowed-failures``) ends as a failed match with its reason. Each
match's future is released as soon as its result is stored: Dask recomputes a lost result
only while someone still wants it, so a lost worker costs only the matches it was playing.
Bots are shipped as tasks whose arguments hold the packed folder (kept by the scheduler),
not scattered: the scheduler recomputes a lost task result on another worker, but scattered
data left on a single worker (the active memory manager drops replicas no task waits for)
is gone with it, and every task needing it is cancelled.
Matches are submitted as earlier ones finish, a few per worker thread in flight (the
local executor's window).

Workers are pinned to cores as the local executor's are (``core_plan``), host by host: a
host whose workers (connected when the season starts) fill its cores gets one core per
worker. A worker that joins later, or that its nanny restarts, runs unpinned.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import ipaddress
import itertools
import os
import tarfile
import tempfile
import uuid
import warnings
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from arena.league.executor import (
    WINDOW_PER_WORKER,
    JobOutcome,
    MatchJob,
    cap_worker_memory,
    core_plan,
    first_jobs,
    pin_process,
    play_job,
    starting_workers,
    usable_cores,
)
from arena.league.preflight import ProbeJob, probe_entrants
from arena.processes import owner_tag
from arena.sandbox.manifest import BotManifest
from arena.sandbox.trees import remove_tree


class ClusterSecurityError(ValueError):
    """A cluster address the driver will not use as given; the message says what to add."""


@dataclasses.dataclass(frozen=True)
class ClusterTLS:
    """The driver's TLS files for a cluster (``distributed.security.Security``): the CA
    that signed the scheduler's and workers' certificates, and the driver's own pair."""

    ca_file: Path
    cert_file: Path
    key_file: Path

    def security(self) -> Any:
        from distributed.security import Security

        for path in (self.ca_file, self.cert_file, self.key_file):
            if not path.is_file():
                raise ClusterSecurityError(f"TLS file {path} does not exist")
        return Security(  # type: ignore[no-untyped-call]
            tls_ca_file=str(self.ca_file), tls_client_cert=str(self.cert_file),
            tls_client_key=str(self.key_file), require_encryption=True)


def is_local_address(address: str) -> bool:
    """Whether a Dask address is on this machine (loopback or in-process)."""
    if "://" not in address:
        address = f"tcp://{address}"
    parts = urlsplit(address)
    if parts.scheme == "inproc":
        return True
    host = parts.hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def cluster_security(address: str | None, tls: ClusterTLS | None, insecure: bool) -> Any:
    """The ``Security`` to connect to ``address`` with (None: plain TCP), or
    ClusterSecurityError when the address would expose the cluster: a scheduler runs any
    code its clients send on its workers, so a plain-TCP scheduler reachable from another
    machine is a remote code execution service for anyone on that network."""
    if address is None:
        return tls.security() if tls is not None else None
    scheme = urlsplit(address).scheme if "://" in address else "tcp"
    if scheme in ("tls", "wss"):
        if tls is None:
            raise ClusterSecurityError(
                f"the cluster address {address} is TLS but no certificates were given: add "
                "--tls-ca-file, --tls-cert and --tls-key (or tls_ca_file, tls_cert_file and "
                "tls_key_file in [season])")
        return tls.security()
    if tls is not None:
        raise ClusterSecurityError(
            f"TLS certificates were given but the cluster address {address} is not TLS: "
            f"use tls://{address.split('://', 1)[-1]}")
    if is_local_address(address) or insecure:
        return None
    raise ClusterSecurityError(
        f"refusing the cluster address {address}: it is not on this machine and not TLS, "
        "and a Dask scheduler runs any code its clients send, so anyone who can reach it "
        "can run code on the workers; use tls:// with --tls-ca-file, --tls-cert and "
        "--tls-key (see docs/clusters.md), or --insecure-cluster "
        "(insecure_cluster = true) if the network is private to the cluster")

CACHE = Path(os.environ.get("ARENA_BOT_CACHE", Path(tempfile.gettempdir()) / "arena-bot-cache"))
SKIPPED = ("__pycache__", ".git")


def pack_bot(folder: Path) -> bytes:
    """A bot folder as tar.gz bytes (what is shipped to workers)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(folder)
            if any(part in SKIPPED for part in relative.parts) or not path.is_file():
                continue
            archive.add(path, arcname=relative.as_posix(), recursive=False)
    return buffer.getvalue()


def unpack_bot(content_hash: str, packed: bytes) -> Path:
    """The bot's folder in this worker's cache, unpacked once per hash."""
    target = CACHE / content_hash
    if (target / ".complete").exists():
        return target
    staging = CACHE / f".{content_hash}.{uuid.uuid4().hex}"
    staging.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(packed), mode="r:gz") as archive:
        archive.extractall(staging, filter="data")
    (staging / ".complete").touch()
    with contextlib.suppress(OSError):  # another task unpacked it first
        staging.rename(target)
    return target


def work_folder(what: str) -> Path:
    """A worker's temporary folder for one task, named after its owner (pid and start
    time), so a start-up sweep removes it if the worker dies mid-task."""
    return Path(tempfile.mkdtemp(prefix=f"arena-match-{owner_tag()}-{what}-"))


def local_bots(bots: Sequence[BotManifest], packed: dict[str, bytes], hashes: Sequence[str],
               shared: bool) -> tuple[BotManifest, ...]:
    """The bots at their paths on this worker (unpacked into its cache unless shared)."""
    if shared:
        return tuple(bots)
    return tuple(dataclasses.replace(bot, folder=unpack_bot(h, packed[h]))
                 for bot, h in zip(bots, hashes, strict=True))


def packed_bot(packed: bytes) -> bytes:
    """Runs on a worker: a shipped bot's packed folder (the task's result is its argument, so
    the scheduler can compute it again on another worker)."""
    return packed


def remote_play(job: MatchJob, packed: dict[str, bytes], hashes: tuple[str, ...],
                shared: bool) -> tuple[JobOutcome, bytes, dict[str, bytes]]:
    """Runs on a worker: play the match, return the outcome, the log and the bot output."""
    cap_worker_memory()
    work = work_folder(job.match_id)
    try:
        bots = local_bots(job.bots, packed, hashes, shared)
        local = dataclasses.replace(job, bots=bots, log_path=work / job.log_path.name,
                                    output_dir=work / "output")
        outcome = play_job(local)
        log = local.log_path.read_bytes() if local.log_path.exists() else b""
        output = {}
        if local.output_dir.exists():
            output = {p.name: p.read_bytes() for p in local.output_dir.iterdir() if p.is_file()}
    finally:
        remove_tree(work)
    if outcome.record is not None:
        record = dataclasses.replace(outcome.record, log_path=str(job.log_path))
        outcome = dataclasses.replace(outcome, record=record)
    return outcome, log, output


def remote_probe(jobs: list[ProbeJob], packed: dict[str, bytes], hashes: tuple[str, ...],
                 shared: bool) -> list[str | None]:
    """Runs on a worker: start each entrant once (``arena.league.preflight``)."""
    work = work_folder("probe")
    try:
        bots = local_bots([job.bot for job in jobs], packed, hashes, shared)
        return probe_entrants([dataclasses.replace(job, bot=bot, output_dir=work)
                               for job, bot in zip(jobs, bots, strict=True)])
    finally:
        remove_tree(work)


def pin_workers(client: Any) -> dict[str, int]:
    """Pin the connected workers to cores, host by host (see the module documentation);
    worker address -> core, for the workers pinned."""
    cores = client.run(usable_cores)
    hosts: dict[str, list[str]] = {}
    for address in cores:
        hosts.setdefault(urlsplit(address).hostname or address, []).append(address)
    pinned: dict[str, int] = {}
    for workers in hosts.values():
        workers.sort()
        plan = core_plan(len(workers), cores[workers[0]])
        for address, core in zip(workers, plan or [], strict=False):
            if client.run(pin_process, core, workers=[address]).get(address):
                pinned[address] = core
    return pinned


class DaskExecutor:
    """Run matches on a Dask cluster (``address``) or a LocalCluster of ``workers``."""

    def __init__(self, address: str | None = None, workers: int = 2,
                 shared_bots: bool = False, pin_cores: bool = True, *,
                 security: Any = None) -> None:
        """``security``: a ``distributed.security.Security`` for the connection (see
        ``cluster_security``, which also checks the address)."""
        self.address = address
        self.security = security
        self.workers = workers
        self.shared_bots = shared_bots
        self.pin_cores = pin_cores
        self.client: Any = None
        self.cluster: Any = None
        self.shipped: dict[str, Any] = {}
        """Bot content hash -> the future of its packed folder on the cluster."""

    def _connect(self) -> Any:
        from distributed import Client, LocalCluster

        if self.client is not None:
            return self.client
        if self.address:
            self.client = Client(  # type: ignore[no-untyped-call]
                self.address, security=self.security)
        else:
            with starting_workers():  # Ctrl-C stops the driver, which closes the cluster
                self.cluster = LocalCluster(  # type: ignore[no-untyped-call]
                    n_workers=self.workers, threads_per_worker=1, processes=True,
                    dashboard_address=None, host="127.0.0.1",
                    **({"protocol": "tls", "security": self.security} if self.security
                       else {}))
            self.client = Client(  # type: ignore[no-untyped-call]
                self.cluster, security=self.security)
            self.client.wait_for_workers(self.workers)
        if self.pin_cores:
            pin_workers(self.client)
        return self.client

    def _ship(self, client: Any, bots: dict[str, BotManifest]) -> Any:
        """The bots for the workers: one task per bot and run, or nothing when the workers
        share the bot folders. Its argument is the packed folder, so the scheduler holds the
        bytes and recomputes the task elsewhere when the worker holding its result dies
        (scattered data would be lost with it). The futures are kept until shutdown, which
        is what makes the scheduler keep and recompute the results."""
        if self.shared_bots:
            return {}
        for h, bot in bots.items():
            if h in self.shipped:
                continue
            with warnings.catch_warnings():
                # A bot over 10 MB makes Dask warn of a large graph: that size is the point
                # (the scheduler must hold the bytes to recompute the bot), and it is sent
                # once a run.
                warnings.filterwarnings("ignore", message="Sending large graph",
                                        category=UserWarning)
                # A key unique to this run: packing again gives other bytes (archive times),
                # and Dask warns that one key with two different tasks can deadlock.
                self.shipped[h] = client.submit(packed_bot, pack_bot(bot.folder),
                                                key=f"bot-{h}-{uuid.uuid4().hex[:8]}",
                                                pure=False)
        return {h: self.shipped[h] for h in bots}

    def probe(self, jobs: Sequence[ProbeJob]) -> list[str | None]:
        """On a worker, where the matches will run."""
        if not jobs:
            return []
        client = self._connect()
        hashes = tuple(job.bot.content_hash() for job in jobs)
        packed = self._ship(client, dict(zip(hashes, (job.bot for job in jobs), strict=True)))
        future = client.submit(remote_probe, list(jobs), packed, hashes, self.shared_bots,
                               key=f"probe-{uuid.uuid4().hex[:8]}", pure=False)
        try:
            return list(future.result())
        finally:
            future.release()

    def window(self, client: Any) -> int:
        """Matches in flight: ``WINDOW_PER_WORKER`` per worker thread of the cluster, asked
        at each refill so that workers joining a running season get matches too (at least
        as many as for ``workers``)."""
        threads = sum(int(n) for n in client.nthreads().values())
        return WINDOW_PER_WORKER * max(self.workers, threads)

    def run(self, jobs: Iterable[MatchJob]) -> Iterator[JobOutcome]:
        from distributed import as_completed

        source = iter(jobs)
        first = first_jobs(source, self.workers)
        if not first:
            return
        client = self._connect()
        try:
            hashes_of: dict[BotManifest, str] = {}  # each bot's folder read once a run
            in_flight: dict[Any, MatchJob] = {}
            finishing = as_completed()  # type: ignore[no-untyped-call]

            def submit(job: MatchJob) -> None:
                for bot in job.bots:
                    if bot not in hashes_of:
                        hashes_of[bot] = bot.content_hash()
                hashes = tuple(hashes_of[bot] for bot in job.bots)
                # Only its own bots: one lost with a worker is recomputed from the scheduler's
                # copy (``_ship``), so no match needs to keep replicas of the others alive.
                packed = self._ship(client, dict(zip(hashes, job.bots, strict=True)))
                future = client.submit(remote_play, job, packed, hashes, self.shared_bots,
                                       key=f"match-{job.match_id}-{uuid.uuid4().hex[:8]}",
                                       pure=False, retries=0)
                in_flight[future] = job
                finishing.add(future)  # type: ignore[no-untyped-call]

            for job in first:
                submit(job)
            for future in finishing:
                job = in_flight.pop(future)
                try:
                    outcome, log, output = future.result()
                except Exception as error:  # KilledWorker after allowed-failures, or a bug
                    outcome = JobOutcome(job.match_id, None,
                                         f"the match failed on the cluster: {error!r}")
                else:
                    if log:
                        job.log_path.parent.mkdir(parents=True, exist_ok=True)
                        partial = job.log_path.with_name(
                            job.log_path.name + f".{os.getpid()}.partial")
                        partial.write_bytes(log)
                        partial.replace(job.log_path)
                    if output:
                        job.output_dir.mkdir(parents=True, exist_ok=True)
                        for name, data in output.items():
                            (job.output_dir / name).write_bytes(data)
                yield outcome
                # The driver has stored it: nobody wants it any more, so a worker lost from
                # now on does not make the scheduler compute it again.
                future.release()
                # The next matches, in schedule order, as this one is recorded.
                window = self.window(client)
                for job in itertools.islice(source, max(window - len(in_flight), 0)):
                    submit(job)
        finally:
            self.shutdown()

    def shutdown(self) -> None:
        self.shipped.clear()
        client, self.client = self.client, None
        cluster, self.cluster = self.cluster, None
        workers: list[int] = []
        if client is not None:
            if cluster is not None:  # our own local workers: their referee cgroups go too
                with contextlib.suppress(Exception):
                    workers = list(client.run(os.getpid).values())
            client.close()
        if cluster is not None:
            cluster.close()
            from arena.sandbox.cgroups import release_referees

            release_referees(workers)
