"""Entry points of the text stage: bytes or a path -> a ``Document``.

The format is detected from the content (``<html``/``<section`` is HTML, ``#`` headings or ``|``
tables are Markdown, anything else plain text), so ``read_path("spec.txt")`` of a Markdown file
still reads it as Markdown.  A document over ``MAX_BYTES`` or not UTF-8 becomes a finding.
"""

from __future__ import annotations

from pathlib import Path

from ..base.files import FileProblem, read_limited
from ..base.source import Finding, SourceText, Span, error, warning
from .blocks import MAX_BYTES, Document, blank_glyphs
from .html import html_blocks
from .kept import kept_reading
from .line_memo import remembered
from .lines import MAX_LINE
from .looks import looks_of_blocks, looks_of_lines
from .markdown import markdown_blocks, unquote
from .plain import text_blocks
from .structure import structure

# ---- entry points --------------------------------------------------------------------------------


def detect_format(text: str, name: str = "") -> str:
    """``html`` | ``markdown`` | ``text``, from the content (the name only breaks ties).

    Bullet lines (``* a``) count for nothing: plain text has them as often as Markdown, and
    a scraped ``.txt`` with a few bullets is still the spec.  Either reader reads formula
    lines and flattened table rows the same way, so the choice never changes what is read.
    """
    head = text[:20000].lstrip().lower()
    if head.startswith(("<!doctype html", "<html")) or ("<section" in head and "</" in head) \
            or ("<h1" in head and "</h1>" in head):
        return "html"
    md = 0
    text_lines = text[:200000].split("\n")
    for ln in text_lines:
        s = ln.lstrip()
        if s.startswith("#") and s.lstrip("#").startswith(" "):
            md += 3
        elif s.startswith("```"):
            md += 3
        elif s.startswith("> "):
            md += 1
        elif s.startswith("| ---") or s.startswith("|---") and "| " in s:
            md += 1
        if "](" in s and "[" in s:
            md += 1
    if md >= 4:
        return "markdown"
    if name.endswith((".html", ".htm")):
        return "html"
    if name.endswith((".md", ".markdown")) and md > 0:
        return "markdown"
    return "text"


def read_bytes(data: bytes, name: str, max_bytes: int = MAX_BYTES) -> Document:
    """Ingest one document given as bytes; every problem is a finding, never an exception."""
    import hashlib

    digest = hashlib.sha256(data).hexdigest()
    here = SourceText.at("", name, 1)
    if len(data) > max_bytes:
        return Document(name, "unknown", (), (error(
            "input", here, f"the document is {len(data)} bytes; the limit is {max_bytes} "
            "(raise it with --max-size)"),), digest)
    if not data.strip():
        return Document(name, "unknown", (), (error("input", here, "the document is empty"),),
                        digest)
    if b"\x00" in data[:65536]:
        return Document(name, "unknown", (), (error(
            "input", here, "the document holds NUL bytes: binary data, not a spec text"),),
            digest)
    text = data.decode("utf-8", errors="replace")
    bad = text.count("\ufffd")
    if bad > max(16, len(text) // 100):
        return Document(name, "unknown", (), (error(
            "input", here, f"the document is not UTF-8 text ({bad} undecodable bytes)"),), digest)
    if text.startswith("\ufeff"):
        text = text[1:]
    return read_text(text, name, digest)


def _unread_line(where: SourceText | Span) -> Finding:
    return warning("limit", where, f"this line has more than {MAX_LINE} characters: not "
                                   "read, so nothing on it was checked")


def read_text(text: str, name: str, digest: str = "") -> Document:
    """The document ``text`` (named ``name``) read: its format, sections, blocks, the lines
    that look like part of a layout, and what could not be read.  The whole reading comes
    from an earlier run's where one is kept for the same text, name and code (``kept``), and
    the kinds of its lines where only those are (``line_memo``: the parse stage asks a kind
    now and then)."""
    if len(text) > REMEMBERED_CHARS:
        return _read_text(text, name, digest)
    return kept_reading(text, name, digest, lambda: _read_remembering(text, name, digest))


def _read_remembering(text: str, name: str, digest: str) -> Document:
    with remembered(text):
        return _read_text(text, name, digest)


# the largest document whose lines' kinds are kept (the catalog's are under 100 KB each): a
# bigger one is read line by line every time, rather than writing megabytes each run
REMEMBERED_CHARS = 1 << 20


def _read_text(text: str, name: str, digest: str) -> Document:
    text = blank_glyphs(text)  # icon glyphs are spaces in every format (text.blocks)
    fmt = detect_format(text, name)
    findings: list[Finding] = []
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for k, ln in enumerate(lines):
        if len(ln) > MAX_LINE and fmt != "html":  # HTML: its blocks are its lines (below)
            findings.append(_unread_line(SourceText.at("", name, k + 1)))
            lines[k] = ""
    if fmt == "html":
        blocks = html_blocks(text, name)
        long = [b for b in blocks if len(b.text.text) > MAX_LINE]
        findings.extend(_unread_line(b.text.span(0)) for b in long)
        blocks = [b for b in blocks if len(b.text.text) <= MAX_LINE]
        looks = list(looks_of_blocks(blocks))
    else:
        starts = _quoted(lines)
        if starts is not None and detect_format(
                "\n".join(ln[k:] for ln, k in zip(lines, starts)), name) == "text":
            # a plain-text document quoted whole (every line '> ...'): read as the text it
            # quotes, each position still the file's own
            fmt = "text"
            blocks = list(text_blocks(lines, name, starts))
        else:
            blocks = list(markdown_blocks(lines, name) if fmt == "markdown"
                          else text_blocks(lines, name))
        looks = list(looks_of_lines(lines, name))
    sections = structure(blocks, name)
    if not any(s.operands or s.references or s.move or s.tmem or s.wmma for s in sections):
        # nothing to check is not a pass: the document is named as one that was not read
        findings.append(error("input", SourceText.at("", name, 1),
                              f"no operand blocks (Multiplicand A/B, Accumulators, Metadata) and "
                              f"no matrix move section (ldmatrix, stmatrix, movmatrix) "
                              f"and no wmma fragment section "
                              f"found in this {fmt} document: nothing in it was checked"))
    return Document(name, fmt, tuple(sections), tuple(findings), digest, tuple(lines),
                    tuple(looks))


def _quoted(lines: list[str]) -> list[int] | None:
    """Where each line's text starts when every line that is not blank is quoted
    (``> ...``), else None."""
    starts = []
    for ln in lines:
        k, depth = unquote(ln)
        if depth == 0 and ln.strip():
            return None
        starts.append(k if ln.strip() else 0)
    return starts if any(starts) else None


def read_path(path: str | Path, max_bytes: int = MAX_BYTES, name: str | None = None) -> Document:
    """The document at ``path``; a folder, a FIFO, a device (``/dev/zero``) or a file over
    ``max_bytes`` is a finding, found before anything is opened or read (``base.files``)."""
    label = name or str(path)
    try:
        data = read_limited(path, max_bytes)
    except FileProblem as exc:
        why = str(exc)
        if why.startswith("it is") and "bytes" in why:
            why = why.replace("it is", "the document is", 1) + " (raise it with --max-size)"
        else:
            why = f"cannot read the document: {why}"
        return Document(label, "unknown", (), (error("input", SourceText.at("", label, 1), why),))
    except OSError as exc:
        return Document(label, "unknown", (), (error(
            "input", SourceText.at("", label, 1),
            f"cannot read the document: {exc.strerror or exc}"),))
    return read_bytes(data, label, max_bytes)
