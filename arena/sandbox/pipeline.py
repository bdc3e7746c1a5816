"""Fetch, then build offline: how every bot with a lockfile is made ready to play.

``make_ready`` is the one path that ``arena check``, ``arena play``, seasons and the league
server's validation take (through ``arena.sandbox.prepare``), so what passes locally
passes on a server with the same registries:

1. for each ecosystem whose lockfile the bot has (``fetch.ECOSYSTEMS``), its dependencies
   are fetched once into the build cache (``fetch_dependencies``), keyed by what the fetch
   saw, or reused;
2. the build's private workspace gets the bot's sources without what ``arena vendor`` put
   in the folder (``node_modules/``, ``vendor/``...), a copy of each fetched tree where
   its tools look for it, and the owner's compiler caches (``kept``);
3. the author's build command runs offline, with the variables that point its tools at
   those trees; then the compiler caches are kept for the owner's next build, and what the
   bot does not need to run is removed before the output is packed.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from arena.sandbox.build import (
    BuildError,
    Starter,
    build,
    build_key,
    cache_entry,
    cache_root,
    copy_sources,
    pack_output,
    run_sandboxed,
    toolchain_identity,
    unpack_output,
)
from arena.sandbox.fetch import (
    PIPELINE,
    Ecosystem,
    Fetched,
    ecosystems_of,
    fetch_inputs,
    fetch_key,
    prepare_workspace,
    prune,
    registry_of,
    with_environment,
)
from arena.sandbox.manifest import BotManifest
from arena.sandbox.trees import remove_tree

LOCAL_OWNER = "local"


def owner_of(manifest: BotManifest, owner: str | None) -> str:
    """Whose compiler caches a build reads and writes: the server names the author; else
    the bot's own folder (a bot checked locally shares them with no other)."""
    if owner is not None:
        return owner
    return f"{LOCAL_OWNER}-{hashlib.sha256(os.fsencode(manifest.home)).hexdigest()[:16]}"


def fetch_dependencies(ecosystem: Ecosystem, manifest: BotManifest, start: Starter,
                       seconds: float, root: Path, registry: str, owner: str) -> Fetched:
    """The ecosystem's fetched tree for this bot, from the cache or fetched now."""
    key = fetch_key(ecosystem, manifest, registry, toolchain_identity(), owner)

    def fill(staging: Path) -> None:
        work = Path(tempfile.mkdtemp(prefix=f".fetch-{key[:16]}-", dir=root))
        try:
            workspace = work / "bot"
            copy_sources(manifest.folder, workspace,
                         None if not ecosystem.inputs else fetch_inputs(ecosystem, manifest))
            for vendored in ecosystem.vendored:
                remove_tree(workspace / vendored)
            prepare_workspace(ecosystem, workspace, registry)
            workspace.chmod(0o755)
            argv = ecosystem.command(registry)
            run_sandboxed(manifest, workspace, start, f"fetch-{manifest.name}-{key[:16]}",
                          with_environment(argv, ecosystem.environment(registry)), seconds,
                          f"the fetch step for {ecosystem.lockfile} ({' '.join(argv)}, "
                          f"from {registry})", offline=False, hosts=ecosystem.hosts(registry))
            output = workspace / ecosystem.output
            if not output.is_dir():
                raise BuildError(f"bot {manifest.label} ({manifest.folder}): the fetch step "
                                 f"for {ecosystem.lockfile} left no {ecosystem.output}/")
            prune(ecosystem, output)
            archive = work / "fetched.tar"
            pack_output(output, archive)
            unpack_output(archive, staging)
        finally:
            remove_tree(work)

    return Fetched(ecosystem, cache_entry(root, f"fetch-{ecosystem.name}-{key}", fill), key)


def _copy_tree(source: Path, target: Path) -> None:
    """Copy a tree the referee unpacked (folders and regular files only) to a workspace."""
    remove_tree(target)
    target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
    shutil.copytree(source, target, symlinks=True, copy_function=shutil.copy2)


class KeptTrees:
    """One owner's compiler caches for one toolchain: copied into a build's workspace and
    kept again from it afterwards, one build of that owner's at a time (a file lock)."""

    def __init__(self, root: Path, owner: str, ecosystems: list[Ecosystem]) -> None:
        toolchain = toolchain_identity()[:16]
        safe_owner = hashlib.sha256(owner.encode()).hexdigest()[:24]
        self.folder = root / "kept" / f"{safe_owner}-{toolchain}"
        self.paths = [(e, path) for e in ecosystems for path in e.kept]
        self._lock: int | None = None

    def __enter__(self) -> KeptTrees:
        if self.paths:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._lock = os.open(self.folder / ".lock", os.O_WRONLY | os.O_CREAT
                                 | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            fcntl.flock(self._lock, fcntl.LOCK_EX)
        return self

    def __exit__(self, *_: object) -> None:
        if self._lock is not None:
            os.close(self._lock)

    def _stored(self, path: str) -> Path:
        return self.folder / hashlib.sha256(path.encode()).hexdigest()[:16]

    def restore(self, workspace: Path) -> None:
        for _, path in self.paths:
            stored = self._stored(path)
            if stored.is_dir():
                _copy_tree(stored, workspace / path)

    def keep(self, workspace: Path) -> None:
        """Keep each cache as the build left it: packed like a build's output (no links,
        no special files), then moved into place in one step."""
        for _, path in self.paths:
            tree = workspace / path
            if not tree.is_dir() or tree.is_symlink():
                continue
            staging = Path(tempfile.mkdtemp(prefix=".keep-", dir=self.folder))
            try:
                archive = staging / "tree.tar"
                pack_output(tree, archive, times=True)
                unpack_output(archive, staging / "tree")
                stored = self._stored(path)
                if stored.exists():
                    aside = Path(tempfile.mkdtemp(prefix=".old-", dir=self.folder))
                    os.rename(stored, aside / "tree")
                    remove_tree(aside)
                os.rename(staging / "tree", stored)
            except BuildError:
                pass  # a cache too big to keep: the next build starts without it
            finally:
                remove_tree(staging)


def _chosen(manifest: BotManifest, registries: tuple[tuple[str, str], ...]
            ) -> list[tuple[Ecosystem, str]]:
    """The bot's ecosystems that this configuration fetches for, with their registries."""
    chosen = [(e, registry_of(e, registries)) for e in ecosystems_of(manifest)]
    return [(e, registry) for e, registry in chosen if registry]


def ready_key(manifest: BotManifest, registries: tuple[tuple[str, str], ...] = (),
              owner: str | None = None) -> str:
    """The build cache's name for the bot made ready: its build key, and with a fetch step,
    the fetched trees' keys (and its owner, where the build reads the owner's caches)."""
    chosen = _chosen(manifest, registries)
    if not chosen:
        return build_key(manifest)
    who = owner_of(manifest, owner)
    keys = [fetch_key(e, manifest, registry, toolchain_identity(), who)
            for e, registry in chosen]
    uses_kept = any(e.kept for e, _ in chosen)
    return hashlib.sha256(json.dumps({
        "build": build_key(manifest), "fetched": keys, "pipeline": 1,
        "owner": who if uses_kept else None}).encode()).hexdigest()


def make_ready(manifest: BotManifest, start: Starter, build_seconds: float,
               cache: Path | None = None, offline: bool = False, *,
               registries: tuple[tuple[str, str], ...] = (), owner: str | None = None
               ) -> BotManifest:
    """The bot as it plays: fetched and built (see the module documentation), or just
    built (``build``) when it has no lockfile, or none this configuration fetches for."""
    chosen = _chosen(manifest, registries)
    if not chosen:
        return build(manifest, start, build_seconds, cache, offline)
    root = (cache or cache_root()).absolute()
    root.mkdir(mode=0o755, parents=True, exist_ok=True)
    who = owner_of(manifest, owner)
    fetched = [fetch_dependencies(e, manifest, start, build_seconds, root, registry, who)
               for e, registry in chosen]
    ecosystems = [f.ecosystem for f in fetched]
    key = ready_key(manifest, registries, owner)
    environment: dict[str, str] = {}
    for ecosystem in ecosystems:
        environment.update(ecosystem.build_environment)
    argv = with_environment(list(manifest.build), environment) if manifest.build else []

    with KeptTrees(root, who, ecosystems) as kept:
        def setup(workspace: Path) -> None:
            remove_tree(workspace / PIPELINE)
            for item in fetched:
                for vendored in item.ecosystem.vendored:
                    remove_tree(workspace / vendored)
            for item in fetched:
                _copy_tree(item.folder, workspace / item.ecosystem.output)
            kept.restore(workspace)

        def finish(workspace: Path) -> None:
            kept.keep(workspace)
            for item in fetched:
                if not item.ecosystem.runtime:
                    remove_tree(workspace / item.ecosystem.output)
                if not item.ecosystem.kept_in_output:
                    for path in item.ecosystem.kept:
                        remove_tree(workspace / path)
            remove_tree(workspace / PIPELINE)

        return build(manifest, start, build_seconds, cache, offline, key=key, argv=argv,
                     setup=setup, finish=finish)
