"""Block scaling of ``mma.sync`` read into syntax: the catalog's sections and the spec's tables.

A catalog section names one legal form and, per scale operand, its shape, its register and
its selector program (pseudocode, read by ``grammar/pseudocode.lark``)::

    ## Block scaling for mma.m16n8k64 .kind::mxf4 .scale_vec::2X .ue8m0
    * Scale A: scale_A is 16 x 2, one .b32 register of four .ue8m0 bytes.
      byte_id = {0, 2}                                  the legal byte-id-a values
      thread_id = {0, 1}                                the legal thread-id-a values
      holder = threadID_in_group >> 1 == thread_id      which lanes supply scale_A
      used = byte_id <= i < byte_id + 2                 which bytes i of scale-a-data count
      row = groupID + 8 * (threadID_in_group & 0x1)    the row a holder's byte is for
      block = i - byte_id                               and its K block

becomes ``ScaleSection(shape="m16n8k64", kind="mxf4", vec=2, stype="ue8m0", operands=(
ScaleOperand("A", rows=16, cols=2, ..., program=Program(...)), ...))``.  The spec's own
section is prose, figures and three tables; the tables' rows are read here too
(``SpecTables``: the scale matrices' shapes per ``.scale_vec``, the legal kind / type /
scale-type / ``.scale_vec`` combinations and the legal selector values), each with its
line.  Nothing is evaluated here; ``formal.model.block_scale`` gives the programs meaning.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from lark import Lark, Token
from lark.exceptions import LarkError

from ..base.grammar_files import build_parser
from ..base.source import Finding, SourceText, error
from ..base.variants import COUNT_WORDS
from ..text.blocks import strip_markup
from . import syntax as S
from .grammars import ASK_LARK, RuleTransformer, can_read, lean_read
from .kept import parses_remembered, remembered_read
from .pseudocode import parse_program

STARTS = ("scale_title", "scale_decl", "shape_row", "combo_row", "selector_row", "scale_query",
          "tc_heading", "tc_caption", "tc_title", "tc_decl")


@cache
def _parser() -> Lark:
    return build_parser("block_scale", list(STARTS))


@dataclass(frozen=True)
class ScaleOperand:
    """One scale operand as the catalog states it."""

    operand: str  # "A" | "B"
    rows: int  # scale_A: M; scale_B: SFB_M
    cols: int  # scale_A: SFA_N; scale_B: N
    registers: int
    register_type: str
    elements: int  # elements of the stated type in the register(s)
    program: S.Program
    source: SourceText


@dataclass(frozen=True)
class ScaleSection:
    """One legal block-scaled form: ``mma.<shape>.kind::<kind>.block_scale.scale_vec::<vec>X``
    with scale type ``stype``."""

    shape: str
    kind: str
    vec: int
    stype: str
    title: str
    source: SourceText
    operands: tuple[ScaleOperand, ...] = ()


@dataclass(frozen=True)
class ScaleTableRow:
    """One row of a spec table, as read, with its line."""

    table: str  # "shape" | "combo" | "selector"
    values: tuple[Any, ...]
    source: SourceText


@dataclass(frozen=True)
class TcScaleLine:
    """A tcgen05 scale-factor heading or figure caption: ``facts`` holds its matrix ("A" /
    "B"), forms (``block32``, ``scale_vec::1X``), K values, factors per row (a heading's
    "semantically equivalent to scale_vec::3X"), N condition, figure number and the
    selector it draws (``id``, and ``id_of``: whose ID the caption names)."""

    kind: str  # "heading" | "caption"
    facts: dict[str, Any]
    source: SourceText


@dataclass(frozen=True)
class TcScaleOperand:
    """One tcgen05 scale operand as the catalog states it: its matrix, the tensor-memory
    columns and lanes (of one partition) it takes, its factors' byte alignment and its
    placement program (``sf_id``, ``lane``, ``column``, ``byte``)."""

    operand: str  # "A" | "B"
    rows: int
    cols: int
    columns: int
    lanes: int
    stype: str
    aligned: int  # bytes
    program: S.Program
    source: SourceText


@dataclass(frozen=True)
class TcScaleSection:
    """One legal block-scaled ``tcgen05.mma`` form at one (M, N, K) issued by ``cta_group``
    CTAs: ``form`` as written (``scale_vec::2X``, ``block32``) and ``vec``, the factors a row
    of A has."""

    kind: str
    form: str
    vec: int
    stype: str
    m: int
    n: int
    k: int
    title: str
    source: SourceText
    operands: tuple[TcScaleOperand, ...] = ()
    cta_group: int = 1
    sparse: bool = False  # a form of tcgen05.mma.sp (K counts A's elements before compression)


@dataclass(frozen=True)
class ScaleDocument:
    """What one document says about block scaling."""

    name: str
    sections: tuple[ScaleSection, ...] = ()
    rows: tuple[ScaleTableRow, ...] = ()
    findings: tuple[Finding, ...] = field(default=(), compare=False)
    tcgen05: tuple[TcScaleLine, ...] = ()
    tc_sections: tuple[TcScaleSection, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.sections and not self.rows and not self.tcgen05 and not self.tc_sections


class _ToValues(RuleTransformer):
    def scale_title(self, items: list[Any]) -> tuple[Any, ...]:
        toks = {t.type: str(t) for t in items if isinstance(t, Token)}
        return ("title", toks["SCALE_INSTR"].partition(".")[2],
                toks["KIND"].partition("::")[2], _vec(toks["SCALE_VEC"]),
                toks["STYPE"].lstrip("."))

    def scale_decl(self, items: list[Any]) -> tuple[Any, ...]:
        toks = [t for t in items if isinstance(t, Token)]
        ints = [int(t) for t in toks if t.type == "INT"]
        counts = [x for x in items if isinstance(x, int) and not isinstance(x, Token)]
        mat = next(str(t) for t in toks if t.type == "MATNAME")
        name = next(str(t) for t in toks if t.type == "SCALE_NAME")
        reg = next(str(t) for t in toks if t.type == "REG_TYPE").lstrip(".")
        stype = next(str(t) for t in toks if t.type == "STYPE").lstrip(".")
        return ("decl", mat, name, ints[0], ints[1], counts[0], reg, counts[1], stype)

    def count_number(self, items: list[Token]) -> int:
        return int(items[0])

    def count_word(self, items: list[Token]) -> int:
        return COUNT_WORDS[str(items[0]).lower()]

    def dim_number(self, items: list[Token]) -> int | str:
        return int(items[0])

    def dim_name(self, items: list[Token]) -> int | str:
        return str(items[0])

    def shape_row(self, items: list[Any]) -> tuple[Any, ...]:
        items = _no_bars(items)
        return ("shape", _vec(str(items[0])), (items[1], items[2]), (items[3], items[4]))

    def types(self, items: list[Token]) -> tuple[str, ...]:
        return tuple(str(t).lstrip(".") for t in items)

    def scale_vecs(self, items: list[Token]) -> tuple[int, ...]:
        return tuple(_vec(str(t)) for t in items)

    def combo_row(self, items: list[Any]) -> tuple[Any, ...]:
        kind = ""
        rest = _no_bars(items)
        if isinstance(rest[0], Token) and rest[0].type == "KIND":
            kind = str(rest.pop(0)).partition("::")[2]
        types, stype, vecs = rest
        return ("combo", kind, types, str(stype).lstrip("."), vecs)

    def value_list(self, items: list[Token]) -> tuple[int, ...]:
        return tuple(int(t) for t in items)

    def scale_query(self, items: list[Any]) -> tuple[Any, ...]:
        facts: dict[str, Any] = {"other": []}
        for item in items:
            if isinstance(item, Token):  # tcgen05.mma, tcgen05.mma.sp
                facts["family"] = "tcgen05"
                facts["sparse"] = str(item).endswith(".sp")
                continue
            key, value = item
            if key == "other":
                facts["other"].append(value)
            else:
                facts[key] = value
        return ("query", facts)

    def q_shape(self, items: list[Token]) -> tuple[str, Any]:
        return ("shape", str(items[0]).lstrip("."))

    def q_kind(self, items: list[Token]) -> tuple[str, Any]:
        return ("kind", str(items[0]).partition("::")[2])

    def q_vec(self, items: list[Token]) -> tuple[str, Any]:
        return ("vec", _vec(str(items[0])))

    def q_blockn(self, items: list[Token]) -> tuple[str, Any]:
        return ("form", str(items[0]).lstrip("."))

    def q_stype(self, items: list[Token]) -> tuple[str, Any]:
        return ("stype", str(items[0]).lstrip("."))

    def q_operand(self, items: list[Token]) -> tuple[str, Any]:
        return ("operand", str(items[0])[-1])

    def q_block_scale(self, items: list[Token]) -> tuple[str, Any]:
        return ("block_scale", True)

    def q_other(self, items: list[Token]) -> tuple[str, Any]:
        return ("other", str(items[0]).lstrip("."))

    def tc_forms(self, items: list[Token]) -> tuple[str, ...]:
        return tuple(str(t).lstrip(".") for t in items)

    def k_list(self, items: list[Token]) -> tuple[int, ...]:
        return tuple(int(str(t)[2:]) for t in items)

    def tc_equiv(self, items: list[Token]) -> int:
        return _vec(str(items[-1]))

    def _tc(self, items: list[Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"factors": 0, "n": "", "id": None, "id_of": ""}
        for x in items:
            if isinstance(x, Token):
                if x.type == "MATNAME":
                    out["matrix"] = str(x)
                elif x.type == "N_COND":
                    out["n"] = str(x)
                elif x.type == "SF_ID":
                    name, _, bits = str(x).partition("=")
                    out["id_of"], out["id"] = name[2], int(bits, 2)
                elif x.type == "INT":
                    out["figure"] = int(x)
            elif isinstance(x, tuple) and x and isinstance(x[0], str):
                out["forms"] = x
            elif isinstance(x, tuple):
                out["k"] = x
            elif isinstance(x, int):
                out["factors"] = x
        return out

    def tc_heading(self, items: list[Any]) -> tuple[Any, ...]:
        return ("tc_heading", self._tc(items))

    def tc_caption(self, items: list[Any]) -> tuple[Any, ...]:
        return ("tc_caption", self._tc(items))

    def tc_title(self, items: list[Any]) -> tuple[Any, ...]:
        toks = {t.type: str(t) for t in items if isinstance(t, Token)}
        m, n, k = (int(toks[x][2:]) for x in ("M_EQ", "N_EQ", "K_EQ"))
        form = (toks.get("SCALE_VEC") or toks["BLOCKN"]).lstrip(".")
        vec = _vec(form) if "SCALE_VEC" in toks else k // int(form[5:])
        cta = int(toks.get("CTA_GROUP", "::1").rpartition("::")[2])
        return ("tc_title", toks["KIND"].partition("::")[2], form, vec,
                toks["STYPE"].lstrip("."), m, n, k, cta, toks["TC_INSTR"].endswith(".sp"))

    def tc_decl(self, items: list[Any]) -> tuple[Any, ...]:
        toks = [t for t in items if isinstance(t, Token)]
        ints = [int(t) for t in toks if t.type == "INT"]
        mat = next(str(t) for t in toks if t.type == "MATNAME")
        name = next(str(t) for t in toks if t.type == "SCALE_NAME")
        stype = next(str(t) for t in toks if t.type == "STYPE").lstrip(".")
        return ("tc_decl", mat, name, ints[0], ints[1], ints[2], ints[3], stype, ints[4])

    def selector_row(self, items: list[Any]) -> tuple[Any, ...]:
        items = _no_bars(items)
        return ("selector", _vec(str(items[0])), tuple(items[1:]))


def _no_bars(items: list[Any]) -> list[Any]:
    return [x for x in items if not (isinstance(x, Token) and x.type == "PIPE")]


def _vec(text: str) -> int:
    return int(text.rpartition("::")[2].rstrip("X"))


def _clean(text: str) -> str:
    """Markdown's marks dropped: backquotes and emphasis blanked, ``\\_`` read as ``_``."""
    return text.replace("`", " ").replace("\\_", "_").replace("*", " ")


def _read_now(text: str, start: str) -> Any | None:
    clean = _clean(text)
    if not can_read(_parser(), start)(clean):
        return None  # a token the start symbol needs matches nowhere: Lark would refuse it
    got = lean_read(_parser(), start, _ToValues(), clean)
    if got is not ASK_LARK:
        return got
    try:
        tree = _parser().parse(clean, start=start)
    except LarkError:
        return None
    return _ToValues().transform(tree)


def read_line(text: str, start: str) -> Any | None:
    """One line read by one start symbol of ``grammar/block_scale.lark``, or None; read once
    a text (``kept.remembered_read``: the value is shared, never changed)."""
    return remembered_read(text, f"block_scale:{start}", lambda: _read_now(text, start))


def read_query(text: str) -> dict[str, Any] | None:
    """A block-scaled mma named as a user writes it (``mma.sync.aligned.m16n8k64.row.col
    .kind::mxf4.block_scale.scale_vec::2X...``): its shape, kind, ``.scale_vec`` (``vec``),
    scale type, operand (``.scale_A``) and other qualifiers; None unless it is an ``mma`` with
    ``.block_scale`` or a ``.scale_vec``."""
    got = _read_now(text.strip(), "scale_query")  # a fresh value: its lists are the caller's
    if got is None:
        return None
    facts: dict[str, Any] = got[1]
    return facts if facts.get("block_scale") or "vec" in facts or "form" in facts else None


def _unlink(text: str) -> str:
    """A Markdown line's links reduced to their text and its code marks dropped
    (``[Layout ...](#x)[](#x "Permalink")`` reads ``Layout ...``): the text stage's
    ``strip_markup``, on a bare string."""
    return strip_markup(SourceText.at(text, "", 1)).text


def _heading(text: str) -> str | None:
    s = text.strip()
    if not s.startswith("#"):
        return None
    return s.lstrip("#").strip()


def _tc_line(text: str, src: SourceText) -> TcScaleLine | None:
    """A tcgen05 scale-factor heading or figure caption, or None."""
    if not ("cale" in text and "actor" in text and "atrix" in text):
        return None
    plain = _unlink(_heading(text) or text.strip()).replace("\uf0c1", " ")
    for start, kind in (("tc_heading", "heading"), ("tc_caption", "caption")):
        got = read_line(plain, start)
        if got is not None:
            return TcScaleLine(kind, got[1], src)
    return None


def _html_rows(text: str, name: str) -> tuple[list[ScaleTableRow], list[TcScaleLine]]:
    """The spec tables' rows of the Sphinx HTML page, from the text stage's row blocks (each
    row's cells joined by bars, placed at its first cell), and its tcgen05 scale-factor
    headings and figure captions."""
    from ..text.html import html_blocks
    rows = []
    tc = []
    for b in html_blocks(text, name):
        if b.kind in ("heading", "figure"):
            got_tc = _tc_line(b.text.text, b.text)
            if got_tc is not None:
                tc.append(got_tc)
            continue
        if b.kind != "row" or not b.cells or not any("scale_vec" in c.text for c in b.cells):
            continue
        line = "| " + " | ".join(c.text for c in b.cells) + " |"
        for start, table in (("shape_row", "shape"), ("combo_row", "combo"),
                             ("selector_row", "selector")):
            got = read_line(line, start)
            if got is not None:
                rows.append(ScaleTableRow(table, tuple(got[1:]), b.cells[0]))
                break
    return rows, tc


# the two forms of a scale operand's line: (start symbol, the fields it reads after its
# matrix, name, rows and columns, the shape a line that does not read should have)
_OPERAND_LINES = {
    False: ("scale_decl", ("regs", "reg", "elems", "stype"),
            "Scale A: scale_A is R x C, one .b32 register of N <type> bytes"),
    True: ("tc_decl", ("columns", "lanes", "stype", "aligned"),
           "Scale A: scale_A is R x C, in N columns of 32 lanes, <type> bytes at B-byte "
           "aligned offsets"),
}


def _operand_line(body: str, src: SourceText, current: dict[str, Any],
                  findings: list[Finding]) -> dict[str, Any] | None:
    """A section's ``Scale A: ...`` line read as the section's form (mma.sync's register or
    tcgen05's tensor-memory columns) into an open operand, or None (a finding says why)."""
    tc = bool(current.get("tc"))
    start, names, shape = _OPERAND_LINES[tc]
    got = read_line(body, start)
    if got is None:
        findings.append(error("parse", src, f"a scale operand line that does not read as "
                              f"'{shape}'"))
        return None
    _, mat, sname, r, c, *rest = got
    fields = dict(zip(names, rest, strict=True))
    section_stype = current["tc"][3] if tc else current["stype"]
    if sname[-1] != mat:
        findings.append(error("block-scale", src, f"scale {mat} names {sname}"))
    if fields["stype"] != section_stype:
        findings.append(error("block-scale", src, f"scale {mat} holds .{fields['stype']} bytes; "
                              f"the section is .{section_stype}"))
    return {"mat": mat, "rows": r, "cols": c, "source": src, "lines": [], **fields}



def read_block_scale(text: str, name: str) -> ScaleDocument:
    """Every block-scale section and spec table row of one document's text (of the Sphinx
    HTML page: its tables' rows).

    A section opens at a heading that reads as ``scale_title``; in it, a line that reads as
    ``scale_decl`` opens an operand whose fenced block (```` ``` ````) is its program.  A
    table row is recognised wherever it stands.  The lines' readings (and the programs'
    pseudocode lines) are kept between runs (``kept.parses_remembered``)."""
    with parses_remembered(tuple(text.split("\n")), "block_scale"):
        return _read_block_scale(text, name)


def _read_block_scale(text: str, name: str) -> ScaleDocument:
    from ..text.read import detect_format
    if detect_format(text, name) == "html":
        rows_h, tc_h = _html_rows(text, name)
        return ScaleDocument(name, (), tuple(rows_h), (), tuple(tc_h))
    lines = text.split("\n")
    sections: list[ScaleSection] = []
    rows: list[ScaleTableRow] = []
    tc: list[TcScaleLine] = []
    findings: list[Finding] = []
    tc_secs: list[TcScaleSection] = []
    current: dict[str, Any] | None = None
    operand: dict[str, Any] | None = None
    block: list[SourceText] | None = None

    def close_operand() -> None:
        nonlocal operand
        if operand is not None and current is not None:
            program, errs = parse_program(operand["lines"])
            findings.extend(errs)
            if not operand["lines"]:
                findings.append(error("block-scale", operand["source"],
                                      f"scale {operand['mat']} states no selector program"))
            if current.get("tc"):
                current["operands"].append(TcScaleOperand(
                    operand["mat"], operand["rows"], operand["cols"], operand["columns"],
                    operand["lanes"], operand["stype"], operand["aligned"], program,
                    operand["source"]))
            else:
                current["operands"].append(ScaleOperand(
                    operand["mat"], operand["rows"], operand["cols"], operand["regs"],
                    operand["reg"], operand["elems"], program, operand["source"]))
        operand = None

    def close_section() -> None:
        nonlocal current
        close_operand()
        if current is not None and current.get("tc"):
            kind, form, vec, stype, m, n, k, cta, sparse = current["tc"]
            tc_secs.append(TcScaleSection(kind, form, vec, stype, m, n, k, current["title"],
                                          current["source"], tuple(current["operands"]), cta,
                                          sparse))
        elif current is not None:
            sections.append(ScaleSection(current["shape"], current["kind"], current["vec"],
                                         current["stype"], current["title"], current["source"],
                                         tuple(current["operands"])))
        current = None

    for no, raw in enumerate(lines, start=1):
        src = SourceText.at(raw, name, no)
        if block is not None:
            if raw.strip().startswith("```"):
                if operand is not None:
                    operand["lines"] = block
                block = None
            else:
                col = len(raw) - len(raw.lstrip())
                block.append(SourceText.at(raw.strip(), name, no, col + 1))
            continue
        if raw.strip().startswith("```"):
            block = []
            continue
        got_tc = _tc_line(raw, src)  # a tcgen05 heading, caption
        if got_tc is not None:
            tc.append(got_tc)
        head = _heading(raw)
        if head is not None:
            title = read_line(head, "scale_title")
            tc_title = read_line(head, "tc_title") if "tcgen05" in head else None
            if title is not None or tc_title is not None or current is not None:
                close_section()
            if tc_title is not None:
                current = {"tc": tc_title[1:], "title": head, "source": src, "operands": []}
            elif title is not None:
                _, shape, kind, vec, stype = title
                current = {"shape": shape, "kind": kind, "vec": vec, "stype": stype,
                           "title": head, "source": src, "operands": []}
            continue
        body = raw.strip().lstrip("*+-> ").strip()
        if current is not None and body.lower().startswith("scale "):
            got_op = _operand_line(body, src, current, findings)
            if got_op is not None:
                close_operand()
                operand = got_op
            continue
        if "scale_vec" in raw:  # every row of the three tables names a .scale_vec
            for start, table in (("shape_row", "shape"), ("combo_row", "combo"),
                                 ("selector_row", "selector")):
                got = read_line(raw.strip(), start)
                if got is not None:
                    rows.append(ScaleTableRow(table, tuple(got[1:]), src))
                    break
    close_section()
    return ScaleDocument(name, tuple(sections), tuple(rows), tuple(findings), tuple(tc),
                         tuple(tc_secs))
