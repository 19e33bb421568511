"""``[tool.ptxlayout]`` in ``pyproject.toml``: a project's settings, found as ruff finds its own.

From the working folder up to the root, the first ``pyproject.toml`` with a ``[tool.ptxlayout]``
table is the configuration (one without it is passed over).  Worked on one file::

    [tool.ptxlayout]
    select = ["injective", "surjective"]      # as --select
    ignore = ["punctuation"]                  # as --ignore
    timeout = 10                              # as --timeout (prove, diff)
    evidence = "proofs/evidence"              # as --evidence, relative to this file
    diff-ignore = ["added"]                   # diff's --ignore (its kinds: the changes);
                                              #   diff-select, evidence-, audit- alike
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

from ..base.options import SELECT_KINDS
from .ledger import accept_entries

TABLE = "tool.ptxlayout"
# key -> (the types it takes, what it is)
KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "select": ((list,), "a list of finding kinds (prefixes), as --select"),
    "ignore": ((list,), "a list of finding kinds (prefixes), as --ignore"),
    "timeout": ((int, float), "Z3's limit per query in seconds, as --timeout"),
    "evidence": ((str,), "the GPU evidence folder (relative to pyproject.toml), or 'none'"),
    "accept": ((list,), "accepted findings ([[tool.ptxlayout.accept]] tables), as --accept"),
    **{f"{c}-{o}": ((list,), f"a list of {c}'s kinds (prefixes), as its --{o}")
       for c in SELECT_KINDS for o in ("select", "ignore")},
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
    # (key, prefixes) of diff-select, diff-ignore, evidence-..., audit-...
    commands: tuple[tuple[str, tuple[str, ...]], ...] = field(default=())

    def kinds_of(self, command: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """``command``'s (select, ignore): prove's are ``select`` and ``ignore``, the
        others' ``<command>-select`` and ``<command>-ignore``."""
        if command == "prove":
            return self.select, self.ignore
        given = dict(self.commands)
        return given.get(f"{command}-select", ()), given.get(f"{command}-ignore", ())


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
    commands = []
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
            values[key] = _prefixes(value, where, key, what)
        elif key.endswith(("-select", "-ignore")):
            commands.append((key, _prefixes(value, where, key, what)))
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
    return Config(path, **values, commands=tuple(commands))


def _prefixes(value: Any, where: str, key: str, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{where}: '{key}' must be {what}, not {value!r}")
    return tuple(value)


def configure(args: Any, start: Path | None = None) -> Config:
    """Settle a command's options (an argparse namespace, changed in place) with the
    configuration found from ``start``: an option given on the command line wins; the kinds of
    ``--select`` / ``--ignore`` (and of the file) are checked against the command's kinds
    (prove's: ``writers.kinds``; diff's, evidence's and audit's: ``base.options.SELECT_KINDS``).
    A ``ValueError`` (``ConfigError`` for the file) of what cannot be used, one problem a
    line."""
    from ..base.options import kinds, unknown_prefixes
    from .kinds import KINDS
    args.config = cfg = load_config(start)
    if hasattr(args, "timeout"):  # prove, diff
        args.timeout = args.timeout or cfg.timeout or 5.0
    if getattr(args, "evidence", None) == "auto" and cfg.evidence:
        args.evidence = cfg.evidence
    if not hasattr(args, "select"):
        return cfg
    known = KINDS if args.command == "prove" else SELECT_KINDS[args.command]
    hint = ("the kinds are listed in docs/obligations.md" if args.command == "prove"
            else "the kinds: " + ", ".join(known))
    select, ignore = kinds(args.select), kinds(args.ignore)
    bad = unknown_prefixes([*select, *ignore], known, hint)
    file_select, file_ignore = cfg.kinds_of(args.command)
    args.select, args.ignore = select or list(file_select), ignore or list(file_ignore)
    bad += [f"{cfg.path}: {b}" for b in unknown_prefixes(
        [*(() if select else file_select), *(() if ignore else file_ignore)], known, hint)]
    if bad:
        raise ValueError("\n  ".join(bad))
    return cfg
