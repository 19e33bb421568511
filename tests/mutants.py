"""Mutants of spec text: breaking edits and equivalent rewrites (used by tests and bench/).

A mutant is the seed document with one physical line edited.  Each is classified by what it
does to the layouts the prover builds from it, using only enumeration tables and simple
arithmetic (no Z3):

    equivalent   every layout keeps its map and its table facts   -> must still prove
    alternative  a map changed into another valid bijection       -> only hardware can tell
    breaking     a map stops being a valid layout, or the table stops agreeing with the
                 tile, or the text stops parsing                    -> must be refuted

The kill rate is (breaking mutants with an error finding on the mutated line's section) /
(breaking mutants).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from formal import catalog
from formal.model.cells import cells_and_names
from formal.model.layout import Layout
from formal.model.resolve import build
from formal.prove.driver import prove
from formal.prove.verdicts import Options
from formal.text.read import read_text


@dataclass(frozen=True)
class Mutant:
    line: int  # 1-based
    old: str
    new: str
    operator: str
    expect: str = ""  # "equivalent" for rewrites meant to preserve the maps


_INT = re.compile(r"(?<![\w.])(0x[0-9a-fA-F]+|\d+)(?![\w.])")


def _parts(text: str) -> Iterator[Any]:
    """Every type part of every operand block of the document."""
    for s in read_text(text, "m.txt").sections:
        for o in s.operands:
            yield from o.parts


def _formula_lines(text: str) -> list[int]:
    lines = set()
    for p in _parts(text):
        for src in p.pseudo:
            t = src.text.strip()
            if t and not t.startswith("//") and t not in ("Where",) and \
                    not t.startswith(("groupID", "threadID_in_group")):
                lines.add(src.line)
    return sorted(lines)


def _row_lines(text: str) -> list[int]:
    return sorted({c.line for p in _parts(text) for r in p.rows for c in r.cells})


def _subs(line: str, pattern: str, repl: str, op: str, lineno: int) -> Iterator[Mutant]:
    for m in re.finditer(pattern, line):
        new = line[:m.start()] + m.expand(repl) + line[m.end():]
        if new != line:
            yield Mutant(lineno, line, new, op)


def breaking_candidates(text: str) -> Iterator[Mutant]:
    """Edits that usually break a layout (classification decides)."""
    lines = text.split("\n")
    for n in _formula_lines(text):
        line = lines[n - 1]
        code = line.split("//")[0]
        for m in _INT.finditer(code):
            lit = m.group(1)
            v = int(lit, 0)
            for nv, op in ((v + 1, "constant+1"), (v - 1, "constant-1"), (v * 2, "constant*2")):
                if nv < 0 or nv == v:
                    continue
                rep = hex(nv) if lit.startswith("0x") else str(nv)
                yield Mutant(n, line, line[:m.start()] + rep + line[m.end():], op)
        yield from _subs(code, r"(?<=[\s)])\+(?=\s)", "-", "operator+-", n)
        yield from _subs(code, r"(?<=\s)\*(?=\s)", "+", "operator*+", n)
        yield from _subs(code, r"(?<=\s)&(?=\s)", "|", "operator&|", n)
        yield from _subs(code, r"(?<=\s)<(?=\s)", "<=", "compare<", n)
        yield from _subs(code, r"(?<=\s)>=(?=\s)", ">", "compare>=", n)
        yield from _subs(code, r"\bgroupID\b", "threadID_in_group", "swap-name", n)
        yield from _subs(code, r"\bthreadID_in_group\b", "groupID", "swap-name", n)
        yield from _subs(code, r"\b([ab])(\d)\b and \b([ab])(\d)\b", r"\1\2 and \3\2",
                         "element-ref", n)
    for n in _row_lines(text):
        line = lines[n - 1]
        for a, b, op in (("two ", "three ", "register-count"), ("four ", "two ", "count"),
                         ("eight ", "four ", "count"), (".b32", ".b16", "register-kind"),
                         (".s8", ".s9", "type-name"), (".f16", ".f61", "type-name")):
            k = line.find(a)
            if k >= 0:
                yield Mutant(n, line, line[:k] + b + line[k + len(a):], op)
        m = re.search(r"([abc])(\d+)\s*(\|?)\s*$", line)
        if m and "," in line[:m.start()]:
            # drop the last element of an element list
            head = line[:m.start()].rstrip().rstrip(",")
            yield Mutant(n, line, head + (" " + m.group(3) if m.group(3) else ""),
                         "element-list-drop")
        m2 = re.search(r"\b([abc])1\b", line)
        if m2 and re.search(r"\b[abc]2\b", line):
            k = line.find(f"{m2.group(1)}2")
            yield Mutant(n, line, line[:k] + f"{m2.group(1)}1" + line[k + 2:],
                         "element-list-duplicate")


_REWRITES = [
    (r"\(i & 0x3\)", "(i % 4)"), (r"\(i & 0x7\)", "(i % 8)"), (r"\(i & 0x1\)", "(i % 2)"),
    (r"\(threadID_in_group \* (\d+)\)", r"(\1 * threadID_in_group)"),
    (r"\bgroupID \+ 8\b", "(groupID + 8)"), (r"\+ 8\b", "+ 0x8"), (r"\+ 16\b", "+ 0x10"),
    (r"\+ 32\b", "+ 0x20"), (r"\(i & 0x3\)", "(i & 3)"),
    (r"threadID_in_group \* 4\b", "threadID_in_group * 0x4"),
    (r"\bfor ([abc])i where i = \{0,..,(\d+)\}", None),  # -> i < N+1
    (r"\bfor a0 and a1\b", "for ai where i < 2"),
]


def equivalent_rewrites(text: str) -> Iterator[Mutant]:
    lines = text.split("\n")
    for n in _formula_lines(text):
        line = lines[n - 1]
        for pat, repl in _REWRITES:
            m = re.search(pat, line)
            if not m:
                continue
            if repl is None:
                new = line[:m.start()] + f"for {m.group(1)}i where i < {int(m.group(2)) + 1}" + \
                    line[m.end():]
            else:
                new = line[:m.start()] + m.expand(repl) + line[m.end():]
            yield Mutant(n, line, new, "rewrite:" + pat, "equivalent")
    # 'otherwise' <-> the complementary condition (where the pattern is known)
    for n, line in enumerate(lines, 1):
        if "0 <= i < 4 || 8 <= i < 12" in line and n < len(lines) and \
                "otherwise" in lines[n].lower():
            nxt = lines[n]
            k = nxt.lower().index("otherwise")
            yield Mutant(n + 1, nxt, nxt[:k] + "for ai where 4 <= i < 8 || 12 <= i < 16",
                         "rewrite:otherwise", "equivalent")


# ---- classification ------------------------------------------------------------------


def _facts(lay: Layout) -> tuple[object, ...]:
    tf = lay.table
    fr = tf.fragment if tf else None
    el = tuple(it.text for it in tf.elements.items) if tf and tf.elements else None
    return (lay.types, fr.registers.value if fr else None, fr.register_kind if fr else None,
            fr.per_register.value if fr and fr.per_register else None,
            fr.total.value if fr and fr.total else None, el, fr.types if fr else None,
            fr.out_of.value if fr and fr.out_of else None)


def _cases_ok(lay: Layout) -> bool:
    """Every element in exactly one case of every formula (judged from the formulas' own
    condition tables; a condition wider than the element list is a warning, not a fault)."""
    from formal.model.cells import map_of
    m = map_of(lay)
    if m is None:
        return True
    return all(bool((mat.sum(axis=1) == 1).all()) for mat in m.match)


def _valid(lay: Layout) -> bool:
    """Independent validity of a map from its enumeration table: a bijection onto the tile
    (per replication group), every element in exactly one case."""
    names, table = cells_and_names(lay)
    if not table or any(None in v for v in table.values()) or not _cases_ok(lay):
        return False
    r, c = lay.tile
    if lay.sparse_a:
        width = {v[2] - v[1] + 1 for v in table.values()}
        if len(width) != 1:
            return False
        fr = lay.table.fragment if lay.table else None
        nz = fr.per_register.value if fr and fr.per_register else None
        if fr and fr.out_of and width != {fr.out_of.value}:
            return False
        keys: dict[tuple[int, ...], int] = {}
        for (s, t, _i), out in table.items():
            keys[(s, t, *out)] = keys.get((s, t, *out), 0) + 1
        if nz is not None and set(keys.values()) != {nz}:
            return False
        seen: dict[tuple[int, int], int] = {}
        for (_s, t, _i), (row, fc, lc) in table.items():
            if not (0 <= row < r and 0 <= fc <= lc < c):
                return False
            for col in range(fc, lc + 1):
                if seen.setdefault((row, col), t) != t:
                    return False
        return len(seen) == r * c
    groups = lay.groups
    cells: dict[tuple[int, ...], int] = {}
    for (s, t, _i), out in table.items():
        if not all(0 <= x for x in out) or out[0] >= r or (len(out) > 1 and out[1] >= c
                                                           and lay.operand != "metadata"):
            return False
        g = (t % 16) // 4 if groups else 0
        key = (s, g, *out)
        if key in cells:
            return False
        cells[key] = t
    return len(cells) == len(table)


@dataclass(frozen=True)
class Outcome:
    mutant: Mutant
    kind: str  # equivalent | alternative | breaking | internal (a defect)
    killed: bool
    detail: str = ""


def classify(text: str, name: str, mutant: Mutant, base: dict[str, Layout],
             opts: Options) -> Outcome:
    lines = text.split("\n")
    lines[mutant.line - 1] = mutant.new
    doc = read_text("\n".join(lines), name)
    model = build([doc], catalog.documents())
    proof = prove(model, opts)
    errors = [f for f in proof.findings if f.severity == "error"]
    base_errors = base.get("__errors__", ())  # type: ignore[arg-type]
    new_errors = [f for f in errors if (f.span.line, f.kind, f.message) not in base_errors]
    if proof.internal_errors:
        # Z3 and enumeration disagreed: never a kill, always a defect to fix
        return Outcome(mutant, "internal", False,
                       "; ".join(f.message for f in errors if f.kind == "internal")[:300])
    killed = bool(new_errors)
    mine = {lay.id: lay for lay in model.layouts}
    parse_broke = any(f.kind in ("parse", "model", "element-name") for f in new_errors)
    changed_map = changed_table = False
    broken = parse_broke
    for lid, old in base.items():
        if lid == "__errors__":
            continue
        new = mine.get(lid)
        if new is None:
            broken = True
            continue
        if cells_and_names(new)[1] != cells_and_names(old)[1]:
            changed_map = True
            if not _valid(new):
                broken = True
        if _facts(new) != _facts(old):
            changed_table = True
    for lid in mine:
        if lid not in base:
            broken = True
    if changed_table:
        # a table edit breaks unless the prover's table checks accept it: judged by
        # arithmetic the test does itself
        broken = broken or _table_broken(model.layouts, mutant)
    if broken:
        kind = "breaking"
    elif changed_map:
        kind = "alternative"
    else:
        kind = "equivalent"
    detail = "; ".join(f"{f.span.line}:{f.kind}: {f.message}" for f in new_errors[:2])
    return Outcome(mutant, kind, killed, detail)


def _table_broken(layouts: tuple[Layout, ...], mutant: Mutant) -> bool:
    from formal.base.variants import CONTAINER_BITS, REGISTER_BITS, legal_types
    for lay in layouts:
        tf = lay.table
        if tf is None or tf.source.line != mutant.line and not (
                tf.fragment_src and tf.fragment_src.line == mutant.line) and not (
                tf.elements_src and tf.elements_src.line == mutant.line):
            continue
        fr = tf.fragment
        if fr is None:
            return True
        if set(fr.types) != set(tf.types):
            return True
        per = fr.per_register.value if fr.per_register else (fr.total.value // fr.registers.value
                                                              if fr.total else 0)
        total = fr.registers.value * per if fr.per_register else (fr.total.value if fr.total
                                                                   else 0)
        if total != lay.elements or fr.register_kind not in REGISTER_BITS:
            return True
        for t in tf.types:
            if t not in legal_types(lay.instruction, str(lay.shape), lay.operand):
                return True
            if not any(per * w == REGISTER_BITS[fr.register_kind]
                       for w in CONTAINER_BITS.get(t, (0,))) and t != "b1":
                return True
        if tf.elements is not None:
            names = [it.text for it in tf.elements.items if it.kind == "name"]
            nums = [int(x[1:]) for x in names]
            if len(set(nums)) != len(nums):
                return True
            if nums and nums[-1] != lay.elements - 1:
                return True
    return False


def baseline(text: str, name: str, opts: Options) -> dict[str, object]:
    model = build([read_text(text, name)], catalog.documents())
    proof = prove(model, opts)
    out: dict[str, object] = {lay.id: lay for lay in model.layouts}
    out["__errors__"] = {(f.span.line, f.kind, f.message) for f in proof.findings
                         if f.severity == "error"}
    return out


def run(path: Path, limit: int | None = None, rewrites: bool = True,
        opts: Options | None = None) -> list[Outcome]:
    opts = opts or Options()
    text = path.read_text(encoding="utf-8")
    name = path.name
    base = baseline(text, name, opts)
    muts = list(breaking_candidates(text))
    if rewrites:
        muts += list(equivalent_rewrites(text))
    if limit is not None and len(muts) > limit:
        step = len(muts) / limit
        muts = [muts[int(k * step)] for k in range(limit)]
    return [classify(text, name, m, base, opts) for m in muts]  # type: ignore[arg-type]
