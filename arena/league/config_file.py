"""What season files and league files share: a TOML file read whole, its tables checked
against those it may hold, and typed fields whose errors name the file, the table, the field
and what was expected (and, for a byte that is not UTF-8, its line)."""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.formats import toml_table

TLS_FILES = ("tls_ca_file", "tls_cert_file", "tls_key_file")
"""The fields naming a cluster connection's CA, certificate and key files."""


@dataclass(frozen=True)
class FileKind:
    """A kind of file: what its messages call it, the error it raises, the fields each of
    its tables may hold (in the order its messages list them) and the table it needs."""

    what: str
    error: type[ValueError]
    tables: Mapping[str, Collection[str]]
    first: str

    def read(self, path: Path) -> dict[str, Any]:
        """The file's tables, each one it may hold and its ``first`` among them."""
        if not path.is_file():
            raise self.error(f"{path}: no such {self.what}")
        try:
            data = toml_table(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError as error:
            line = path.read_bytes()[:error.start].count(b"\n") + 1
            raise self.error(f"{path}: not UTF-8 text (byte 0x{error.object[error.start]:02x} "
                             f"on line {line}); save the {self.what} as UTF-8") from None
        except OSError as error:
            raise self.error(f"{path}: cannot read the {self.what} ({error.strerror})") from None
        except tomllib.TOMLDecodeError as error:
            raise self.error(f"{path}: not valid TOML: {error}") from None
        unknown = sorted(set(data) - set(self.tables))
        if unknown:
            raise self.error(f"{path}: unknown table(s) {', '.join(unknown)}; "
                             f"known: {', '.join(self.tables)}")
        if self.first not in data:
            raise self.error(f"{path}: missing the [{self.first}] table")
        return data

    def table(self, path: Path, name: str, data: Any) -> Table:
        """Typed access to the table ``name`` of the file at ``path`` (``data``: its value)."""
        return Table(self, path, name, data)


class Table:
    """Typed access to one table of a file, with errors that name the file and field."""

    def __init__(self, kind: FileKind, path: Path, name: str, data: Any) -> None:
        self.kind, self.path, self.name = kind, path, name
        if not isinstance(data, dict):
            raise self.error(name, "a table", data)
        self.data: dict[str, Any] = data
        known = kind.tables[name]
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise kind.error(f"{path}: [{name}] has unknown field(s) {', '.join(unknown)}; "
                             f"known: {', '.join(sorted(known))}")

    def error(self, key: str, expected: str, got: Any) -> ValueError:
        where = f"[{self.name}] {key}" if key != self.name else f"[{key}]"
        return self.kind.error(f"{self.path}: {where} must be {expected}, not {got!r}")

    def integer(self, key: str, default: int | None, low: int, high: int | None = None) -> int:
        value = self.data.get(key, default)
        if value is None:
            raise self.kind.error(f"{self.path}: [{self.name}] {key} is required "
                                  f"(an integer ≥ {low})")
        if not isinstance(value, int) or isinstance(value, bool) or value < low or (
            high is not None and value > high
        ):
            span = f"from {low} to {high}" if high is not None else f"≥ {low}"
            raise self.error(key, f"an integer {span}", value)
        return value

    def number(self, key: str, default: float, low: float, high: float = math.inf) -> float:
        value = self.data.get(key, default)
        # TOML has inf and nan: neither is a limit.
        if (isinstance(value, bool) or not isinstance(value, int | float)
                or not math.isfinite(value) or not low <= value <= high):
            wanted = f"a number ≥ {low:g}" if high == math.inf else (
                f"a number from {low:g} to {high:g}")
            raise self.error(key, wanted, value)
        return float(value)

    def boolean(self, key: str, default: bool) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            raise self.error(key, "true or false", value)
        return value

    def string(self, key: str, default: str | None, pattern: str | None = None) -> str:
        value = self.data.get(key, default)
        if value is None:
            raise self.kind.error(f"{self.path}: [{self.name}] {key} is required (a string)")
        if not isinstance(value, str) or not value or "\0" in value or (
            pattern and not re.fullmatch(pattern, value)
        ):  # a NUL names no file nor host (open() refuses it as "embedded null byte")
            raise self.error(key, "a non-empty string with no NUL" + (
                f" matching {pattern}" if pattern else ""), value)
        return value

    def host_names(self, key: str) -> tuple[str, ...]:
        from arena.sandbox.egress import host_pattern

        value = self.data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(key, "a list of host names", value)
        try:
            return tuple(dict.fromkeys(host_pattern(v) for v in value))
        except ValueError as error:
            raise self.kind.error(f"{self.path}: [{self.name}] {key}: {error}") from None

    def registries(self, key: str) -> tuple[tuple[str, str], ...]:
        """An inline table of ecosystem = registry address ("" for none), checked."""
        from arena.sandbox.fetch import registry_address

        value = self.data.get(key, {})
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise self.error(key, 'a table of ecosystem = "https://..." (or "")', value)
        try:
            return tuple((name, registry_address(name, address))
                         for name, address in sorted(value.items()))
        except ValueError as error:
            raise self.kind.error(f"{self.path}: [{self.name}] {error}") from None

    def tls_files(self) -> tuple[Path, Path, Path] | None:
        """The CA, certificate and key files (``TLS_FILES``, relative to the file),
        resolved; None when none is named. They go together: all three or none."""
        given = [name for name in TLS_FILES if name in self.data]
        if not given:
            return None
        if len(given) != len(TLS_FILES):
            raise self.kind.error(f"{self.path}: [{self.name}] {', '.join(TLS_FILES)} go "
                                  f"together; only {', '.join(given)} given")
        ca, cert, key = ((self.path.parent / self.string(name, None)).resolve()
                         for name in TLS_FILES)
        return ca, cert, key
