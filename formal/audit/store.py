"""Parsed CuTe headers kept between runs, keyed by the hash of their text, and checked
against that text before use.

Reading CUTLASS's GMMA headers (10 MB of C++) with ``grammar/cute.lark`` is most of a cold
``ptxlayout audit cute``.  The syntax the reader keeps -- aliases, structs, asm strings,
includes, warnings, each with its offset in the text -- is written as one JSON file in
``<cache folder>/headers`` (``formal.base.cache``: the user's own folder, checked before use;
never pickle), named by a SHA-256 of this tool's version and code, the grammar's text and the
header's text.  A header whose text changed has another key, so a stale entry is never read.

**An entry is checked against the header's own text.**  Every alias must re-print, at its
offset, as the text writes it (whitespace, comments and ``typename`` aside): the entry's
``using SM80_8x4 = Layout<Shape<Shape<_4,_8>,_1>,Stride<Stride<_8,_1>,_0>>`` is compared
with what the header holds at that offset, so an entry whose stride 8 was changed to 16 is
not the header's.  Every struct's type is checked the same way, every asm string literal
and include byte for byte.  An entry that fails is a lie: it is removed with a warning and
the header is parsed afresh -- the cache saves time, never changes a verdict.

**What the reader skipped is left out of the comparison.**  A token the grammar cannot place
is skipped by the reader with a warning at its line and column (``skipped 'const': ...``), so
``struct copy_cv<Src const, Dst>`` is kept as ``copy_cv<Src,Dst>``.  The entry keeps those
warnings; each must name the text at its own place, byte for byte, and the check then reads the
text without those tokens, as the reader did.  An entry cannot hide a token this way without
saying so: a skip it keeps is a warning the audit reports, as the fresh read reports it.
"""

from __future__ import annotations

import hashlib
import os
import re
from bisect import bisect_right
from functools import lru_cache
from pathlib import Path
from typing import Any

from .. import __version__
from ..base import cache as disk
from ..base.files import FileProblem, read_limited
from ..base.grammar_files import grammar_dir
from ..base.hashes import code_key
from ..base.lean_lalr import collector_paused
from . import header as cpp  # the syntax a header is read to
from .project import Span, warning

SUBFOLDER = "headers"
SCHEMA = "ptxlayout-cute-header/1"


def header_key(text: str) -> str:
    """SHA-256 of the entry's schema, this tool's version, its code (``code_key``: the reader
    of ``header.py`` and every other file of the package, Python's version), the grammar and
    the header's text: everything a reading depends on."""
    grammar = (grammar_dir() / "cute.lark").read_text(encoding="utf-8")
    what = "\0".join((SCHEMA, __version__, code_key(), grammar, text))
    return hashlib.sha256(what.encode("utf-8")).hexdigest()


# ---- syntax <-> JSON ------------------------------------------------------------------------


def _enc(e: Any) -> Any:
    if isinstance(e, int):
        return e
    if isinstance(e, cpp.Type):
        return {"t": [[p.name, None if p.args is None else [_enc(a) for a in p.args]]
                      for p in e.parts]}
    if isinstance(e, cpp.Opaque):
        return {"o": e.text}
    if isinstance(e, cpp.CppBinOp):
        return {"b": e.op, "x": _enc(e.a), "y": _enc(e.b)}
    if isinstance(e, cpp.CppNeg):
        return {"neg": _enc(e.a)}
    if isinstance(e, cpp.Pack):
        return {"pack": _enc(e.a)}
    if isinstance(e, cpp.CppParen):
        return {"paren": _enc(e.a)}
    if isinstance(e, cpp.CppBraced):
        return {"braced": _enc(e.a)}
    if isinstance(e, cpp.CppChoice):
        return {"if": _enc(e.cond), "then": _enc(e.a), "else": _enc(e.b)}
    raise TypeError(type(e).__name__)


def _dec(j: Any) -> Any:
    if isinstance(j, int):
        return j
    if "t" in j:
        return cpp.Type(tuple(cpp.TName(n, None if a is None else tuple(_dec(x) for x in a))
                          for n, a in j["t"]))
    if "o" in j:
        return cpp.Opaque(j["o"])
    if "b" in j:
        return cpp.CppBinOp(j["b"], _dec(j["x"]), _dec(j["y"]))
    if "neg" in j:
        return cpp.CppNeg(_dec(j["neg"]))
    if "paren" in j:
        return cpp.CppParen(_dec(j["paren"]))
    if "braced" in j:
        return cpp.CppBraced(_dec(j["braced"]))
    if "if" in j:
        return cpp.CppChoice(_dec(j["if"]), _dec(j["then"]), _dec(j["else"]))
    return cpp.Pack(_dec(j["pack"]))


def _alias_json(a: cpp.Alias) -> list[Any]:
    return [a.name, _enc(a.type), a.line, list(a.params), a.templated, a.at]


def _alias(j: list[Any]) -> cpp.Alias:
    return cpp.Alias(j[0], _dec(j[1]), j[2], tuple(j[3]), j[4], j[5])


def header_json(h: cpp.CppHeader) -> dict[str, Any]:
    return {
        "aliases": [_alias_json(a) for a in h.aliases],
        "structs": [[None if s.type is None else _enc(s.type), s.line, list(s.params),
                     s.templated, [_enc(b) for b in s.bases],
                     [_alias_json(m) for m in s.members], [list(x) for x in s.asm],
                     list(s.calls), s.at, [list(x) for x in s.asm_at], list(s.calls_at)]
                    for s in h.structs],
        "includes": list(h.includes), "includes_at": list(h.includes_at),
        "findings": [[f.kind, f.span.line, f.span.column, f.message] for f in h.findings],
    }


def header_of_json(path: str, j: dict[str, Any]) -> cpp.CppHeader:
    structs = tuple(
        cpp.Struct(None if t is None else _dec(t), line, tuple(params), templated,
               tuple(_dec(b) for b in bases), tuple(_alias(m) for m in members),
               tuple(tuple(x) for x in asm), tuple(calls), at,
               tuple(tuple(x) for x in asm_at), tuple(calls_at))
        for t, line, params, templated, bases, members, asm, calls, at, asm_at, calls_at
        in j["structs"])
    return cpp.CppHeader(path, tuple(_alias(a) for a in j["aliases"]), structs,
                     tuple(j["includes"]),
                     tuple(warning(k, Span(path, ln, col), msg)
                           for k, ln, col, msg in j["findings"]),
                     tuple(j["includes_at"]))


# ---- the check against the text -------------------------------------------------------------


def _canon(text: str, start: int, want: int, skipped: dict[int, int] | None = None,
           skip_at: list[int] | None = None) -> str:
    """At least ``want`` characters of ``text`` from ``start`` (fewer only at its end) with
    whitespace, comments, the word ``typename``, a leading ``::`` (``using dim3 = ::dim3;``:
    the syntax keeps no global scope) and the tokens the reader ``skipped`` (offset ->
    length; ``skip_at``: their offsets in order) left out.  Runs of other characters are
    taken whole, up to the next skipped token."""
    out: list[str] = []
    i, n, got = start, len(text), 0
    skip = skipped or {}
    at = skip_at if skip_at is not None else sorted(skip)
    while True:
        while i < n and got < want + 8:
            if skip and i in skip:
                i += skip[i]
                continue
            m = _JUNK.match(text, i)
            if m is not None:
                i = m.end()
                continue
            m = _RUN.match(text, i)
            end = m.end() if m is not None else i + 1
            if at:
                k = bisect_right(at, i)
                if k < len(at) and at[k] < end:
                    end = at[k]
            end = min(end, i + want + 8 - got)
            out.append(text[i:end])
            got += end - i
            i = end
        canon = _GLOBAL.sub("", "".join(out).replace("typename", ""))
        if len(canon) >= want or i >= n:
            return canon
        want += want + 8  # what was left out made it short: read on


# whitespace, a line comment (to its newline) or a block comment (to its end, or the text's)
_JUNK = re.compile(r"\s+|//[^\n]*|/\*.*?(?:\*/|\Z)", re.S)
_RUN = re.compile(r"[^\s/]+")  # characters kept, up to a space or a '/' (a comment may start)


def _canon_plain(text: str, start: int, want: int, skipped: dict[int, int] | None = None) -> str:
    """``_canon`` one character at a time (tests/test_header_store.py holds the two equal)."""
    out: list[str] = []
    i, n, got = start, len(text), 0
    skip = skipped or {}
    while True:
        while i < n and got < want + 8:
            if skip and i in skip:
                i += skip[i]
                continue
            if text.startswith("//", i):
                j = text.find("\n", i)
                i = n if j < 0 else j
                continue
            if text.startswith("/*", i):
                j = text.find("*/", i + 2)
                i = n if j < 0 else j + 2
                continue
            ch = text[i]
            if not ch.isspace():
                out.append(ch)
                got += 1
            i += 1
        canon = _GLOBAL.sub("", "".join(out).replace("typename", ""))
        if len(canon) >= want or i >= n:
            return canon
        want += want + 8  # what was left out made it short: read on


_GLOBAL = re.compile(r"(?<=[=<,(])::")


# the reader's warning for a token it passed over (formal.audit.header.read_header's on_error)
_SKIP = re.compile(r"skipped (?:'(?P<tok>.+)'|character '(?P<ch>.+)'): "
                   r"not a construct the CuTe reader knows\Z", re.S)


def _skipped(text: str, h: cpp.CppHeader) -> dict[int, int] | str:
    """The tokens the reader skipped, by offset -> length, from the entry's warnings; a
    string (why) when one does not name the text at its line and column."""
    out: dict[int, int] = {}
    starts: list[int] | None = None
    for f in h.findings:
        if f.kind != "cute-syntax":
            continue
        m = _SKIP.match(f.message)
        if m is None:
            continue
        tok = m.group("tok") if m.group("tok") is not None else m.group("ch")
        if starts is None:
            starts = [0] + [k + 1 for k, c in enumerate(text) if c == "\n"]
        line, col = f.span.line, f.span.column
        at = starts[line - 1] + col - 1 if 1 <= line <= len(starts) and col >= 1 else -1
        if at < 0 or not tok or not text.startswith(tok, at) or \
                (line < len(starts) and at + len(tok) > starts[line]):
            return f"the skipped {tok!r} at line {line} column {col} is not the header's text"
        out[at] = len(tok)
    return out


def _printed(e: Any) -> str:
    """How the text writes ``e``, up to the first expression the reader keeps opaque
    (``decltype(...)``: its inside is not kept, so only its keyword is compared)."""
    if isinstance(e, cpp.Opaque):
        if e.text.startswith("decltype"):
            return "decltype"
        return e.text.split("(", 1)[0] if e.text.endswith("(...)") else "sizeof"
    out = cpp.show_cpp(e).replace(" ", "")
    cut = min((i for i in (out.find("decltype("), out.find("sizeof("), out.find("(...)"))
               if i >= 0), default=-1)
    if cut >= 0 and out.startswith("(...)", cut):  # a call's name is kept, up to its "("
        return out[:cut + 1]
    return out if cut < 0 else out[:cut]


def header_lie(text: str, h: cpp.CppHeader) -> str:
    """'' when every item of ``h`` is what ``text`` holds at its offset, else the first that
    is not."""
    skipped = _skipped(text, h)
    if isinstance(skipped, str):
        return skipped
    skip_at = sorted(skipped)

    def at(offset: int, what: str, name: str) -> str:
        if offset < 0 or not _canon(text, offset, len(what), skipped, skip_at).startswith(what):
            return f"{name} is not the header's text at offset {offset}"
        return ""

    def alias(a: cpp.Alias) -> str:
        return at(a.at, f"using{a.name}={_printed(a.type)}", f"alias {a.name}")

    for a in h.aliases:
        why = alias(a)
        if why:
            return why
    for s in h.structs:
        if s.type is not None:
            head = _canon(text, s.at, 8, skipped, skip_at) if s.at >= 0 else ""
            kw = next((k for k in ("struct", "class", "union") if head.startswith(k)), "")
            why = at(s.at, kw + _printed(s.type), f"struct {s.name}") if kw else \
                f"struct {s.name} is not the header's text at offset {s.at}"
            if why:
                return why
        for m in s.members:
            why = alias(m)
            if why:
                return why
        if len(s.asm) != len(s.asm_at):
            return f"struct {s.name}: its asm statements have no offsets"
        for lits, offs in zip(s.asm, s.asm_at):
            if len(lits) != len(offs) or any(text[o:o + len(x)] != x
                                              for x, o in zip(lits, offs)):
                return f"struct {s.name}: an asm string is not the header's text"
        if len(s.calls) != len(s.calls_at) or any(
                text[o:o + len(c)] != c for c, o in zip(s.calls, s.calls_at)):
            return f"struct {s.name}: a call is not the header's text"
    if len(h.includes) != len(h.includes_at) or any(
            inc not in text[o:o + len(inc) + 32] for inc, o in zip(h.includes, h.includes_at)):
        return "an #include is not the header's text"
    return ""


# ---- the cache --------------------------------------------------------------------------------


def cached_header(path: str | Path) -> cpp.CppHeader:
    """``read_header(path)``: kept in this process by the file's path, modification time and
    size (``in_process``), and between runs by its text's hash (``header_key``), used only when
    the entry passes the check against that text."""
    try:
        st = os.stat(path)
    except OSError:
        return cpp.read_header(path)
    return in_process(str(path), st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=64)
def in_process(path: str, mtime_ns: int, size: int) -> cpp.CppHeader:
    """The header at ``path`` as it was at that time and size (``from_disk``), read once a
    process; ``in_process.cache_clear()`` forgets it."""
    return from_disk(path)


def from_disk(path: str | Path) -> cpp.CppHeader:
    """``read_header(path)``, from the cache folder when an entry for its text passes the
    check."""
    name = str(path)
    try:  # bounded, and never blocking on a FIFO: cpp.read_header names what went wrong
        text = read_limited(Path(path), cpp.MAX_HEADER).decode("utf-8", errors="replace")
    except (OSError, FileProblem):
        return cpp.read_header(path)
    key = header_key(text)
    file = f"{key}.json"
    # reading it, writing it or checking it makes some hundred thousand objects and no cycle
    with disk.folder(SUBFOLDER) as fd, collector_paused():
        if fd is None:
            return cpp.read_header(name, text)
        where = os.path.join(disk.root() or "", SUBFOLDER)
        entry = disk.read_json(fd, file, where)
        if isinstance(entry, dict) and entry.get("schema") == SCHEMA \
                and entry.get("key") == key:
            try:
                h = header_of_json(name, entry["header"])
            except (KeyError, TypeError, ValueError, IndexError):
                h = None
            why = header_lie(text, h) if h is not None else "not a header's syntax"
            if not why:
                return h  # type: ignore[return-value]
            disk.warn(os.path.join(where, file), f"the entry does not match {name}: {why}")
            disk.remove(fd, file)
        elif entry is not None:
            disk.warn(os.path.join(where, file), "another schema, version or key")
        h = cpp.read_header(name, text)
        disk.write_json(fd, file, {"schema": SCHEMA, "key": key, "header": header_json(h)})
        return h
