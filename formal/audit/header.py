"""Reading a CuTe header into syntax: aliases, structs, their asm strings, includes.

``grammar/cute.lark`` skims C++: it reads ``using`` aliases, ``struct`` definitions (with
their template parameters, bases, member aliases and the string pieces of any ``asm``
statement inside them) and ``#include`` lines, and passes over everything else.  For

    namespace cute {
    namespace { using SM80_8x4 = Layout<Shape<Shape<_4,_8>,_1>, Stride<Stride<_8,_1>,_0>>; }
    template <> struct MMA_Traits<SM80_8x8x4_F64F64F64F64_TN> { using ALayout = SM80_8x4; };
    }

``read_header`` gives a ``CppHeader`` with one ``Alias`` (``SM80_8x4``, params ``()``) and
one ``Struct`` whose ``type`` is ``MMA_Traits<SM80_8x8x4_F64F64F64F64_TN>`` and whose
``members`` hold ``ALayout -> SM80_8x4``.  Types stay unevaluated here (``Type`` chains of
``TName``); ``formal.audit.atoms`` evaluates them.  Inside a struct's member functions it
keeps two more things, each re-read from its span of the text with the same grammar: every
``Layout x = Layout<...>{};`` with the ``if constexpr (...)`` conditions around it
(``Struct.locals``: how ``UMMA::tmem_frg::make`` picks D's TMEM layout), and every
``static_assert(M == 64 || M == 128, "...")`` as its terms (``Struct.asserts``), and every
constant ``constexpr static int K = 96;`` / ``using REP = _4;`` of its body and member
functions with its value (``Struct.constants``; a condition with ``||`` and ``!`` is read as a
``CppBool``: how ``UMMA::tmem_sf_frg::make`` picks the scale factors' layout).  A token
the grammar cannot place becomes a warning ``Finding`` at its line and the parse resumes
after it: never a crash, never silence.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from lark import Lark, Token, Transformer, Tree
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from ..base.files import FileProblem, read_limited
from .cpp_values import (
    Constant,
    CppBinOp,
    CppBool,
    CppBraced,
    CppChoice,
    CppNeg,
    CppParen,
    Opaque,
    Pack,
    TName,
    Type,
    show_cpp,
)
from .project import (
    Declined,
    Finding,
    Span,
    build_parser,
    collector_paused,
    lean_parser,
    warning,
)

# the expression values live in cpp_values; the reader's callers know them by this module
__all__ = ["Alias", "Constant", "CppBinOp", "CppBool", "CppBraced", "CppChoice", "CppHeader",
           "CppNeg", "CppParen", "LocalLayout", "Opaque", "Pack", "Struct", "TName", "Type",
           "read_header", "show_cpp"]

# bytes: CuTe's largest header (mma_sm90_gmma_sparse_ext.hpp) is 2.9 MB; a 15 MB header of
# declarations took 2.4 GB and minutes to parse whole
MAX_HEADER = 4 * 1024 * 1024

# ---- syntax -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Alias:
    name: str
    type: Type | Opaque
    line: int
    params: tuple[str, ...] = ()  # template parameters, in order
    templated: bool = False
    at: int = -1  # the offset of its ``using`` in the header's text (-1: not known)


@dataclass(frozen=True)
class LocalLayout:
    """``Layout NAME = TYPE{};`` inside a member function's body, under the ``if constexpr``
    conditions that enclose it (outermost first; each a tuple of the ``&&``-joined terms, or
    None for a plain ``else`` the reader does not negate)."""

    name: str
    type: Type | Opaque
    conditions: tuple[tuple[Any, ...] | None, ...]
    line: int


@dataclass(frozen=True)
class Struct:
    type: Type | None
    line: int
    params: tuple[str, ...] = ()
    templated: bool = False
    bases: tuple[Type, ...] = ()
    members: tuple[Alias, ...] = ()
    asm: tuple[tuple[str, ...], ...] = ()  # each asm statement's string literals, as written
    calls: tuple[str, ...] = ()  # X in ``X::fma(...)`` inside the body (composed atoms)
    at: int = -1  # the offset of its ``struct`` keyword
    asm_at: tuple[tuple[int, ...], ...] = ()  # the offset of each string literal of ``asm``
    calls_at: tuple[int, ...] = ()  # the offset of each call's X
    locals: tuple[LocalLayout, ...] = ()  # ``Layout x = ...{};`` in its member functions
    # each ``static_assert(a || b || ..., "...")`` of its body as its terms (a, b, ...)
    asserts: tuple[tuple[Any, ...], ...] = ()
    constants: tuple[Constant, ...] = ()  # ``NAME = value;`` of its body and functions

    @property
    def name(self) -> str:
        return self.type.last.name if self.type is not None else ""

    def member(self, name: str) -> Alias | None:
        for m in self.members:
            if m.name == name:
                return m
        return None


@dataclass(frozen=True)
class CppHeader:
    """One C++ header file as the CuTe reader saw it (not a fragment table's header row)."""

    path: str
    aliases: tuple[Alias, ...] = ()
    structs: tuple[Struct, ...] = ()
    includes: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = field(default=())
    includes_at: tuple[int, ...] = ()  # the offset of each ``#include``


# ---- the parser ---------------------------------------------------------------------------


@cache
def _parser() -> Lark:
    # no positions of rules: each declaration's place is its first token's (``using``,
    # ``template``, ``struct``), and propagating them cost a third of the parse
    return build_parser("cute", "start", positions=False)


@cache
def _lean() -> Any:
    """The header parser's lean loop with ``_Syntax`` applied as it reduces (``lean_parser``:
    what ``_Syntax().transform`` of Lark's tree gives), or None where it cannot run."""
    return lean_parser(_parser(), "start", _Syntax())


@cache
def _piece_parser() -> Lark:
    return build_parser("cute", ["cpp_cond", "cpp_type", "cpp_assert", "cpp_bool", "cpp_value"])


@dataclass(frozen=True)
class _Asm:
    strings: tuple[str, ...]
    at: tuple[int, ...] = ()


@dataclass(frozen=True)
class _Call:
    target: str
    at: int = -1


@dataclass(frozen=True)
class _Include:
    path: str
    at: int = -1


@dataclass(frozen=True)
class _Brace:
    """The head of a ``{ }`` group's items: where its ``{`` is."""

    at: int


@dataclass(frozen=True)
class _Local:
    """A local layout as spans of the header's text, resolved by ``read_header``."""

    name: str
    type_span: tuple[int, int]
    conditions: tuple[tuple[int, int] | None, ...]
    line: int


@dataclass(frozen=True)
class _Assert:
    """A ``static_assert``'s condition as a span of the header's text."""

    span: tuple[int, int]


@dataclass(frozen=True)
class _Const:
    """A statement's tokens (text, start, end, is a NAME) and the offset of its ``;``,
    resolved by ``read_header``: the first NAME the text follows with ``=`` names the
    constant, and what is after the ``=`` up to the ``;`` is its value."""

    toks: tuple[tuple[str, int, int, bool], ...]
    end: int
    line: int


def _statement(run: list[Token], end: int) -> _Const | None:
    if len(run) < 2:
        return None
    return _Const(tuple((str(t), _pos(t), int(t.end_pos or 0), t.type == "NAME") for t in run),
                  end, int(run[0].line or 0))


def _pos(x: Any) -> int:
    return int(getattr(x, "start_pos", -1) if getattr(x, "start_pos", None) is not None
               else -1)


@dataclass(frozen=True)
class _Template:
    params: tuple[str, ...]


def _line(x: Any) -> int:
    """The line of a token (the parser of headers keeps no positions of its rules)."""
    return int(getattr(x, "line", 0) or 0)


def _flat(items: list[Any]) -> list[Any]:
    out: list[Any] = []
    for x in items:
        if isinstance(x, list):
            out.extend(_flat(x))
        elif isinstance(x, (_Asm, _Call, _Local, _Assert, _Const)):
            out.append(x)
    return out


def _group_at(x: Any) -> int:
    return x[0].at if isinstance(x, list) and x and isinstance(x[0], _Brace) else -1


def _condition(c: list[Any], i: int) -> tuple[int, int] | None | bool:
    """The span of the ``( ... )`` of ``if constexpr ( ... ) {`` before the group ``c[i]``;
    None after a plain ``else``; False for any other group."""
    k = i - 1
    while k >= 0 and isinstance(c[k], Token) and str(c[k]) != "constexpr" \
            and str(c[k]) not in ("{", "}", ";"):
        k -= 1
    if k >= 1 and isinstance(c[k], Token) and str(c[k]) == "constexpr" \
            and str(c[k - 1]) == "if" and _group_at(c[i]) >= 0:
        return (int(c[k].end_pos or 0), _group_at(c[i]))
    if i >= 1 and isinstance(c[i - 1], Token) and str(c[i - 1]) == "else":
        return None
    return False


def _local(c: list[Any], i: int) -> _Local | None:
    """``Layout NAME = TYPE {} ;`` starting at ``c[i]`` (the ``=`` is not kept: the type is
    re-read from its span, and must parse as one)."""
    if i + 2 >= len(c) or not all(isinstance(c[j], Token) and c[j].type == "NAME"
                                  for j in (i + 1, i + 2)):
        return None
    if str(c[i]) == "auto" and str(c[i + 2]) != "Layout":  # auto x = Layout<...>{};
        return None
    j = i + 3
    while j < len(c) and isinstance(c[j], Token) and str(c[j]) not in (";", "{", "}"):
        j += 1
    if j + 1 >= len(c) or not isinstance(c[j], list) or len(c[j]) != 1 \
            or str(c[j + 1]) != ";":
        return None
    return _Local(str(c[i + 1]), (int(c[i + 2].start_pos), _group_at(c[j])), (),
                  int(c[i].line))


# the tokens of a ``{ }`` group the soup reader sees: the named terminals and the group's own
# punctuation (``grammar/cute.lark``'s braces keeps all; these are what _tok would keep)
_ENDS = frozenset((";", "{", "}"))  # a statement's end, a group's ends
_LOCAL = frozenset(("Layout", "auto"))  # what a local layout begins with
_KEPT = frozenset(("NAME", "INT", "STRING", "CHAR", "SCOPE", "ADDOP", "MULOP", "SHIFT", "CMP",
                   "OPASSIGN", "LBRACE", "RBRACE", "SEMICOLON"))


class _Syntax(Transformer):  # type: ignore[type-arg]
    # plain methods, no ``v_args``: Lark calls each with its children alone (a rule's place is
    # its first token's, ``_line``), and builds no wrapper per call
    # -- expressions and types
    def int(self, c: list[Token]) -> int | Opaque:
        text = str(c[0]).rstrip("uUlL")
        try:
            if text[:2] in ("0x", "0X"):
                return int(text, 16)
            return int(text, 8) if text.startswith("0") and text != "0" else int(text)
        except ValueError:
            return Opaque(str(c[0]))

    def atom(self, c: list[Any]) -> Any:
        return next(x for x in c if not isinstance(x, Token))

    def neg(self, c: list[Any]) -> Any:
        return CppNeg(c[1]) if str(c[0]) == "-" else c[1]

    def pack(self, c: list[Any]) -> Pack:
        return Pack(c[0])

    def _binary(self, c: list[Any]) -> Any:
        out = c[0]
        for i in range(1, len(c), 2):
            out = CppBinOp(str(c[i]), out, c[i + 1])
        return out

    def sum(self, c: list[Any]) -> Any:
        return self._binary(c)

    def product(self, c: list[Any]) -> Any:
        return self._binary(c)

    def compare(self, c: list[Any]) -> Any:
        return self._binary(c)

    def shift(self, c: list[Any]) -> Any:
        return self._binary(c)

    def bor(self, c: list[Any]) -> Any:
        parts = tuple(x for x in c if not isinstance(x, Token))
        return parts[0] if len(parts) == 1 else CppBool("||", parts)

    def band(self, c: list[Any]) -> Any:
        parts = tuple(x for x in c if not isinstance(x, Token))
        return parts[0] if len(parts) == 1 else CppBool("&&", parts)

    def bnot(self, c: list[Any]) -> CppBool:
        return CppBool("!", (c[-1],))

    def bcmp(self, c: list[Any]) -> CppBinOp:
        b = int(c[2]) if isinstance(c[2], Token) else c[2]
        return CppBinOp(str(c[1]), c[0], b)

    def bflag(self, c: list[Any]) -> Any:
        return c[0]

    def paren(self, c: list[Any]) -> CppParen:
        return CppParen(c[0])

    def greater(self, c: list[Any]) -> CppBinOp:
        return CppBinOp(">", c[0], c[1])

    def choice(self, c: list[Any]) -> CppChoice:
        return CppChoice(c[0], c[1], c[2])

    def call(self, c: list[Any]) -> Opaque:
        return Opaque(f"{c[0]}(...)")  # a function's value: not evaluated

    def braced(self, c: list[Any]) -> CppBraced:
        return CppBraced(c[0])

    def targs(self, c: list[Any]) -> tuple[Any, ...]:
        return tuple(x for x in c if not isinstance(x, Token))

    def tname(self, c: list[Any]) -> TName:
        args = next((x for x in c if isinstance(x, tuple)), None)
        return TName(str(c[0]), args)

    def type(self, c: list[Any]) -> Type:
        return Type(tuple(x for x in c if isinstance(x, TName)))

    def opaque(self, c: list[Any]) -> Opaque:
        return Opaque("decltype(...)")

    def parens(self, c: list[Any]) -> list[Any]:
        return _flat(c)

    def qname(self, c: list[Token]) -> str:
        return "::".join(str(t) for t in c if isinstance(t, Token) and t.type == "NAME")

    # -- soup: keep only asm statements and X::fma calls
    def asm(self, c: list[Any]) -> _Asm:
        lits = [t for t in c if isinstance(t, Token) and t.type == "STRING"]
        return _Asm(tuple(str(t) for t in lits), tuple(_pos(t) for t in lits))

    def braces(self, c: list[Any]) -> list[Any]:
        # the grammar keeps every token of a group; what the soup reads are its named tokens
        # and the group's own { ; } (the rest, '=' '(' 'struct' ..., is found from the text)
        c = [x for x in c if not isinstance(x, Token) or x.type in _KEPT]
        out: list[Any] = [_Brace(_pos(c[0]) if c and isinstance(c[0], Token) else -1)]
        run: list[Token] | None = []  # a statement's tokens (None: it holds a { } group)
        for i, x in enumerate(c):
            if isinstance(x, Token):
                if x in _ENDS:  # ; { }
                    got = _statement(run, _pos(x)) if run is not None and x == ";" else None
                    if got is not None:
                        out.append(got)
                    run = []
                elif run is not None:
                    run.append(x)
                if x in _LOCAL:
                    local = _local(c, i)
                    if local is not None:
                        out.append(local)
                continue
            run = None
            if isinstance(x, list):  # a nested group: its locals under its ``if constexpr``
                cond = _condition(c, i)
                for y in _flat([x]):
                    if isinstance(y, _Local) and not isinstance(cond, bool):
                        y = replace(y, conditions=(cond, *y.conditions))
                    out.append(y)
            elif isinstance(x, _Asm):
                out.append(x)
        toks = [t for t in c if isinstance(t, Token)]
        for j in [j for j, t in enumerate(toks) if t.type == "SCOPE"]:
            # NAME :: fma (a SCOPE first or last has no such neighbour)
            if 0 < j < len(toks) - 1 and toks[j - 1].type == "NAME" and toks[j + 1] == "fma":
                a = toks[j - 1]
                out.append(_Call(str(a), _pos(a)))
        return out

    def other(self, c: list[Any]) -> list[Any]:
        end = c[-1] if c and isinstance(c[-1], Token) and c[-1].type == "SEMICOLON" else None
        if end is not None:
            c = c[:-1]
        if c and isinstance(c[0], Token) and str(c[0]) == "constexpr" and end is not None \
                and all(isinstance(t, Token) for t in c):  # constexpr static int K = 96;
            got = _statement(list(c), _pos(end))
            return [got] if got is not None else []
        if c and isinstance(c[0], Token) and str(c[0]) == "static_assert":
            msg = next((t for t in c if isinstance(t, Token) and t.type == "STRING"), None)
            if msg is not None:
                return [_Assert((int(c[0].end_pos or 0), int(msg.start_pos or 0))),
                        *_flat(c)]
        return _flat(c)

    # -- declarations
    def tparam(self, c: list[Any]) -> str:
        names: list[str] = []
        for t in c:
            if isinstance(t, Token) and str(t) == "=":
                break
            if isinstance(t, Token) and t.type == "NAME":
                names.append(str(t))
        return names[-1] if names else ""

    def tparams(self, c: list[Any]) -> _Template:
        return _Template(tuple(x for x in c if not isinstance(x, Token)))

    def alias(self, c: list[Any]) -> Alias:
        name = next(x for x in c if isinstance(x, Token) and x.type == "NAME")
        typ = next(x for x in c if isinstance(x, (Type, Opaque)))
        return Alias(str(name), typ, _line(c[0]), at=_pos(c[0]))  # c[0]: its ``using``

    def base_spec(self, c: list[Any]) -> Type | None:
        return next((x for x in c if isinstance(x, Type)), None)

    def base(self, c: list[Any]) -> tuple[Type, ...]:
        return tuple(x for x in c if isinstance(x, Type))

    def body(self, c: list[Any]) -> list[Any]:
        return c

    def struct_decl(self, c: list[Any]) -> Struct:
        typ = next((x for x in c if isinstance(x, Type)), None)
        bases: tuple[Type, ...] = next((x for x in c if isinstance(x, tuple)), ())
        body = next((x for x in c if isinstance(x, list)), [])
        members = tuple(x for x in body if isinstance(x, Alias))
        soup = _flat([x for x in body if isinstance(x, list)])
        asm = tuple(x.strings for x in soup if isinstance(x, _Asm))
        asm_at = tuple(x.at for x in soup if isinstance(x, _Asm))
        first: dict[str, int] = {}
        for x in soup:
            if isinstance(x, _Call):
                first.setdefault(x.target, x.at)
        raw = tuple(x for x in soup if isinstance(x, _Local))
        checks = tuple(x for x in body if isinstance(x, list) for x in x
                       if isinstance(x, _Assert))
        consts = tuple(x for x in soup if isinstance(x, _Const))
        kw = c[0]  # struct, class or union
        return Struct(typ, _line(kw), bases=bases, members=members, asm=asm,
                      calls=tuple(first), at=_pos(kw), asm_at=asm_at,
                      calls_at=tuple(first.values()), locals=raw,  # type: ignore[arg-type]
                      asserts=checks, constants=consts)  # type: ignore[arg-type]

    def template_decl(self, c: list[Any]) -> Any:
        params = next((x.params for x in c if isinstance(x, _Template)), ())
        decl = next((x for x in reversed(c) if not isinstance(x, Token)), None)
        line = _line(c[0])  # its ``template``
        if isinstance(decl, Struct):
            return replace(decl, line=line, params=params, templated=True)
        if isinstance(decl, Alias):
            return Alias(decl.name, decl.type, line, params, True, decl.at)
        return decl

    def include(self, c: list[Token]) -> _Include:
        text = str(c[0])
        start = max(text.find("<"), text.find('"'))
        return _Include(text[start + 1:-1], _pos(c[0]))


def _walk(items: Any, aliases: list[Alias], structs: list[Struct],
          includes: list[_Include]) -> None:
    for x in items if isinstance(items, list) else [items]:
        if isinstance(x, Alias):
            aliases.append(x)
        elif isinstance(x, Struct):
            structs.append(x)
        elif isinstance(x, _Include):
            includes.append(x)
        elif isinstance(x, Tree):  # namespace, using_namespace, ...
            _walk(list(x.children), aliases, structs, includes)
        elif isinstance(x, list):
            _walk(x, aliases, structs, includes)


def _piece(text: str, span: tuple[int, int], start: str) -> Any:
    """One span of the header re-read as a condition or a type (None: not one)."""
    if span[0] < 0 or span[1] < span[0]:
        return None
    try:
        tree = _piece_parser().parse(text[span[0]:span[1]], start=start)
        got = _Syntax().transform(tree)
    except (LarkError, RecursionError):
        return None
    kids = [x for x in got.children if not isinstance(x, Token)]
    return tuple(kids) if start not in ("cpp_type", "cpp_value") else \
        (kids[0] if kids else None)


def _resolve(text: str, raw: Any) -> tuple[LocalLayout, ...]:
    out = []
    for r in raw:
        typ = _piece(text, r.type_span, "cpp_type")
        if not isinstance(typ, Type):
            continue
        conds = tuple(None if sp is None else (_piece(text, sp, "cpp_cond")
                                               or _piece(text, sp, "cpp_bool"))
                      for sp in r.conditions)
        out.append(LocalLayout(r.name, typ, conds, r.line))
    return tuple(out)


def _constants(text: str, raw: Any) -> tuple[Constant, ...]:
    out = []
    for r in raw:
        for a, b in zip(r.toks, r.toks[1:]):
            if a[3] and text[a[2]:b[1]].strip() == "=" and text[r.end:r.end + 1] == ";":
                value = _piece(text, (b[1], r.end), "cpp_value")
                if value is not None:
                    out.append(Constant(a[0], value, r.line))
                break
    return tuple(out)


def _asserts(text: str, raw: Any) -> tuple[tuple[Any, ...], ...]:
    got = (_piece(text, r.span, "cpp_assert") for r in raw)
    return tuple(g for g in got if g)


def read_header(path: str | Path, text: str | None = None) -> CppHeader:
    """Parse one header; unreadable constructs become warnings with file:line."""
    name = str(path)
    if text is None:
        try:
            # the type before the open (a FIFO never blocks), and at most MAX_HEADER bytes
            text = read_limited(path, MAX_HEADER).decode("utf-8", errors="replace")
        except (OSError, FileProblem) as e:
            return CppHeader(name, findings=(warning("header", Span(name, 0, 0),
                                                  f"cannot read: "
                                                  f"{getattr(e, 'strerror', None) or e}"),))
    with collector_paused():  # a million objects, no cycle among them
        return _read(name, text)


def _read(name: str, text: str) -> CppHeader:
    findings: list[Finding] = []

    def on_error(e: UnexpectedInput) -> bool:
        line, col = int(getattr(e, "line", 0) or 0), int(getattr(e, "column", 0) or 0)
        if isinstance(e, UnexpectedCharacters):
            what = f"character {text[e.pos_in_stream]!r}" if e.pos_in_stream is not None \
                else "a character"
        elif isinstance(e, UnexpectedToken):
            what = "end of file" if e.token.type == "$END" else f"'{e.token}'"
        else:  # pragma: no cover - lark raises only the two above while parsing
            what = "input"
        findings.append(warning("cute-syntax", Span(name, line, col),
                                f"skipped {what}: not a construct the CuTe reader knows"))
        if isinstance(e, UnexpectedToken) and e.token.type == "$END":
            ip = e.interactive_parser
            for _ in range(256):
                acc = ip.accepts()
                if "$END" in acc or "RBRACE" not in acc:
                    break
                ip.feed_token(Token("RBRACE", "}"))
        return True

    lean = _lean()
    if lean is not None:
        try:
            return _header(name, text, lean(text), findings)
        except Declined:  # an error to recover from, or a tree too deep: Lark's own parse
            pass
    try:
        tree = _parser().parse(text, on_error=on_error)
    except LarkError as e:
        line = int(getattr(e, "line", 0) or 0)
        findings.append(warning("cute-syntax", Span(name, line, 0),
                                "the header's braces do not balance; read nothing from it"))
        return CppHeader(name, findings=tuple(findings))
    try:
        items = _Syntax().transform(tree)
    except RecursionError:  # 200 nested Shape<...>: no CuTe atom nests more than a few
        findings.append(warning("cute-syntax", Span(name, 0, 0),
                                "nested too deeply to read; read nothing from it"))
        return CppHeader(name, findings=tuple(findings))
    return _header(name, text, items, findings)


def _header(name: str, text: str, items: Any, findings: list[Finding]) -> CppHeader:
    """The header of the syntax ``items`` (``start``'s tree, ``_Syntax`` applied)."""
    aliases: list[Alias] = []
    structs: list[Struct] = []
    includes: list[_Include] = []
    _walk(list(items.children), aliases, structs, includes)
    structs = [replace(st, locals=_resolve(text, st.locals),
                       asserts=_asserts(text, st.asserts),
                       constants=_constants(text, st.constants))
               if st.locals or st.asserts or st.constants else st for st in structs]
    return CppHeader(name, tuple(aliases), tuple(structs), tuple(i.path for i in includes),
                     tuple(findings), tuple(i.at for i in includes))
