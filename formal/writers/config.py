"""``[tool.ptxlayout]`` in ``pyproject.toml``: a project's settings, found as ruff finds its own.

From the working folder up to the root, the first ``pyproject.toml`` with a ``[tool.ptxlayout]``
table is the configuration (one without it is passed over).  Worked on one file::

    [tool.ptxlayout]
    select = ["injective", "surjective"]      # as --select
    ignore = ["punctuation"]                  # as --ignore
    timeout = 10                              # as --timeout (prove, diff)
    evidence = "proofs/evidence"              # as --evidence, relative to this file
    [[tool.ptxlayout.accept]]                 # as an --accept file's entries
    kind = "type-names"
    line = 145
    reason = "the section title lists integer types only; reported upstream"

An option given on the command line wins over the file.  Every key is checked before any work:
a key it does not know (``selct``), a value of the wrong type or an accept entry that cannot be
used is a ``ConfigError`` naming the file and the key's line -- the command exits 2.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from difflib import get_close_matches
from pathlib import Path
from typing import Any

from .ledger import accept_entries

TABLE = "tool.ptxlayout"
# key -> (the types it takes, what it is)
KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "select": ((list,), "a list of finding kinds (prefixes), as --select"),
    "ignore": ((list,), "a list of finding kinds (prefixes), as --ignore"),
    "timeout": ((int, float), "Z3's limit per query in seconds, as --timeout"),
    "evidence": ((str,), "the GPU evidence folder (relative to pyproject.toml), or 'none'"),
    "accept": ((list,), "accepted findings ([[tool.ptxlayout.accept]] tables), as --accept"),
}


class ConfigError(ValueError):
    """A ``[tool.ptxlayout]`` that cannot be used: ``file:line: what``."""


@dataclass(frozen=True)
class Config:
    """The settings of ``[tool.ptxlayout]`` (``path``: the file; None: none was found)."""

    path: Path | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    timeout: float | None = None
    evidence: str | None = None
    accept: tuple[tuple[str, int, dict[str, Any]], ...] = field(default=())


def find_pyproject(start: Path) -> Path | None:
    """The first ``pyproject.toml`` from ``start`` upwards whose text has a
    ``[tool.ptxlayout]`` (or ``[tool.ptxlayout.`` ...) table."""
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        try:
            text = candidate.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if _HEADER.search(text):
            return candidate
    return None


_HEADER = re.compile(r"^\s*\[\[?\s*tool\.ptxlayout\s*[\].]", re.M)


def _line_of(text: str, key: str) -> int:
    """The line of ``key = ...`` (or of the ``[[tool.ptxlayout.key]]`` header) inside the
    ``tool.ptxlayout`` tables of ``text``; 1 when it cannot be found."""
    table = ""
    for n, line in enumerate(text.splitlines(), 1):
        head = re.match(r"\s*\[\[?\s*([^\]]+?)\s*\]\]?", line)
        if head:
            table = head.group(1).replace('"', "")
            if table == f"{TABLE}.{key}":
                return n
            continue
        if table == TABLE and re.match(rf"\s*[\"']?{re.escape(key)}[\"']?\s*=", line):
            return n
        if table == "tool" and re.match(rf"\s*ptxlayout\.{re.escape(key)}\s*=", line):
            return n
    return 1


def load_config(start: Path | None = None) -> Config:
    """The configuration found from ``start`` (default: the working folder) upwards; an empty
    ``Config`` when there is none; a ``ConfigError`` when it cannot be used."""
    path = find_pyproject((start or Path.cwd()).resolve())
    if path is None:
        return Config()
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ModuleNotFoundError:
            raise ConfigError(f"{path}:1: [tool.ptxlayout] needs Python 3.11 or the tomli "
                              "package to be read") from None
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not TOML: {exc}") from None
    table = data.get("tool", {}).get("ptxlayout", {})
    if not isinstance(table, Mapping):
        raise ConfigError(f"{path}:{_line_of(text, '')}: [tool.ptxlayout] must be a table")
    return read_config(table, path, text)


def read_config(table: Mapping[str, Any], path: Path, text: str = "") -> Config:
    """``table`` (the parsed ``[tool.ptxlayout]``) checked key by key."""
    values: dict[str, Any] = {}
    for key, value in table.items():
        where = f"{path}:{_line_of(text, key)}"
        if key not in KEYS:
            close = get_close_matches(key, list(KEYS), n=1)
            raise ConfigError(f"{where}: unknown key '{key}' in [tool.ptxlayout]" + (
                f"; did you mean '{close[0]}'?" if close else
                f" (the keys: {', '.join(KEYS)})"))
        types, what = KEYS[key]
        if isinstance(value, bool) or not any(isinstance(value, t) for t in types):
            raise ConfigError(f"{where}: '{key}' must be {what}, not {value!r}")
        if key in ("select", "ignore"):
            if not all(isinstance(v, str) and v for v in value):
                raise ConfigError(f"{where}: '{key}' must be {what}, not {value!r}")
            values[key] = tuple(value)
        elif key == "timeout":
            if not 0 < value < float("inf"):
                raise ConfigError(f"{where}: 'timeout' must be a positive number of seconds")
            values[key] = float(value)
        elif key == "evidence":
            values[key] = value if value == "none" else str(path.parent / value)
        else:
            try:
                values[key] = tuple(accept_entries(value, where))
            except ValueError as exc:
                raise ConfigError(str(exc)) from None
    return Config(path, **values)


def configure(args: Any, start: Path | None = None) -> Config:
    """Settle prove's and diff's options (an argparse namespace, changed in place) with the
    configuration found from ``start``: an option given on the command line wins; the kinds of
    ``--select`` / ``--ignore`` (and of the file) are checked against ``writers.kinds``.  A
    ``ValueError`` (``ConfigError`` for the file) of what cannot be used, one problem a line."""
    from ..base.options import kinds
    from .kinds import unknown_kinds
    args.config = cfg = load_config(start)
    args.timeout = args.timeout or cfg.timeout or 5.0
    if args.evidence == "auto" and cfg.evidence:
        args.evidence = cfg.evidence
    if args.command != "prove":
        return cfg
    select, ignore = kinds(args.select), kinds(args.ignore)
    bad = unknown_kinds([*select, *ignore])
    args.select, args.ignore = select or list(cfg.select), ignore or list(cfg.ignore)
    bad += [f"{cfg.path}: {b}" for b in unknown_kinds(
        [*(() if select else cfg.select), *(() if ignore else cfg.ignore)])]
    if bad:
        raise ValueError("\n  ".join(bad))
    return cfg
