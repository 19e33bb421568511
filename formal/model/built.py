"""Each pseudocode block's SymPy formulas built once a process, for every block written alike.

The catalog states 251 blocks of pseudocode and only 97 distinct ones: the tcgen05.ld/st
shapes, the ldmatrix counts and the mma types repeat the same lines in section after section.
A block's formulas are a function of its lines' texts alone (each line is parsed from its
text, ``formal.parse.pseudocode``, and the definitions are assembled in order), of the
element letter, the lanes (32, or 128 with ``%warpid``) and the targets (``row``, ``col``;
sparse A's ``firstcol``, ``lastcol``).  So a block written as another one already built
gets the same SymPy values, each case placed on its own line::

    row = groupID            for a0 and a1       (section 9.7.14.5.8, line 40)
    row = groupID            for a0 and a1       (section 9.7.14.5.9, line 88)

are one build: the second ``Case`` has line 88 as its ``source`` and the same value and
condition (SymPy's values are immutable and shared).  Only a build that gave no finding is
kept (a finding names a place, and is made again for every block by building it), and the
key holds every definition's name, kind and case lines and every line that did not parse, so
a block that differs anywhere is built on its own.  Every map is enumerated and proved as
always; nothing is kept between runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..base.memo import keep_bounded
from ..parse import syntax as S
from .layout import Case, Formula

# (name, each case's (value, condition, otherwise)) of each formula, in order
Built = tuple[tuple[str, tuple[tuple[Any, Any, bool], ...]], ...]

_BUILT: dict[tuple[Any, ...], tuple[Built, Built]] = {}
_MOST = 4096  # blocks a process keeps (the catalog has about a hundred distinct ones)


def block_key(program: S.Program, *context: Any) -> tuple[Any, ...]:
    """What a block's formulas depend on: each definition's name, kind and case lines, the
    lines that did not parse, and ``context`` (letter, lanes, targets ...)."""
    return (tuple((d.name, d.kind, tuple(c.source.text for c in d.cases))
                  for d in program.definitions),
            tuple(u.text for u in program.unparsed), context)


def _values(formulas: Sequence[Formula]) -> Built:
    return tuple((f.name, tuple((c.value, c.cond, c.otherwise) for c in f.cases))
                 for f in formulas)


def _placed(program: S.Program, built: Built) -> tuple[Formula, ...]:
    """The formulas ``built`` on this block's own lines: each case's source, the guard as
    written there and the element indices it names."""
    out = []
    for name, cases in built:
        d = program.get(name)
        assert d is not None and len(d.cases) == len(cases)
        out.append(Formula(d.name, tuple(case_of(c, value, cond, other)
                                         for c, (value, cond, other) in zip(d.cases, cases)),
                           d.source))
    return tuple(out)


def built_once(program: S.Program, key: tuple[Any, ...],
               build: Callable[[], tuple[list[Formula], tuple[Formula, ...], bool]],
               ) -> tuple[list[Formula], tuple[Formula, ...]]:
    """(formulas, helpers) of a block: ``build()`` -- which says too whether it gave any
    finding -- or, for a block built before under the same ``key`` without one, the same
    values placed on this block's lines."""
    hit = _BUILT.get(key)
    if hit is not None:
        return list(_placed(program, hit[0])), _placed(program, hit[1])
    formulas, helpers, clean = build()
    if clean:
        keep_bounded(_BUILT, key, (_values(formulas), _values(helpers)), _MOST)
    return formulas, helpers


def clear_built() -> None:
    """Forget every block built (benchmarks measure cold runs; tests plant faults)."""
    _BUILT.clear()


def case_of(c: S.WrittenCase, value: Any, cond: Any, other: bool) -> Case:
    """The case ``c`` of a definition with its value and condition built: its line, the guard
    as written there and the element indices that guard names."""
    text = c.source.text[c.guard.pos:].strip() if c.guard else ""
    return Case(value, cond, other, c.source, text, _named(c.guard))


def _named(g: S.Guard | None) -> tuple[tuple[int, int, str], ...]:
    """The element index each bound of a guard names, (index, position, the bound as
    written), whatever its form: ``a7`` and ``i = {0,..,7}`` name 7; ``i < 8`` names 7 (the
    last it admits), ``i <= 7`` 7, ``i >= 4`` 4, ``i > 3`` 4 (the first), ``8 > i`` as
    ``i < 8``.  The prove stage warns when one lies past the elements a lane holds."""
    if g is None:
        return ()
    if g.kind == "elems":
        return tuple((k, g.pos, f"{letter}{k}") for letter, k in g.elems)
    out: list[tuple[int, int, str]] = []
    stack = [g.cond] if g.cond is not None else []
    while stack:
        c = stack.pop()
        if isinstance(c, S.BoolOp):
            stack.extend(c.parts)
        elif isinstance(c, S.InSet) and _is_i(c.expr):
            for lo, hi in c.ranges:
                form = f"i = {{{lo},..,{hi}}}" if lo != hi else f"i = {lo}"
                out.append((hi, c.pos, form))
        elif isinstance(c, S.Compare):
            for a, op, b in zip(c.operands, c.ops, c.operands[1:]):
                if _is_i(a) and isinstance(b, S.Num):
                    k, rel, form = b.value, op, f"i {op} {b.value}"
                elif isinstance(a, S.Num) and _is_i(b):
                    k, rel, form = a.value, _FLIP.get(op, op), f"{a.value} {op} i"
                else:
                    continue
                named = {"<": k - 1, "<=": k, ">": k + 1, ">=": k}.get(rel, k)
                out.append((named, c.pos, form))
    return tuple(sorted(out, key=lambda x: (x[1], x[0])))


_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _is_i(e: Any) -> bool:
    return isinstance(e, S.Name) and e.name == "i"
