"""What starts a seat's bot: the launcher under a season's (or league's) sandbox settings,
which both a match (``arena.league.executor``) and an entrant's first start
(``arena.league.preflight``) use, and the log header's record of the launchers a match had."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.league.season import SandboxSettings
from arena.referee.launch import SeatLauncher
from arena.sandbox.manifest import BotManifest


def seat_launcher(settings: SandboxSettings, bot: BotManifest, log_dir: Path, label: str
                  ) -> tuple[SeatLauncher, dict[str, Any]]:
    """The launcher for one seat under the season's sandbox settings, and its description
    (backend, limits, warnings) for the match log."""
    from arena import sandbox

    return sandbox.season_launcher(settings, bot, log_dir, label)


def sandbox_header(settings: SandboxSettings, descriptions: Sequence[dict[str, Any]]
                   ) -> dict[str, Any]:
    """The log header's sandbox record: what the seats' launchers actually are (a backend
    that could not run is replaced by another, and says so), with every seat's warnings,
    and the season's settings as asked for under ``requested``."""
    records = [d for d in descriptions if d]
    header: dict[str, Any] = dict(records[0]) if records else {}
    backends = sorted({str(r.get("backend")) for r in records})
    if len(backends) > 1:
        header["backend"] = " + ".join(backends)
    warnings: list[str] = []
    for record in records:
        warnings += [w for w in record.get("warnings", []) if w not in warnings]
    from arena.sandbox.cgroups import referee_cap, referee_cap_warning

    capped = referee_cap()
    if capped is False:
        warnings.append(referee_cap_warning())
    elif capped:
        from arena.sandbox.limits import REFEREE_MEMORY_MIB

        header["referee_memory_mib"] = REFEREE_MEMORY_MIB
    header["warnings"] = warnings
    header.setdefault("backend", settings.backend)
    header["requested"] = settings.to_dict()
    return header
