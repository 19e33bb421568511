"""The files a user names: read without blocking and without bound, written all or nothing.

A path on the command line can be anything: a folder, a FIFO whose ``open()`` waits forever
for a writer, ``/dev/zero`` (size 0, endless), a JSON file nested 100 000 brackets deep.
Every file ptxlayout reads on a user's word (a document, an ``--accept`` list, the ledger,
an evidence file, a layouts export, a CuTe header) goes through ``read_limited``:

    os.stat(path)            the type first, before any open: a FIFO is refused, not opened
    S_ISREG? size <= limit?  else ``FileProblem("it is a FIFO, not a plain file")``
    open(O_NONBLOCK)         even a FIFO swapped in between cannot block the open
    read(limit + 1)          a file that grew past the limit is refused, never read whole

and JSON through ``load_json``, which refuses a value nested deeper than ``MAX_DEPTH`` (the
parser's own recursion would end in an internal error, and every later walk over the value
too).  A ``FileProblem`` is a ``ValueError`` whose text is the reason, one line, e.g.::

    >>> read_limited("/tmp")                                     # doctest: +SKIP
    FileProblem: it is a folder, not a plain file

Writes go through ``write_atomic``: the bytes go to a fresh temporary file in the target's
own folder, which ``os.replace`` moves over the target, so a reader sees the old file or the
new one, and a failed write (a full disk, a kill) leaves the old one as it was.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

MAX_JSON = 64 * 1024 * 1024  # bytes: an evidence file is well under 1 MB, a ledger 100 kB
MAX_DEPTH = 64  # the deepest JSON nesting any of ptxlayout's files has is under 10


class FileProblem(ValueError):
    """Why a named file cannot be used, in one line (no path: the caller names it)."""


def what_it_is(mode: int) -> str:
    """``a folder``, ``a FIFO``, ... for a file mode that is not a plain file's."""
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a plain file"


def read_limited(path: str | Path, limit: int = MAX_JSON) -> bytes:
    """The bytes of the plain file ``path``, at most ``limit`` of them.  ``OSError`` when it
    cannot be opened (missing, no permission), ``FileProblem`` when it is not a plain file
    or is bigger than ``limit``.  Never blocks: the type is checked before the open."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise FileProblem(f"it is {what_it_is(st.st_mode)}, not a plain file")
    if st.st_size > limit:
        raise FileProblem(f"it is {st.st_size} bytes; the limit is {limit}")
    nonblock = getattr(os, "O_NONBLOCK", 0)
    with open(path, "rb", buffering=0,
              opener=lambda p, flags: os.open(p, flags | nonblock)) as fh:
        st = os.fstat(fh.fileno())  # what was opened, in case the path was swapped
        if not stat.S_ISREG(st.st_mode):
            raise FileProblem(f"it is {what_it_is(st.st_mode)}, not a plain file")
        chunks, size = [], 0
        while size <= limit:
            chunk = fh.read(min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    if size > limit:
        raise FileProblem(f"it grew past the limit of {limit} bytes while read")
    return b"".join(chunks)


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Is ``value`` (parsed JSON) nested deeper than ``limit``?  Walked level by level, without
    recursion: ``[1, [2]]`` has its containers at depths 1 and 2."""
    level = [value] if isinstance(value, (dict, list)) else []
    for _depth in range(limit):
        if not level:
            return False
        below: list[Any] = []
        for v in level:
            below += [x for x in (v.values() if isinstance(v, dict) else v)
                      if isinstance(x, (dict, list))]
        level = below
    return bool(level)


# every byte but the four brackets and the quote, deleted by ``bytes.translate`` (UTF-8 puts
# no ASCII byte inside a longer character, so none is cut out of one)
_OTHER_BYTES = bytes(b for b in range(256) if b not in b'"[]{}')
# braces read as brackets: only the nesting counts, and one ``replace(b"[]")`` a pass then
# removes exactly the innermost pairs (``{[]}`` would lose two levels to two replaces)
_SQUARE = bytes.maketrans(b"{}", b"[]")


def text_too_deep(text: str | bytes, limit: int = MAX_DEPTH) -> bool:
    """Is the JSON text ``text`` nested deeper than ``limit``?  Asked of the text, so that a
    reader whose ``object_hook`` builds values as it parses need not walk them, and faster
    than ``too_deep``'s walk: the escapes that could hide a quote (``\\\\``, ``\\"``) are
    cut out, then every byte but quotes and brackets (braces made brackets), then the
    strings; each pass then removes the innermost empty pairs, ``[[][]]`` -> ``[]`` ->
    ``''``, so a text of depth d is empty after d passes.  ``{"a": "]]", "b": [[1]]}`` keeps
    ``[`` and ``[[]]]`` beside its four strings, which go: ``[[[]]]``, depth 3.  A text that
    is not JSON answers anything (``json.loads`` refuses it)."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if b"\\" in data:  # (most texts hold no escape: two passes over them saved)
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    data = data.translate(_SQUARE, _OTHER_BYTES)
    s = b"".join(data.split(b'"')[::2])  # what lies between the quotes: outside every string
    for _depth in range(limit):
        if not s:
            return False
        shorter = s.replace(b"[]", b"")
        if len(shorter) == len(s):  # unbalanced: not JSON, json.loads says so
            return False
        s = shorter
    return bool(s)


def parse_json(data: bytes | str, limit: int = MAX_DEPTH) -> Any:
    """``json.loads`` that answers ``FileProblem`` (a ``ValueError``) for text that is not
    UTF-8, not JSON, or nested deeper than ``limit``, never ``RecursionError``.  The depth
    is asked of the text once it parsed (``text_too_deep``, what ``too_deep`` says of the
    value: a third of the time of the walk over a 3 MB evidence file's values)."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        value = json.loads(text)
    except UnicodeDecodeError as exc:
        raise FileProblem(f"not UTF-8 text (byte {exc.start})") from None
    except RecursionError:
        raise FileProblem(f"JSON nested deeper than {limit} levels") from None
    except ValueError as exc:
        raise FileProblem(f"not valid JSON ({exc})") from None
    if text_too_deep(data, limit):
        raise FileProblem(f"JSON nested deeper than {limit} levels")
    return value


def load_json(path: str | Path, limit: int = MAX_JSON) -> Any:
    """The JSON value of the plain file ``path`` (``read_limited``, then ``parse_json``)."""
    return parse_json(read_limited(path, limit))


def writable_path(output: str | Path) -> Path:
    """``output`` as a path whose folder exists (made when missing); a ``FileProblem`` saying
    why it cannot be written there: it is a folder, a file stands where a folder should, the
    folder cannot be made, the name is too long."""
    path = Path(output)
    try:
        if path.is_dir():
            raise FileProblem("it is a folder")
        blocker = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
        if blocker is not None:
            raise FileProblem(f"{blocker} is a file, not a folder")
    except OSError as exc:  # a name too long, a loop of links: is_dir() itself fails
        raise FileProblem(exc.strerror or str(exc)) from None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FileProblem(f"cannot create its folder ({exc.strerror or exc})") from None
    return path


def write_atomic(path: str | Path, data: bytes | str) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` all or nothing: a temporary file in the same
    folder, moved over ``path`` with ``os.replace``.  On an ``OSError`` the temporary file is
    removed, ``path`` is as it was, and the error is raised.  The file gets the mode an
    existing ``path`` has, else the one ``open()`` would give (0o666 less the umask).  A
    ``path`` that is there and is not a plain file -- ``/dev/null``, a terminal, a FIFO -- is
    written in place: moving a file over it would put a plain file where the device was
    (``--output /dev/null`` run as root made ``/dev/null`` a plain file for every program)."""
    import tempfile
    p = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        st: os.stat_result | None = os.stat(p)
    except OSError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        with open(p, "wb") as out:
            out.write(raw)
        return
    if st is not None:
        mode = stat.S_IMODE(st.st_mode)
    else:
        mask = os.umask(0)
        os.umask(mask)
        mode = 0o666 & ~mask
    fd, tmp = tempfile.mkstemp(dir=p.parent or ".", prefix=".ptxlayout-", suffix=".tmp")
    try:
        try:
            view = memoryview(raw)
            while view:
                view = view[os.write(fd, view):]
            if hasattr(os, "fchmod"):
                os.fchmod(fd, mode)
        finally:
            os.close(fd)
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
