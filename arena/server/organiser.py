"""The organiser's token: the secret that opens the organiser's pages (``/organiser``) and
their API. The league file holds no secret, so ``arena server`` draws one at its first
start and keeps it in the data folder (``ORGANISER_FILE``, mode 0600, the organiser's
alone); a request shows it as ``Authorization: Bearer TOKEN`` or, in a browser, in the
cookie the organiser's login form sets. It is compared in constant time.

To change it, delete the file and start the server again: a new one is drawn.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

ORGANISER_FILE = "organiser-token"
"""In the league's data folder."""
PREFIX = "organiser-"
"""Tells it from an author's token (``ID.SECRET``) at a glance."""


@dataclass(frozen=True)
class OrganiserToken:
    path: Path
    digest: bytes
    """The token's SHA-256: what a token shown is compared with (equal lengths, so
    ``hmac.compare_digest`` takes the same time whatever was sent)."""
    created: bool
    """Drawn at this start (the file was not there)."""

    def matches(self, given: str) -> bool:
        return hmac.compare_digest(hashlib.sha256(given.encode()).digest(), self.digest)


def organiser_token(data: Path) -> OrganiserToken:
    """The league's organiser token, read from the data folder, or drawn and written there
    (0600, never over another token) when it has none."""
    path = data / ORGANISER_FILE
    created = False
    if path.is_file() and not path.read_text().strip():
        path.unlink()  # an empty file holds no secret: a new one is drawn
    if not path.exists():
        token = PREFIX + secrets.token_urlsafe(32)
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process drew it first: theirs is kept
            pass
        else:
            with os.fdopen(descriptor, "w") as file:
                file.write(token + "\n")
            created = True
    path.chmod(0o600)
    token = path.read_text().strip()
    return OrganiserToken(path, hashlib.sha256(token.encode()).digest(), created)
