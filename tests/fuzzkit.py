"""The fuzz suite's toolkit: document strategies and the properties every run must keep.

Documents are built at test time from the seeds in ../shared/seeds (read, then mutated) or
from small sections written here in the spec's language; no seed text is stored in the
project.  ``check_cli`` runs ``ptxlayout prove`` in-process and ``check_pipeline`` runs the
stages one by one; both assert the same contract:

* no traceback, no internal error: the exit status is 0 or 1, never 2;
* the exit status says the truth: 1 exactly when there is an error finding;
* the JSON output parses and carries the contract keys (DESIGN.md, "Output contract");
* every finding points into its document: line >= 1, column >= 1, and both within the
  document's lines (line 1, column 1 for a finding about the whole document);
* the run ends within a time budget generous enough for a slow two-core machine;
* content is never dropped: every row/col formula line of a mutated document (found here
  by its own pattern, whatever markup is around it) is in a checked layout's formulas or
  named by an error finding (at its line, or listed in its ``counterexample["lines"]``);
* its memory is bounded: each case runs under an address-space limit (``CASE_MEMORY``), so a
  runaway allocation is a ``MemoryError`` -- an internal error, exit status 2, a failing
  case -- and never a machine brought down by the kernel's out-of-memory killer.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from formal import catalog
from formal.cli import main
from formal.model.resolve import build
from formal.prove.driver import prove
from formal.prove.verdicts import OBLIGATIONS, Options
from formal.text.read import read_bytes
from formal.writers.report import render

from .conftest import seed_path
from .sphinx import markdown_to_sphinx_html

# cases run per property (printed at the end of the session by conftest)
CASES: Counter[str] = Counter()

SEED_KEYS = ("000", "001", "002", "003", "004")
MARKDOWN_SEEDS = ("001", "002", "004")  # the seeds rendered as Markdown (for the HTML page)

# The Z3 time limit of fuzz runs: where a query runs out the enumeration decides (every map
# is finite); a short limit keeps a case that Z3 finds hard from eating the budget.
Z3_TIMEOUT_S = "1"
CASE_BUDGET_S = 90.0  # one document, end to end, on a slow two-core machine

_WORK = Path(tempfile.mkdtemp(prefix="ptxlayout-fuzz-"))

# Address space allowed while one case runs (the prover's own peak is a few hundred MB).
CASE_MEMORY = 4 << 30


@contextlib.contextmanager
def bounded_memory(limit: int = CASE_MEMORY) -> Any:
    """Lower the soft address-space limit for the duration of a case, then restore it."""
    try:
        import resource
    except ImportError:  # not a POSIX system: no limit
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    used = _address_space()
    cap = limit + used
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    if soft != resource.RLIM_INFINITY:
        cap = min(cap, soft)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _address_space() -> int:
    """This process's current virtual size in bytes (0 where /proc is missing)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


@cache
def seed_text(key: str) -> str:
    return seed_path(key).read_text(encoding="utf-8")


@cache
def seed_html(key: str) -> str:
    return markdown_to_sphinx_html(seed_text(key))


# ---- the properties --------------------------------------------------------------------------

LAYOUT_KEYS = {"id", "section", "title", "document", "line", "instruction", "shape", "operand",
               "types", "tile", "elements_per_thread", "source", "obligations"}
FINDING_KEYS = {"severity", "kind", "document", "line", "column", "section", "message",
                "counterexample"}
# "unconfirmed" (issue 16): the hardware obligation's warning, the evidence cannot decide
STATUSES = {"proved", "refuted", "unknown", "error", "not-applicable", "unconfirmed"}
OPERANDS = {"A", "B", "C/D", "metadata"}
SOURCES = {"text", "reference", "catalog", "figure-only"}


@cache
def _catalog_lines() -> dict[str, list[str]]:
    return {f"catalog/{p.name}": p.read_text(encoding="utf-8").split("\n")
            for p in catalog.paths()}


def _line_tables(data: bytes) -> tuple[list[str], list[str]]:
    """The document's lines as the HTML reader counts them ('\\n') and as the text and
    Markdown readers do (universal newlines)."""
    text = data.decode("utf-8", errors="replace")
    return text.split("\n"), text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _inside(lines: list[str], line: int, column: int) -> bool:
    return 1 <= line <= len(lines) and 1 <= column <= len(lines[line - 1]) + 1


def check_position(doc: str, line: int, column: int, name: str, data: bytes,
                   what: str) -> None:
    assert isinstance(line, int) and isinstance(column, int), (what, line, column)
    assert line >= 1 and column >= 1, f"{what}: position {line}:{column} is not 1-based"
    if doc == name:
        a, b = _line_tables(data)
        assert _inside(a, line, column) or _inside(b, line, column), \
            f"{what}: {doc}:{line}:{column} lies outside the document ({len(b)} lines)"
    elif doc in _catalog_lines():
        assert _inside(_catalog_lines()[doc], line, column), \
            f"{what}: {doc}:{line}:{column} lies outside the catalog file"
    else:
        raise AssertionError(f"{what}: a finding names an unknown document {doc!r}")


def check_json(text: str, name: str, data: bytes) -> dict[str, Any]:
    out = json.loads(text)
    assert set(out) >= {"layouts", "findings", "summary"}, sorted(out)
    for lay in out["layouts"]:
        assert set(lay) >= LAYOUT_KEYS, sorted(LAYOUT_KEYS - set(lay))
        assert lay["instruction"] in ("mma", "mma.sp")
        assert lay["operand"] in OPERANDS and lay["source"] in SOURCES
        assert isinstance(lay["line"], int) and lay["line"] >= 1, lay["id"]
        assert len(lay["tile"]) == 2 and lay["elements_per_thread"] >= 0
        for ob in lay["obligations"]:
            assert set(ob) >= {"name", "status", "counterexample"}
            assert ob["name"] in OBLIGATIONS and ob["status"] in STATUSES
    for f in out["findings"]:
        assert set(f) >= FINDING_KEYS, sorted(FINDING_KEYS - set(f))
        assert f["severity"] in ("error", "warning")
        assert f["kind"] != "internal", f
        check_position(f["document"], f["line"], f["column"], name, data,
                       f"{f['kind']} finding '{f['message'][:80]}'")
    assert out["summary"]["internal_errors"] == 0
    return out


def _path_for(data: bytes, suffix: str) -> Path:
    path = _WORK / f"case{suffix}"
    path.write_bytes(data)
    return path


def check_cli(data: bytes | str, suffix: str = ".txt", *extra: str,
              budget_s: float = CASE_BUDGET_S, label: str = "cli") -> dict[str, Any]:
    """``ptxlayout prove DOC --format json`` in-process; returns the parsed JSON."""
    CASES[label] += 1
    raw = data.encode("utf-8") if isinstance(data, str) else data
    path = _path_for(raw, suffix)
    out, err = io.StringIO(), io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), bounded_memory():
        code = main(["prove", str(path), "--format", "json", "--timeout", Z3_TIMEOUT_S,
                     *extra])
    seconds = time.perf_counter() - t0
    unread = err.getvalue().startswith("ptxlayout: cannot read the input: ") \
        and err.getvalue().count("\n") == 1 and ": error: input: " in err.getvalue()
    if code == 2 and unread:  # not read at all (empty, binary, too big): one line, exit 2
        message = err.getvalue().split(": error: input: ", 1)[1].strip()
        return {"layouts": [], "relations": [], "summary": {}, "findings": [
            {"severity": "error", "kind": "input", "line": 1, "column": 1,
             "document": str(path), "message": message}]}
    if code not in (0, 1):
        internal = re.findall(r'"message": "(internal error[^"]*)"', out.getvalue())
        raise AssertionError(f"exit status {code}: {err.getvalue()[-2000:]} {internal[:3]}")
    assert "Traceback" not in err.getvalue() and "internal error" not in err.getvalue()
    assert seconds < budget_s, f"{seconds:.1f} s for one document (budget {budget_s} s)"
    result = check_json(out.getvalue(), str(path), raw)
    errors = [f for f in result["findings"] if f["severity"] == "error"
              and not ("--allow-unknown" in extra and f["kind"] == "unknown")]
    assert code == (1 if errors else 0), f"exit status {code} with {len(errors)} errors"
    return result


def check_pipeline(data: bytes | str, name: str = "doc.txt",
                   budget_s: float = CASE_BUDGET_S, label: str = "pipeline") -> None:
    """ingest -> model -> prove -> every report format, called as functions."""
    CASES[label] += 1
    raw = data.encode("utf-8") if isinstance(data, str) else data
    t0 = time.perf_counter()
    with bounded_memory():
        doc = read_bytes(raw, name)
        model = build([doc], catalog.documents())
        proof = prove(model, Options(timeout_ms=int(float(Z3_TIMEOUT_S) * 1000)))
        assert proof.internal_errors == 0
        sources = {name: raw.decode("utf-8", errors="replace").split("\n")}
        outputs = {fmt: render(proof, fmt, sources) for fmt in
                   ("text", "markdown", "json", "sarif", "junit")}
    assert time.perf_counter() - t0 < budget_s
    check_json(outputs["json"], name, raw)
    sarif = json.loads(outputs["sarif"])
    for res in sarif["runs"][0]["results"]:
        region = res["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
    ET.fromstring(outputs["junit"])
    for f in proof.findings:
        check_position(f.span.document, f.span.line, f.span.column, name, raw, f.kind)
    if not name.endswith((".html", ".htm")):
        check_nothing_dropped(raw, name, model, proof)


# a formula for a fragment's row or col, behind any quote marks, bullets, heading marks,
# table bars or back ticks
FORMULA_LINE = re.compile(r"^[\s>*+#|`-]*(?:row|col)\s*=(?!=)")


def check_nothing_dropped(raw: bytes, name: str, model: Any, proof: Any) -> list[int]:
    """Every formula line is part of a layout or named by an error finding; returns the
    formula lines found (a test may ask that there were some)."""
    text = raw.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = [k for k, ln in enumerate(text.split("\n"), 1) if FORMULA_LINE.match(ln)]
    if any(f.kind == "input" and f.severity == "error" and f.span.document == name
           for f in proof.findings):
        return lines  # the document as a whole was not read (binary, empty, nothing found)
    read: set[int] = set()
    for lay in model.layouts:
        if lay.document != name:
            continue
        used = {seg[1] for f in (*lay.formulas, *lay.helpers) for c in f.cases
                for seg in c.source.segments}
        if used:  # the block's program: its first formula line to its last
            read |= set(range(min(used), max(used) + 1))
    # an error names its line; so does an 'unattached' warning (a formula block no layout
    # takes, e.g. one a later 'row =' replaces: named, never silent)
    naming = [f for f in proof.findings if f.span.document == name
              and (f.severity == "error" or f.kind == "unattached")]
    named = {f.span.line for f in naming}
    for f in naming:  # a finding that lists the lines it leaves unchecked
        cex = f.counterexample
        if isinstance(cex, dict) and isinstance(cex.get("lines"), list):
            named |= set(cex["lines"])
    dropped = [k for k in lines if k not in read and k not in named]
    assert not dropped, f"formula lines dropped without a finding: {dropped[:10]}"
    return lines


# ---- strategies --------------------------------------------------------------------------------

OPERATORS = ["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "<", "<=", ">", ">=", "==",
             "=", "!=", "||", "&&", "...", "..", "\u2026", ",", ".", ";", ":", "(", ")", "[",
             "]", "{", "}"]
NUMBERS = ["0", "1", "-1", "2", "3", "4", "7", "8", "15", "16", "31", "32", "33", "63", "64",
           "65", "100000", "100000000", "0x3", "0x0", "0xffffffffffffffff",
           "0x10000000000000000", "18446744073709551616", "9" * 40, "00", "0b101", "-0",
           "4294967296"]
TOKENS = ["for", "where", "otherwise", "Otherwise", "if", "and", "ai", "bi", "ci", "mi", "a0",
          "a1", "a99", "%laneid", "%warpid", "%nonsense", "groupID", "threadID_in_group", "row",
          "col", "firstcol", "lastcol", "i", "selector", "holder", "Where", "//", "= ",
          "Multiplicand A:", "Multiplicand B:", "Accumulators (C or D):", "Metadata:",
          "9.7.14.5.9. Matrix Fragments for mma.m16n8k16", "Matrix Fragments for sparse ",
          "are the same as in case of Matrix Fragments for mma.m16n8k8", ".b32", ".f16",
          ".s8", ".tf32", ".atype", ".btype", "registers", "elements", "|", "> ", "# ", "```",
          "\n", "\n\n", "\t", "![", "](x)", "[", "]", "`", "\\", "mma.m16n8k16", "mma.sp",
          ".u8 / .s8", "a0, a1, \u2026, a7", "{0,..,7}", "{0,..,100000000}", "% 0", ">> -1",
          "<< 100000", "<< 64", "Same as Matrix Fragments for mma.m16n8k16: A."]
LOOKALIKES = {"*": "\u00d7", "-": "\u2212", " ": "\u00a0", "...": "\u2026", "x": "\u0445",
              "|": "\u2502", "=": "\uff1d", ">": "\uff1e", "<": "\uff1c", "a": "\u0430",
              "i": "\u0456", "(": "\uff08", ")": "\uff09", "%": "\uff05", ",": "\uff0c",
              ".": "\u2024", "+": "\uff0b", "&": "\uff06", "0": "\uff10", "1": "\uff11",
              "2": "\uff12", "4": "\uff14", "8": "\uff18"}
ALPHABET = st.sampled_from(list("abciAB01234789 ().,;:=<>+-*/%&|^{}[]!#`\\\t\n_") +
                           ["\u00d7", "\u2212", "\u00a0", "\u2026", "\uff11", "\ufeff",
                            "\u200b", "\r", "\x00", "\u202e", "\U0001f600", "\ufffd"])

_NUM = re.compile(r"0[xX][0-9a-fA-F]+|\d+")
_OP = re.compile(r"<<|>>|<=|>=|==|!=|\.\.\.|\.\.|\|\||&&|[-+*/%&|^<>=,;:(){}\[\]]")


def _nth(matches: list[re.Match[str]], k: int) -> re.Match[str] | None:
    return matches[k % len(matches)] if matches else None


def _splice(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


@st.composite
def edit(draw: Any, text: str) -> str:
    """One random edit of ``text``."""
    n = max(1, len(text))
    pos = draw(st.integers(0, 10**7)) % n
    kind = draw(st.sampled_from(["ins", "del", "rep", "op", "num", "tok", "dupline", "delline",
                                 "swaplines", "lookalike"]))
    if kind == "ins":
        return _splice(text, pos, pos, draw(st.text(ALPHABET, min_size=1, max_size=8)))
    if kind == "del":
        return _splice(text, pos, pos + draw(st.integers(1, 40)), "")
    if kind == "rep":
        return _splice(text, pos, pos + 1, draw(ALPHABET))
    if kind == "tok":
        return _splice(text, pos, pos, draw(st.sampled_from(TOKENS)))
    if kind in ("op", "num"):
        pattern = _OP if kind == "op" else _NUM
        m = _nth(list(pattern.finditer(text)), draw(st.integers(0, 10**6)))
        if m is None:
            return text
        new = draw(st.sampled_from(OPERATORS if kind == "op" else NUMBERS))
        return _splice(text, m.start(), m.end(), new)
    if kind == "lookalike":
        old = draw(st.sampled_from(sorted(LOOKALIKES)))
        hits = [m.start() for m in re.finditer(re.escape(old), text)]
        if not hits:
            return text
        k = hits[draw(st.integers(0, 10**6)) % len(hits)]
        return _splice(text, k, k + len(old), LOOKALIKES[old])
    lines = text.split("\n")
    a = draw(st.integers(0, 10**6)) % len(lines)
    if kind == "dupline":
        lines.insert(a, lines[a])
    elif kind == "delline":
        del lines[a]
    else:
        b = draw(st.integers(0, 10**6)) % len(lines)
        lines[a], lines[b] = lines[b], lines[a]
    return "\n".join(lines)


@st.composite
def edited(draw: Any, text: str, max_edits: int = 8) -> str:
    for _ in range(draw(st.integers(1, max_edits))):
        text = draw(edit(text))
    return text


@st.composite
def mutated_seed(draw: Any) -> tuple[str, str]:
    """(text, suffix): a seed (or its HTML rendering) with random edits."""
    key = draw(st.sampled_from(SEED_KEYS))
    text = seed_text(key)
    suffix = ".md" if key in MARKDOWN_SEEDS else ".txt"
    return draw(edited(text)), suffix


def all_lookalikes(text: str, keys: list[str]) -> str:
    for k in keys:
        text = text.replace(k, LOOKALIKES[k])
    return text
