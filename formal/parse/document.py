"""A whole document parsed: every section's rows, labels, pseudocode and prose, for the model.

``parse_document(doc)`` walks the text stage's sections and gives each ``TypeBlock`` a
``ParsedPart``: its label types, its table rows as ``TableFacts`` (types, fragment sentence,
element list) and its pseudocode as a ``Program``.  Findings of every line are kept in order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..base.source import Finding, SourceText, warning
from ..text.blocks import Document, OperandBlock, Section, TableRow, TypeBlock
from . import syntax as S
from .kept import parses_remembered
from .moves import ParsedMoves, parse_moves
from .prose import parse_prose, try_prose
from .pseudocode import parse_program
from .tmem import ParsedTmem, parse_tmem
from .wmma import ParsedWmma, parse_wmma

# ---- the document stage: every section's text parsed, for the model ------------------------------


@dataclass(frozen=True)
class ParsedPart:
    """One type block: its label, its table rows and its pseudocode, parsed."""

    part: TypeBlock
    label: S.TypeLabel | None
    rows: tuple[S.TableFacts, ...]
    program: S.Program
    figures: tuple[tuple[SourceText, S.FigureFacts], ...] = ()


@dataclass(frozen=True)
class ParsedBlock:
    block: OperandBlock
    parts: tuple[ParsedPart, ...]
    metadata: S.MetadataDesc | None = None
    metadata_src: SourceText | None = None
    # a wgmma operand that lives in shared memory ("... is documented in ..."), where stated
    shared_memory: S.SharedMemoryNote | None = None
    shared_memory_src: SourceText | None = None


@dataclass(frozen=True)
class ParsedSection:
    section: Section
    title: S.SectionTitle | None
    blocks: tuple[ParsedBlock, ...] = ()
    references: tuple[tuple[SourceText, S.ReferenceSentence], ...] = ()
    moves: ParsedMoves | None = None  # a matrix move section, read (formal/parse/moves.py)
    tmem: ParsedTmem | None = None  # a tcgen05 tensor-memory section (formal/parse/tmem.py)
    wmma: ParsedWmma | None = None  # the wmma fragment section, read (formal/parse/wmma.py)


@dataclass(frozen=True)
class ParsedDocument:
    document: Document
    sections: tuple[ParsedSection, ...]
    findings: tuple[Finding, ...] = ()


def _header(header: TableRow | None,
            findings: list[Finding]) -> tuple[S.Header | None, SourceText | None]:
    if header is None or not header.cells:
        return None, None
    src = header.cells[0]
    value, errs = parse_prose(src, "header", "the table header")
    findings.extend(errs)
    return value, src


def unreadable(errs: Sequence[Finding], unchecked: str) -> list[Finding]:
    """A sentence the prose grammar cannot read is a warning naming what goes unchecked: the
    formulas are the primary data, the prose is cross-checked where it can be read."""
    return [replace(f, severity="warning", kind="unreadable",
                    message=f"{f.message}; {unchecked}") for f in errs]


def _slips(frag: S.FragmentDesc | None, src: SourceText | None, shift: int = 0,
           ) -> list[Finding]:
    if frag is None or src is None:
        return []
    return [warning("wording", src.span(pos + shift), f"the fragment sentence: {remark}")
            for pos, remark in frag.slips]


_ROW_UNCHECKED = "the register budget and element types of this row are not checked"


def parse_row(row: TableRow, header: TableRow | None,
              findings: list[Finding]) -> S.TableFacts | None:
    """One table row, flat (a text scrape's one line) or split into cells."""
    hdr, hdr_src = _header(header, findings)
    cells = list(row.cells)
    if row.flat or len(cells) == 1:
        src = cells[0]
        value, errs = parse_prose(src, "flat_row", "this table row")
        if value is None:
            # a row with no fragment sentence: the types alone
            tvalue = parse_prose(src, "type_cell", "this table row")[0]
            findings.extend(unreadable(errs, _ROW_UNCHECKED))
            if tvalue is None:
                return None
            return S.TableFacts(src, tvalue[0], None, None, None, None, hdr, hdr_src)
        fr: S.FlatRow = value
        findings.extend(_slips(fr.fragment, src))
        esrc = src.slice(fr.elements_pos) if fr.elements is not None else None
        elements = fr.elements
        if elements is not None:
            shift = fr.elements_pos
            elements = replace(elements, items=tuple(replace(it, pos=it.pos - shift)
                                                     for it in elements.items))
        return S.TableFacts(src, fr.types, fr.fragment, src, elements, esrc, hdr, hdr_src,
                            fr.n_set)
    tsrc = cells[0]
    tvalue, errs = parse_prose(tsrc, "type_cell", "the type cell")
    if tvalue is None:
        findings.extend(errs)
        return None
    frag = fsrc = None
    if len(cells) > 1 and cells[1].text.strip():
        fsrc = cells[1]
        frag, errs = parse_prose(fsrc, "fragment_cell", "the fragment cell")
        findings.extend(unreadable(errs, _ROW_UNCHECKED))
        findings.extend(_slips(frag, fsrc))
    elements = esrc = None
    if len(cells) > 2 and cells[2].text.strip():
        esrc = cells[2]
        if esrc.text.strip().lower().startswith("mapping"):
            esrc = None  # the sparse tables put a sentence in the Elements column
        else:
            elements, errs = parse_prose(esrc, "element_list", "the element list")
            shifted = try_prose(esrc, "n_cell") if elements is None else None
            if shifted is not None:
                # a wgmma row below a merged element cell: its N column stands one to the
                # left ("| .f32 | ... registers. | N = 8*i where i = {...} |")
                esrc = None
                if len(cells) <= 3:
                    return S.TableFacts(tsrc, tvalue[0], frag, fsrc, None, None, hdr, hdr_src,
                                        shifted)
            else:
                findings.extend(unreadable(errs, "the element list is not checked"))
    n_set = None
    if len(cells) > 3 and cells[3].text.strip():  # wgmma: a column of legal N
        n_set, errs = parse_prose(cells[3], "n_cell", "the N column")
        findings.extend(errs)
    return S.TableFacts(tsrc, tvalue[0], frag, fsrc, elements, esrc, hdr, hdr_src, n_set)


def _parse_part(part: TypeBlock, findings: list[Finding]) -> ParsedPart:
    label = None
    if part.label is not None:
        label, errs = parse_prose(part.label, "type_label", "the type label")
        findings.extend(unreadable(errs, "the rows are not checked against the block's label"))
    program, errs = parse_program(part.pseudo)
    findings.extend(errs)
    findings.extend(_unattached(program))
    rows = [r for r in (parse_row(r, part.header, findings) for r in part.rows) if r is not None]
    if label is not None and label.selects:
        # "... when .ctype is .f16 ...": this part is the table's .f16 rows
        rows = [r for r in rows if set(r.types) & set(label.types)]
    figures = tuple((f, v) for f in part.figures
                    if (v := parse_prose(f, "figure", "the figure")[0]) is not None)
    return ParsedPart(part, label, tuple(rows), program, figures)


# the names a layout is built from: a second block defining one replaces the first
_TARGETS = ("row", "col", "firstcol", "lastcol")


def _unattached(program: S.Program) -> list[Finding]:
    """A formula block no layout takes: its ``row``/``col`` defined again further down in the
    same part (two sub-bullets whose types were not told apart), so the later one replaces
    it.  One warning at its first line, naming its lines -- never silence."""
    last = {d.name: d for d in program.definitions if d.name in _TARGETS}
    gone = [d for d in program.definitions if d.name in _TARGETS and last[d.name] is not d]
    if not gone:
        return []
    lines = sorted({seg[1] for d in gone for c in d.cases for seg in c.source.segments})
    again = sorted({last[d.name].source.span(0).line for d in gone})
    names = ", ".join(dict.fromkeys(f"'{d.name}'" for d in gone))
    return [warning("unattached", gone[0].source.strip(),
                    f"this formula block is taken by no layout: {names} defined again at "
                    f"line {', '.join(map(str, again))} replaces it (a sub-bullet that names "
                    f"its type, '... when .ctype is .f16 ...', gives each block its own rows)",
                    counterexample={"lines": lines})]


def _metadata_sentence(block: OperandBlock, findings: list[Finding],
                       ) -> tuple[S.MetadataDesc | None, SourceText | None]:
    for pr in block.prose:
        value, errs = parse_prose(pr, "metadata_desc", "the metadata sentence")
        if value is None:
            alt, _errs = parse_prose(pr, "metadata_decl", "the metadata declaration")
            if alt is not None:
                value = alt
            elif pr.text.strip().lower().startswith("metadata"):
                findings.extend(errs)
        if value is not None:
            return value, pr
    return None, None


def _shared_memory(block: OperandBlock) -> tuple[S.SharedMemoryNote | None, SourceText | None]:
    """The sentence that sends a table-less operand to shared memory, if there is one."""
    for src in (block.heading, *block.prose):
        note = try_prose(src, "smem_note")
        if note is not None:
            return note, src
    return None, None


def _parse_section(section: Section, findings: list[Finding]) -> ParsedSection:
    if section.move:
        return ParsedSection(section, None, moves=parse_moves(section, findings))
    if section.tmem:
        return ParsedSection(section, None, tmem=parse_tmem(section, findings))
    if section.wmma:
        return ParsedSection(section, None, wmma=parse_wmma(section, findings))
    if not section.operands and not section.references:
        return ParsedSection(section, None)
    title, errs = parse_prose(section.title.strip(), "section_title", "the section title")
    if title is None:
        text = section.title.text.strip().lower()
        if "fragment" in text and "mma" in text:
            findings.extend(errs)
        return ParsedSection(section, None)
    blocks = []
    for block in section.operands:
        parts = tuple(_parse_part(p, findings) for p in block.parts)
        desc = src = None
        if block.operand == "metadata":
            desc, src = _metadata_sentence(block, findings)
        note, note_src = _shared_memory(block) if not parts else (None, None)
        blocks.append(ParsedBlock(block, parts, desc, src, note, note_src))
    refs = []
    for r in section.references:
        value, errs = parse_prose(r, "reference", "the cross-reference")
        findings.extend(errs)
        if value is not None:
            refs.append((r, value))
    return ParsedSection(section, title, tuple(blocks), tuple(refs))


def parse_document(doc: Document) -> ParsedDocument:
    """Every title, table row, sentence and pseudocode line of a document, parsed."""
    findings: list[Finding] = []
    if not doc.lines:
        sections = tuple(_parse_section(s, findings) for s in doc.sections)
        return ParsedDocument(doc, sections, tuple(findings))
    with parses_remembered(doc.lines):  # the parses an earlier run kept of these lines (kept.py)
        sections = tuple(_parse_section(s, findings) for s in doc.sections)
    return ParsedDocument(doc, sections, tuple(findings))
