"""Block-scale factor layouts of ``mma.sync``: which (lane, byte) holds which scale factor.

A selector program (``formal.parse.block_scale``) is evaluated at every lane, every byte ``i``
of the scale register and every legal selector pair.  For scale_A of ``.scale_vec::2X``
(scale_A is 16 x 2) with ``byte_id = 2, thread_id = 1`` the holders are the lanes with
``%laneid % 4`` in {2, 3}; lane 6 (groupID 1, threadID_in_group 2) uses bytes 2 and 3 and
holds row 1's blocks 0 and 1; lane 7 holds row 9's::

    lane  byte   ->  (row, block)
       6     2       (1, 0)
       6     3       (1, 1)
       7     2       (9, 0)
       7     3       (9, 1)

A ``ScaleLayout`` keeps, per selector pair, every such holding; the prove stage checks that
each pair's holdings cover the stated scale matrix exactly once.  Cells are (row, column) of
the matrix as the spec states it: scale_A is M x SFA_N (row, block), scale_B is SFB_M x N
(block, col).  Arithmetic is C's on non-negative integers; a name the program does not define
is a fault of the layout, reported with the line that uses it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ..base.source import Finding, SourceText, Span, error
from ..parse import syntax as S
from ..parse.block_scale import ScaleDocument, ScaleOperand, ScaleSection

T = TypeVar("T")

LANES = 32
BYTE_BITS = 8
# Bits of each scale type: an unsigned 8-bit exponent, an unsigned 4-bit exponent and
# 3-bit mantissa in a byte.
SCALE_BITS = {"ue8m0": 8, "ue4m3": 8}
REGISTER_BITS = {"b32": 32}

Holding = tuple[int, int, int, int]  # (lane, byte, row, col) of the scale matrix


R = TypeVar("R", bound=tuple[int, ...])


class Placements(Sequence[R]):
    """One selector value's placements (a scale factor's or a metadata field's, one row of
    ints a place), held as the rows of a read-only int64 array and turned into tuples only
    when a caller reads them: ``placed[3]``, a loop, ``==``.  The prover reads the array
    itself (``prove.repeats.placed_array``), so a run that proves and draws nothing never
    builds the tuples.  Equal to the tuple of the same tuples, and hashes as it does:
    ``Placements(np.array([[0, 1], [2, 3]])) == ((0, 1), (2, 3))``."""

    __slots__ = ("_rows", "_tuples")

    def __init__(self, rows: Any) -> None:
        self._rows = rows
        self._tuples: tuple[R, ...] | None = None

    def _all(self) -> tuple[R, ...]:
        if self._tuples is None:
            self._tuples = tuple(map(tuple, self._rows.tolist()))  # type: ignore[arg-type]
        return self._tuples

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, k: Any) -> Any:
        if self._tuples is None and type(k) is int:  # one row: its tuple alone
            return tuple(self._rows[k].tolist())
        return self._all()[k]

    def __iter__(self) -> Any:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Placements):
            other = other._all()
        return self._all() == other if isinstance(other, tuple) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._all())

    def __repr__(self) -> str:
        return repr(self._all())


class ProgramLines:
    """A layout evaluated from a catalog program: ``line_of(name)`` is the line of the
    definition called ``name`` (``lines``), else the whole operand's ``span``.  Shared by the
    block-scale, tcgen05 scale-factor and sparse-metadata layouts."""

    lines: tuple[tuple[str, Span], ...]
    span: Span

    def line_of(self, name: str) -> Span:
        return next((sp for n, sp in self.lines if n == name), self.span)


@dataclass(frozen=True)
class ScaleLayout(ProgramLines):
    """One scale operand of one legal block-scaled form, evaluated."""

    id: str  # mma.block_scale.m16n8k64.mxf4.2X.ue8m0.scale_A
    shape: str
    kind: str
    vec: int
    stype: str
    operand: str  # "A" | "B"
    tile: tuple[int, int]  # as stated: (M, SFA_N) or (SFB_M, N)
    registers: int
    register_type: str
    elements: int  # bytes of the register(s) a lane passes
    byte_ids: tuple[int, ...]
    thread_ids: tuple[int, ...]
    # per (byte_id, thread_id) -- every value a register's bytes and a quad's four lanes
    # could name, stated legal or not --: every (lane, byte, row, col) a used byte holds
    every: tuple[tuple[tuple[int, int], tuple[Holding, ...]], ...]
    span: Span
    lines: tuple[tuple[str, Span], ...]  # each definition's line
    faults: tuple[Finding, ...] = ()

    def held(self, byte_id: int, thread_id: int) -> tuple[Holding, ...]:
        for sel, hs in self.every:
            if sel == (byte_id, thread_id):
                return hs
        return ()

    @property
    def holdings(self) -> tuple[tuple[tuple[int, int], tuple[Holding, ...]], ...]:
        """The stated selector pairs' holdings."""
        return tuple(((b, t), self.held(b, t)) for b in self.byte_ids for t in self.thread_ids)

    @property
    def instruction(self) -> str:
        return (f"mma.sync.aligned.{self.shape}.row.col.kind::{self.kind}.block_scale"
                f".scale_vec::{self.vec}X")


class Undefined(Exception):
    """A name a selector program uses but does not define (or a division by zero)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def definition_expr(d: S.Definition) -> S.Expr:
    """The one expression a definition like ``lane = row % 32`` binds (``Undefined`` for a
    set or a case list, which a place cannot be)."""
    e = d.cases[0].expr
    if d.kind != "expr" or e is None:
        raise Undefined(d.name)
    return e


def at_each_value(lid: str, kind: str, where: SourceText, faults: list[Finding],
                  place: Callable[[int], T], values: int) -> list[tuple[int, T]]:
    """``place(v)`` for each selector value ``v`` < ``values``, as ``(v, place(v))``; nothing
    when ``faults`` already holds the program's faults, and nothing plus one fault (appended
    to ``faults``, of ``kind`` on ``where``) when the program uses a name it never defines."""
    if faults:
        return []
    try:
        return [(v, place(v)) for v in range(values)]
    except Undefined as exc:
        faults.append(error(kind, where, f"{lid}: the program uses {exc.name}, which it does "
                            "not define", layout=lid))
        return []


def program_value(e: S.Expr, env: Mapping[str, int], defs: Mapping[str, S.Definition]) -> int:
    """``e`` at ``env`` (names bound there first, then the program's own definitions), with
    C's integer arithmetic; ``Undefined`` for a name neither binds.  Each definition is
    evaluated once a call (``lane = row % 32`` used twice is computed once)."""
    return _value(e, env, defs, {})


def _value(e: S.Expr, env: Mapping[str, int], defs: Mapping[str, S.Definition],
           known: dict[str, int]) -> int:
    """``program_value``'s walk; ``known``: the definitions already evaluated at ``env``."""
    if isinstance(e, S.Num):
        return e.value
    if isinstance(e, S.Name):
        if e.name in env:
            return env[e.name]
        hit = known.get(e.name)
        if hit is not None:
            return hit
        d = defs.get(e.name)
        if d is None or d.kind != "expr" or d.cases[0].expr is None:
            raise Undefined(e.name)
        hit = known[e.name] = _value(d.cases[0].expr, env, defs, known)
        return hit
    if isinstance(e, S.Special):
        if e.name.lstrip("%") == "laneid":
            return env["%laneid"]
        raise Undefined(e.name)
    if isinstance(e, S.Neg):
        return -_value(e.operand, env, defs, known)
    a, b = _value(e.left, env, defs, known), _value(e.right, env, defs, known)
    op = e.op
    if op in ("/", "%"):
        if b == 0:
            raise Undefined(f"{op} by zero")
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)  # C: truncation
        return q if op == "/" else a - q * b
    return _OPS[op](a, b)


_OPS: dict[str, Callable[[int, int], int]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
    "<<": lambda a, b: a << b if 0 <= b < 64 else 0, ">>": lambda a, b: a >> b if b >= 0 else 0}


class TooWide(Exception):
    """An array value that could leave int64's exact range: the caller evaluates per point."""


_BOUND = 1 << 31  # every intermediate stays below this, so no int64 operation can wrap


def program_array(e: S.Expr, env: Mapping[str, Any], defs: Mapping[str, S.Definition]) -> Any:
    """``program_value`` over numpy arrays at once (``env`` binds names to int64 arrays that
    broadcast, ``row`` as a column and ``block`` as a row, say): the same C arithmetic, so
    ``lane = row % 32`` is computed once per row, not once per (row, block).  Raises
    ``Undefined`` as the scalar walk would, and ``TooWide`` where a value reaches 2**31 (then
    the caller walks per point with Python's unbounded integers)."""
    import numpy as np
    if isinstance(e, S.Num):
        return _bounded(np.int64(e.value) if abs(e.value) < _BOUND else e.value)
    if isinstance(e, S.Special):
        if e.name.lstrip("%") == "laneid":
            return env["%laneid"]
        raise Undefined(e.name)
    if isinstance(e, S.Name):
        if e.name in env:
            return env[e.name]
        d = defs.get(e.name)
        if d is None or d.kind != "expr" or d.cases[0].expr is None:
            raise Undefined(e.name)
        return program_array(d.cases[0].expr, env, defs)
    if isinstance(e, S.Neg):
        return -program_array(e.operand, env, defs)
    a, b = program_array(e.left, env, defs), program_array(e.right, env, defs)
    if e.op in ("/", "%"):
        if (b == 0).any():
            raise Undefined(f"{e.op} by zero")
        q = np.abs(a) // np.abs(b) * np.where((a >= 0) == (b >= 0), 1, -1)  # C: truncation
        return _bounded(q if e.op == "/" else a - q * b)
    if e.op == "<<":
        inside = (b >= 0) & (b < 64)
        if np.any(np.where(inside, b, 0) > 32):
            raise TooWide(e.op)
        return _bounded(np.where(inside, a << np.clip(b, 0, 32), 0))
    if e.op == ">>":
        return np.where(b >= 0, a >> np.clip(b, 0, 63), 0)
    ops = {"+": np.add, "-": np.subtract, "*": np.multiply, "&": np.bitwise_and,
           "|": np.bitwise_or, "^": np.bitwise_xor}
    return _bounded(ops[e.op](a, b))


def _bounded(v: Any) -> Any:
    """``v`` where it is an int64 array or scalar with every value inside (-2**31, 2**31)
    (the greatest and the least compared: the values come from operations on such values,
    so none wrapped), else ``TooWide``."""
    import numpy as np
    if not isinstance(v, np.ndarray | np.integer) or \
            (v.size and (v.max() >= _BOUND or v.min() <= -_BOUND)):
        raise TooWide("value")
    return v


def program_grid(exprs: Sequence[S.Expr], axes: Sequence[tuple[str, int]],
                 fixed: Mapping[str, int], defs: Mapping[str, S.Definition]) -> Any:
    """Each of ``exprs`` at every point of a grid, as one int64 array: a row ``(*point,
    *values)`` a point, the points in the order of nested loops over ``axes`` (the first
    outermost), each axis a name and its size, with ``fixed`` bound too.  For ``lane = row %
    2`` over ``(("row", 3),)``: ``[[0, 0], [1, 1], [2, 0]]``.  The tree is walked once over
    whole numpy arrays (``program_array``): every point is evaluated.  Raises ``Undefined`` or
    ``TooWide`` where arrays cannot say what the point-by-point walk says (``program_table``
    then walks)."""
    import numpy as np
    shape = tuple(n for _name, n in axes)
    grids = [np.arange(n, dtype=np.int64).reshape([n if k == j else 1 for k in range(len(axes))])
             for j, (_name, n) in enumerate(axes)]
    env: dict[str, Any] = {k: np.int64(v) for k, v in fixed.items()}
    env.update({name: g for (name, _n), g in zip(axes, grids, strict=True)})
    vals = [program_array(e, env, defs) for e in exprs]
    cols = (*grids, *vals)
    if not cols:
        return np.zeros((0, 0), dtype=np.int64)
    out = np.empty((*shape, len(cols)), dtype=np.int64)
    for j, x in enumerate(cols):
        out[..., j] = x  # broadcast over the grid's axes
    return out.reshape(-1, len(cols))


def program_table(exprs: Sequence[S.Expr], axes: Sequence[tuple[str, int]],
                  fixed: Mapping[str, int], defs: Mapping[str, S.Definition]) \
        -> list[tuple[int, ...]]:
    """``program_grid``'s rows as tuples (``[(0, 0), (1, 1), (2, 0)]``); where arrays cannot
    say the same, every point walked (``program_value``, which then raises ``Undefined``
    where the program does)."""
    try:
        return list(map(tuple, program_grid(exprs, axes, fixed, defs).tolist()))
    except (Undefined, TooWide):
        return _table_by_point(exprs, axes, fixed, defs)


def _table_by_point(exprs: Sequence[S.Expr], axes: Sequence[tuple[str, int]],
                    fixed: Mapping[str, int], defs: Mapping[str, S.Definition]) \
        -> list[tuple[int, ...]]:
    import itertools
    out: list[tuple[int, ...]] = []
    names = [name for name, _n in axes]
    for point in itertools.product(*(range(n) for _name, n in axes)):
        env = {**fixed, **dict(zip(names, point, strict=True))}
        out.append((*point, *(program_value(e, env, defs) for e in exprs)))
    return out


_REL = {"==": lambda a, b: a == b, "=": lambda a, b: a == b, "!=": lambda a, b: a != b,
        "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
        ">=": lambda a, b: a >= b}


def _holds(c: S.Cond, env: Mapping[str, int], defs: Mapping[str, S.Definition]) -> bool:
    if isinstance(c, S.Compare):
        vals = [program_value(x, env, defs) for x in c.operands]
        return all(_REL[op](vals[k], vals[k + 1]) for k, op in enumerate(c.ops))
    if isinstance(c, S.InSet):
        v = program_value(c.expr, env, defs)
        return any(lo <= v <= hi for lo, hi in c.ranges)
    parts = [_holds(p, env, defs) for p in c.parts]
    return all(parts) if c.op == "and" else any(parts)


def holds_array(c: S.Cond, env: Mapping[str, Any], defs: Mapping[str, S.Definition]) -> Any:
    """``_holds`` over numpy arrays (``program_array``'s arguments): a boolean array."""
    import numpy as np
    if isinstance(c, S.Compare):
        vals = [program_array(x, env, defs) for x in c.operands]
        return np.logical_and.reduce([_REL[op](vals[k], vals[k + 1])
                                      for k, op in enumerate(c.ops)])
    if isinstance(c, S.InSet):
        v = program_array(c.expr, env, defs)
        return np.logical_or.reduce([(lo <= v) & (v <= hi) for lo, hi in c.ranges])
    parts = [holds_array(p, env, defs) for p in c.parts]
    return np.logical_and.reduce(parts) if c.op == "and" else np.logical_or.reduce(parts)


def program_faults(where: SourceText | Span, prog: S.Program, lid: str,
                   required: Sequence[str]) -> list[Finding]:
    """What keeps one scale operand's program (mma.sync's or tcgen05's) from being checked:
    a name of ``required`` it does not define (at ``where``), a line that did not parse."""
    names = {d.name for d in prog.definitions}
    faults: list[Finding] = []
    missing = [n for n in required if n not in names]
    if missing:
        faults.append(error("block-scale", where, f"{lid}: the program defines no "
                            f"{', '.join(missing)}", layout=lid))
    if prog.unparsed:
        faults.append(error("block-scale", prog.unparsed[0].span(0), f"{lid}: a line of the "
                            "program did not parse; its layout is not checked", layout=lid))
    return faults


def set_values(d: S.Definition | None) -> tuple[int, ...]:
    """The values a set definition (``byte_id = {0, 2}``) lists, in order; () for none."""
    if d is None or d.kind != "set":
        return ()
    out: list[int] = []
    for lo, hi in d.cases[0].items:
        out.extend(range(lo, hi + 1))
    return tuple(out)


REQUIRED = {"A": ("byte_id", "thread_id", "holder", "used", "row", "block"),
            "B": ("byte_id", "thread_id", "holder", "used", "col", "block")}


def scale_layout(sec: ScaleSection, op: ScaleOperand, document: str) -> ScaleLayout:
    """One operand's program evaluated at every lane, byte and selector pair."""
    prog = op.program
    defs = {d.name: d for d in prog.definitions}
    lines = tuple((d.name, d.source.span(0)) for d in prog.definitions)
    lid = f"mma.block_scale.{sec.shape}.{sec.kind}.{sec.vec}X.{sec.stype}.scale_{op.operand}"
    faults = program_faults(op.source, prog, lid, REQUIRED[op.operand])
    byte_ids = set_values(defs.get("byte_id"))
    thread_ids = set_values(defs.get("thread_id"))
    width = REGISTER_BITS.get(op.register_type, 32) * op.registers
    nbytes = width // BYTE_BITS
    every: list[tuple[tuple[int, int], tuple[Holding, ...]]] = []
    if not faults:
        mn = "row" if op.operand == "A" else "col"
        at_once = _held_at_every_pair(defs, mn, op.operand, nbytes)
        for b in range(nbytes):
            for t in range(4):
                try:
                    every.append(((b, t), at_once[b, t] if at_once is not None
                                  else _held(defs, mn, op.operand, b, t, nbytes)))
                except Undefined as exc:
                    faults.append(error("block-scale", op.source, f"{lid}: the program uses "
                                        f"{exc.name}, which it does not define", layout=lid))
                    break
            if faults:
                break
    return ScaleLayout(lid, sec.shape, sec.kind, sec.vec, sec.stype, op.operand,
                       (op.rows, op.cols), op.registers, op.register_type, op.elements,
                       byte_ids, thread_ids, tuple(every) if not faults else (),
                       op.source.span(0), lines, tuple(faults))


def _held(defs: Mapping[str, S.Definition], mn: str, operand: str, b: int, t: int,
          nbytes: int) -> tuple[Holding, ...]:
    """Every (lane, byte, row, col) at selectors (b, t); bytes up to 4 past the register are
    asked too, so a program that uses them is caught.  Each definition is evaluated once over
    all (lane, byte) points (numpy), point by point where that cannot say the same (a name
    undefined, a division by zero somewhere, a value past 2**31: the walk decides)."""
    import numpy as np
    lane = np.arange(LANES, dtype=np.int64)[:, None]
    i = np.arange(nbytes + 4, dtype=np.int64)[None, :]
    sel = {"byte_id": np.int64(b), "thread_id": np.int64(t)}
    try:
        keep, cols = _held_arrays(defs, mn, operand, lane, i, sel, (LANES, nbytes + 4))
    except (Undefined, TooWide):
        return _held_by_point(defs, mn, operand, b, t, nbytes)
    table = np.stack([x[keep] for x in cols], axis=-1)
    return tuple(map(tuple, table.tolist()))


def _held_at_every_pair(defs: Mapping[str, S.Definition], mn: str, operand: str,
                        nbytes: int) -> dict[tuple[int, int], tuple[Holding, ...]] | None:
    """``_held`` at every selector pair (``byte_id`` < ``nbytes``, ``thread_id`` < 4) from one
    evaluation of each definition over (byte_id, thread_id, lane, byte) at once; None where
    arrays cannot say what the walk says at some pair (the caller asks ``_held`` pair by pair,
    which walks only where it must)."""
    import numpy as np
    lane = np.arange(LANES, dtype=np.int64)[None, None, :, None]
    i = np.arange(nbytes + 4, dtype=np.int64)[None, None, None, :]
    sel = {"byte_id": np.arange(nbytes, dtype=np.int64)[:, None, None, None],
           "thread_id": np.arange(4, dtype=np.int64)[None, :, None, None]}
    try:
        keep, cols = _held_arrays(defs, mn, operand, lane, i, sel,
                                  (nbytes, 4, LANES, nbytes + 4))
    except (Undefined, TooWide):
        return None
    return {(b, t): tuple(map(tuple, np.stack([x[b, t][keep[b, t]] for x in cols], axis=-1)
                                 .tolist()))
            for b in range(nbytes) for t in range(4)}


def _held_arrays(defs: Mapping[str, S.Definition], mn: str, operand: str, lane: Any, i: Any,
                 sel: Mapping[str, Any], shape: tuple[int, ...]) -> tuple[Any, list[Any]]:
    """(which points are held, [lane, byte, row, col] at each) over ``shape``: the holder,
    used, ``mn`` and block definitions evaluated once over the broadcast axes; Undefined or
    TooWide where arrays cannot say what the walk says."""
    import numpy as np
    holder = _definition_array(defs["holder"], {"%laneid": lane, **sel}, defs)
    env = {"%laneid": lane, "i": i, **sel}
    used = _definition_array(defs["used"], env, defs)
    m = program_array(_expr(defs[mn]), env, defs)
    k = program_array(_expr(defs["block"]), env, defs)
    keep = np.broadcast_to(holder, shape) & np.broadcast_to(used, shape)
    return keep, [np.broadcast_to(x, shape) for x in
                  ([lane, i, m, k] if operand == "A" else [lane, i, k, m])]


def _definition_array(d: S.Definition, env: Mapping[str, Any],
                      defs: Mapping[str, S.Definition]) -> Any:
    c = d.cases[0].cond
    if d.kind != "predicate" or c is None:
        raise Undefined(d.name)
    return holds_array(c, env, defs)


def _held_by_point(defs: Mapping[str, S.Definition], mn: str, operand: str, b: int, t: int,
                   nbytes: int) -> tuple[Holding, ...]:
    got: list[Holding] = []
    for lane in range(LANES):
        env = {"%laneid": lane, "byte_id": b, "thread_id": t}
        if not _definition_holds(defs["holder"], env, defs):
            continue
        for i in range(nbytes + 4):
            env = {"%laneid": lane, "i": i, "byte_id": b, "thread_id": t}
            if not _definition_holds(defs["used"], env, defs):
                continue
            m = program_value(_expr(defs[mn]), env, defs)
            k = program_value(_expr(defs["block"]), env, defs)
            got.append((lane, i, m, k) if operand == "A" else (lane, i, k, m))
    return tuple(got)


def _expr(d: S.Definition) -> S.Expr:
    e = d.cases[0].expr
    if e is None:
        raise Undefined(d.name)
    return e


def _definition_holds(d: S.Definition, env: Mapping[str, int],
                      defs: Mapping[str, S.Definition]) -> bool:
    c = d.cases[0].cond
    if d.kind != "predicate" or c is None:
        raise Undefined(d.name)
    return _holds(c, env, defs)


def scale_layouts(doc: ScaleDocument) -> tuple[ScaleLayout, ...]:
    """Every scale operand of every section of a document."""
    return tuple(scale_layout(sec, op, doc.name) for sec in doc.sections for op in sec.operands)


@dataclass(frozen=True)
class ScaleTables:
    """What the spec's three tables state, each fact with its line.

    ``shapes``: per ``.scale_vec`` N, the shapes of scale_A and scale_B (``("M", 2)``);
    ``forms``: legal (kind, element types, scale type, N); ``selectors``: per N, the legal
    (byte-id-a, thread-id-a, byte-id-b, thread-id-b) values.  A selector row of two lists is
    a row whose thread-id cells span the rows above it (the rendering merges them): its lists
    are the byte-id ones and its thread-id values the previous row's."""

    shapes: tuple[tuple[int, tuple[Any, Any], tuple[Any, Any], Span], ...] = ()
    forms: tuple[tuple[str, tuple[str, ...], str, int, Span], ...] = ()
    selectors: tuple[tuple[int, tuple[tuple[int, ...], ...], Span], ...] = ()


def spec_tables(doc: ScaleDocument) -> ScaleTables:
    shapes, forms, sels = [], [], []
    kind = ""
    last: tuple[tuple[int, ...], ...] | None = None
    for row in doc.rows:
        sp = row.source.span(0)
        if row.table == "shape":
            vec, a, b = row.values
            shapes.append((vec, a, b, sp))
        elif row.table == "combo":
            k, types, stype, vecs = row.values
            kind = k or kind  # a row without its .kind cell continues the one above
            for v in vecs:
                forms.append((kind, types, stype, v, sp))
        elif row.table == "selector":
            vec, lists = row.values
            if len(lists) == 4:
                last = lists
                sels.append((vec, lists, sp))
            elif len(lists) == 2 and last is not None:
                sels.append((vec, (lists[0], last[1], lists[1], last[3]), sp))
    return ScaleTables(tuple(shapes), tuple(forms), tuple(sels))
