"""The one on-disk cache folder, used only when nobody else could have written to it.

ptxlayout keeps two kinds of plain JSON between runs (never pickle): Lark's LALR tables
(``parse/grammars``) and Z3's verdicts (``prove/cache``).  Both live in ``PTXLAYOUT_CACHE_DIR``
(default ``$XDG_CACHE_HOME/ptxlayout`` or ``~/.cache/ptxlayout``; empty: no cache), and
``--no-cache`` (``disable()``) turns both off.

Before anything is read, the folder is opened once (no symbolic link as its last part) and
checked through that open handle: it must belong to the current user and be writable by
nobody else.  Each file is opened inside that handle (``dir_fd``, never by a path that could
be swapped meanwhile), refused if it is a symbolic link, and again checked: the user's own,
a plain file, not group- or other-writable.  A cache that fails a check is ignored with one
line on stderr, e.g.::

    ptxlayout: warning: cache ignored: /tmp/shared: the folder is writable by group or others

Writes go to a fresh temporary name and are moved into place with ``os.replace``, so a
concurrent run sees the old file or the new one, never half of one.  A small dictionary
kept whole in one file of its own folder (the map hashes, the hardware verdicts, the srepr
texts) is read and written through ``KeptFile`` / ``Kept`` below: schema, code key, a
SHA-256 of the values and a check of each value, read once a run and written back once.
Where the operating system has no POSIX owners (``os.geteuid`` missing, e.g. Windows)
nothing can be checked and the caches are off.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

from .files import MAX_DEPTH, too_deep

MAX_ENTRY = 8 * 1024 * 1024  # bytes: a bigger file is not ours
_STATE = {"enabled": True}
_WARNED: set[str] = set()


def disable() -> None:
    """Turn every on-disk cache off for the rest of the process (``--no-cache``)."""
    _STATE["enabled"] = False


def enable() -> None:
    _STATE["enabled"] = True


def warn(path: str, why: str) -> None:
    """One line on stderr, once per process and path."""
    line = f"ptxlayout: warning: cache ignored: {path}: {why}"
    if line not in _WARNED:
        _WARNED.add(line)
        print(line, file=sys.stderr)


def root() -> str | None:
    """The configured cache folder, or None when caching is off."""
    if not _STATE["enabled"]:
        return None
    where = os.environ.get("PTXLAYOUT_CACHE_DIR")
    if where is None:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                                ".cache")
        where = os.path.join(base, "ptxlayout")
    return where or None


def _unsafe(st: os.stat_result, what: str) -> str | None:
    """Why a file or folder with this status could have been written by someone else."""
    if st.st_uid != os.geteuid():
        return f"the {what} belongs to user id {st.st_uid}, not to you ({os.geteuid()})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"the {what} is writable by group or others (mode {stat.filemode(st.st_mode)})"
    return None


@contextmanager
def folder(sub: str = "") -> Iterator[int | None]:
    """An open handle on the cache folder (or its subfolder ``sub``, made 0o700 when
    missing) that passed the checks, else None (with a warning where a check failed).  The
    folder above is checked before ``sub`` is made in it: ``PTXLAYOUT_CACHE_DIR=/tmp`` is
    refused with nothing created in ``/tmp``."""
    top = root()
    if top is None or not hasattr(os, "geteuid") or not hasattr(os, "O_NOFOLLOW"):
        yield None
        return
    fds: list[int] = []
    try:
        fd = _checked(top, None, "", "folder")
        if fd is not None:
            fds.append(fd)
            if sub:
                fd = _checked(os.path.join(top, sub), fd, sub, "folder")
                if fd is not None:
                    fds.append(fd)
        yield fd
    finally:
        for f in fds:
            os.close(f)


def _checked(path: str, parent: int | None, name: str, what: str) -> int | None:
    """An open handle on the folder ``path`` (``name`` inside the open folder ``parent``,
    or ``path`` itself), made 0o700 when missing, when it is no symbolic link and only the
    current user can write it; else None, with a warning."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    try:
        if parent is None:
            os.makedirs(path, mode=0o700, exist_ok=True)  # private, not as umask says
        else:
            try:
                os.mkdir(name, mode=0o700, dir_fd=parent)
            except FileExistsError:
                pass
    except OSError as exc:
        warn(path, f"cannot make the folder ({exc.strerror or exc})")
        return None
    try:
        fd = os.open(name if parent is not None else path, flags,
                     **({"dir_fd": parent} if parent is not None else {}))
    except OSError as exc:
        warn(path, "it is a symbolic link" if os.path.islink(path) else
             f"cannot open the folder ({exc.strerror or exc})")
        return None
    why = _unsafe(os.fstat(fd), what)
    if why is not None:
        os.close(fd)
        warn(path, why)
        return None
    return fd


def read_json(fd: int, name: str, where: str,
              hook: Callable[[dict[str, Any]], Any] | None = None) -> Any:
    """The JSON value of file ``name`` in the checked folder ``fd``; None when missing or when
    a check fails (with a warning naming ``where``/``name``); ``hook`` as json.loads's
    ``object_hook``."""
    data = read_file_bytes(fd, name, where)
    if data is None:
        return None
    path = os.path.join(where, name)
    try:
        value = json.loads(data.decode("utf-8"), object_hook=hook)
        why = f"JSON nested deeper than {MAX_DEPTH} levels" if too_deep(value) else ""
    except RecursionError:
        why = f"JSON nested deeper than {MAX_DEPTH} levels"
    except (UnicodeDecodeError, ValueError) as exc:
        why = f"not valid JSON ({exc.__class__.__name__})"
    if why:
        # discarded, so that it does not trouble every later run: the next write replaces it
        warn(path, why + "; removed")
        remove(fd, name)
        return None
    return value


def read_file_bytes(fd: int, name: str, where: str) -> bytes | None:
    """The bytes of file ``name`` in the checked folder ``fd``, with every check of
    ``read_json`` but the parse (a reader that checks its own format, ``kept_evidence``);
    None when missing or when a check fails (with a warning)."""
    path = os.path.join(where, name)
    try:
        # O_NONBLOCK: a FIFO planted as an entry is opened at once, then refused as not a
        # plain file, where a plain open would wait for a writer forever
        f = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0),
                    dir_fd=fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        warn(path, "it is a symbolic link" if exc.errno == errno.ELOOP else
             f"cannot open it ({exc.strerror or exc})")
        return None
    try:
        st = os.fstat(f)
        why = _unsafe(st, "file")
        if why is None and not stat.S_ISREG(st.st_mode):
            why = "it is not a plain file"
        if why is None and st.st_size > MAX_ENTRY:
            why = f"it is {st.st_size} bytes, over the limit of {MAX_ENTRY}"
        if why is not None:
            warn(path, why)
            return None
        with os.fdopen(f, "rb", closefd=False) as fh:
            # as many bytes as fstat said and one more (a read sized MAX_ENTRY allocates 8 MiB
            # for an entry of a few hundred bytes); one that grew meanwhile is read on, to
            # the same limit as ever
            want = st.st_size + 1
            data = fh.read(want)
            if len(data) == want:
                data += fh.read(MAX_ENTRY + 1 - len(data))
    finally:
        os.close(f)
    return data


def kept_entry(fd: int, sub: str, key: str, decode: Callable[[Any, str], Any],
               raw: bool = False) -> tuple[str, Any]:
    """The file name of ``key``'s entry in the cache folder ``sub`` (open as ``fd``) and what
    ``decode(entry, key)`` makes of it: None where none is kept, or where the one kept is not
    of this version for this document (then warned about; the caller writes it again).
    ``raw``: the entry is given to ``decode`` as its bytes (``read_file_bytes``), not parsed."""
    name = f"{key[:40]}.json"
    where = os.path.join(root() or "", sub)
    entry = read_file_bytes(fd, name, where) if raw else read_json(fd, name, where)
    got = decode(entry, key) if entry is not None else None
    if entry is not None and got is None:
        warn(os.path.join(where, name), "not an entry of this version for this document "
             "(ignored, written again)")
    return name, got


def write_json(fd: int, name: str, value: Any) -> bool:
    """Write ``value`` as ``name`` in the checked folder ``fd``, atomically (a temporary file
    moved into place).  False when it could not be written (a cache is never an error)."""
    try:
        data = json.dumps(value, separators=(",", ":"), sort_keys=True).encode("utf-8")
    except (TypeError, ValueError):
        return False
    return write_bytes(fd, name, data)


def write_bytes(fd: int, name: str, data: bytes) -> bool:
    """Write ``data`` as ``name`` in the checked folder ``fd``, as ``write_json`` writes (a
    JSON text its writer made, ``kept_evidence``)."""
    tmp = f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    try:
        f = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600,
                    dir_fd=fd)
        try:
            with os.fdopen(f, "wb", closefd=False) as fh:
                fh.write(data)
        finally:
            os.close(f)
        os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        return True
    except (OSError, TypeError, ValueError):
        try:
            os.unlink(tmp, dir_fd=fd)
        except OSError:
            pass
        return False


def remove(fd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=fd)
    except OSError:
        pass


# ---- one small kept dictionary a folder ------------------------------------------------------


@dataclass(frozen=True)
class KeptFile:
    """What a kept dictionary is: one file ``name`` in the cache's subfolder ``folder``,
    ``{"schema": schema, "code": code(), field: {key: value}, "digest": SHA-256 of the
    values}``, each value passing ``check``.  A toy, the map hashes: ``KeptFile("maps",
    "hashes.json", "ptxlayout-map-hashes/1", "hashes", code_key, is_hex16)`` reads
    ``maps/hashes.json`` as ``{"schema": ..., "code": "c2d1...", "hashes": {"9f2c...":
    "030f160ec15efd2c"}, "digest": "5e0a..."}``.  A file whose schema, code, digest or values
    do not check is ignored (with a warning where it claims to be of this schema and code,
    silently where it is of other code: its keys can match nothing of ours) and written
    again by the next run that adds to it."""

    folder: str
    name: str
    schema: str
    field: str
    code: Callable[[], str]
    check: Callable[[Any], bool]
    limit: int = 4096

    def digest(self, values: dict[str, Any]) -> str:
        return hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()

    def valid(self, entry: Any) -> dict[str, Any] | None:
        """The values of a file's JSON, where everything checks; else None."""
        if not isinstance(entry, dict) or set(entry) != {"schema", "code", self.field,
                                                         "digest"}:
            return None
        values = entry[self.field]
        if entry["schema"] != self.schema or entry["code"] != self.code() \
                or not isinstance(values, dict) or entry["digest"] != self.digest(values):
            return None
        if not all(self.check(v) for v in values.values()):
            return None
        return values

    def read(self) -> dict[str, Any] | None:
        """The folder's values (none kept, or a file of other code: empty); None where no
        cache folder is in use."""
        with folder(self.folder) as fd:
            if fd is None:
                return None
            where = os.path.join(root() or "", self.folder)
            entry = read_json(fd, self.name, where)
            if isinstance(entry, dict) and entry.get("schema") == self.schema \
                    and entry.get("code") != self.code():
                return {}  # written by other code: its keys can match nothing of ours
            values = self.valid(entry)
            if entry is not None and values is None:
                warn(os.path.join(where, self.name),
                     "not an entry of this version (ignored, written again)")
            return values or {}

    def write(self, values: dict[str, Any]) -> None:
        """Write ``values`` (past ``limit`` keys: the newest half)."""
        if len(values) > self.limit:
            values = dict(list(values.items())[-self.limit // 2:])
        with folder(self.folder) as fd:
            if fd is not None:
                write_json(fd, self.name, {"schema": self.schema, "code": self.code(),
                                           self.field: values,
                                           "digest": self.digest(values)})


class Kept:
    """A kept dictionary in one run: read once (``open``), added to (``put``), written back
    once (``close``) where anything was added.  A subclass names its file as ``SPEC``."""

    SPEC: ClassVar[KeptFile | None] = None

    def __init__(self, spec: KeptFile, values: dict[str, Any] | None = None) -> None:
        self.spec = spec
        self.values: dict[str, Any] = dict(values or {})
        self.added = 0

    @classmethod
    def of(cls, spec: KeptFile) -> Any:
        """The folder's dictionary as a ``cls``; None where no cache folder is in use."""
        values = spec.read()
        return None if values is None else cls(spec, values)

    @classmethod
    def open(cls) -> Any:
        """``of`` the subclass's own ``SPEC``."""
        if cls.SPEC is None:
            raise TypeError(f"{cls.__name__} names no kept file (SPEC)")
        return cls.of(cls.SPEC)

    def get(self, key: str) -> Any:
        return self.values.get(key)

    def put(self, key: str, value: Any) -> None:
        if self.values.get(key) != value:
            self.values[key] = value
            self.added += 1

    def close(self) -> None:
        if self.added:
            self.spec.write(self.values)
            self.added = 0
