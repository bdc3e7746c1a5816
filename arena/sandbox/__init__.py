"""Starting bot processes: bot manifests and launcher backends behind one interface."""

from arena.sandbox.manifest import BotManifest, ManifestError, load_manifest
from arena.sandbox.plain import PlainLauncher, PlainProcess

__all__ = ["BotManifest", "ManifestError", "PlainLauncher", "PlainProcess", "load_manifest"]
