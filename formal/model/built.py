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

from ..parse import syntax as S
from .layout import Formula

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
    from .sections import case_of  # one definition of a case's text and names (sections
    # imports this module)
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
        if len(_BUILT) >= _MOST:
            _BUILT.clear()
        _BUILT[key] = (_values(formulas), _values(helpers))
    return formulas, helpers


def clear_built() -> None:
    """Forget every block built (benchmarks measure cold runs; tests plant faults)."""
    _BUILT.clear()
