"""The records the shared-memory reader (``formal.parse.smem``) makes, as written: a layout's
entries with their names (``2T`` is ``SymEntry(2, "T")``), a table row, an example's
parameters and encodings, a descriptor's bit field -- each with its place.  A worked example:
the Markdown row ``| SBO | 32\\*sizeof(tf32) |`` is ``Param("SBO", Value(((32, ""), (1,
"tf32"))), span)``, 32 times sizeof(tf32) bytes, which ``Value.bytes({"tf32": 4})`` makes 128;
the model (``formal.model.smem``) evaluates them, never this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..base.source import Finding, Span

SymTuple = Any  # SymEntry | tuple[SymTuple, ...]

MODES = ("none", "32B", "64B", "128B")
PARAMS = ("T", "m", "k", "LBO", "SBO")


@dataclass(frozen=True)
class SymEntry:
    """One entry of a layout as written: ``8`` (scale 8, no name), ``T``, ``2T``, ``SBO``."""

    scale: int
    name: str = ""
    explicit: bool = False  # the number written even when it is 1 (``1T``)

    def __str__(self) -> str:
        if not self.name:
            return str(self.scale)
        return self.name if self.scale == 1 and not self.explicit else f"{self.scale}{self.name}"


@dataclass(frozen=True)
class LayoutText:
    """``Swizzle<B,M,S> o shape:stride`` as written (the swizzle may be absent)."""

    shape: SymTuple
    stride: SymTuple
    swizzle: tuple[int, int, int] | None
    span: Span
    text: str


@dataclass(frozen=True)
class AtomRow:
    mode: str  # none | 32B | 64B | 128B
    major: str  # K | MN
    dims: tuple[int, int]  # MN x K, the leading dimension in 128-bit elements
    span: Span


@dataclass(frozen=True)
class CanonicalRow:
    major: str
    mode: str
    layout: LayoutText
    swizzle: tuple[int, int, int]
    swizzle_span: Span


@dataclass(frozen=True)
class Value:
    """A product of numbers and ``sizeof(type)`` (bytes), or not applicable (``factors=None``)."""

    factors: tuple[tuple[int, str], ...] | None  # (number, "") or (1, type name)

    def bytes(self, sizes: dict[str, int]) -> int | None:
        if self.factors is None:
            return None
        out = 1
        for n, t in self.factors:
            out *= sizes[t] if t else n
        return out


@dataclass(frozen=True)
class Param:
    name: str
    value: Value
    span: Span


@dataclass(frozen=True)
class Encoding:
    name: str  # LBO | SBO
    kind: str  # shifted | assumed
    shift: int
    stated: int
    span: Span


@dataclass(frozen=True)
class Example:
    major: str
    mode: str
    type: str
    span: Span
    exact: LayoutText | None = None
    canonical: LayoutText | None = None
    params: tuple[Param, ...] = ()
    encodings: tuple[Encoding, ...] = ()
    lbo_mode: str = ""  # tcgen05's examples: "relative" (an offset) or "absolute" (an address)


@dataclass(frozen=True)
class FieldRow:
    family: str  # wgmma | tcgen05
    lo: int
    hi: int
    size: int
    description: str
    constant: str  # the fixed constant as written ("0b001"), or ""
    span: Span


@dataclass(frozen=True)
class OffsetDefinition:
    """What LBO or SBO is, as a definition table says it: the step from the first ``count``
    rows (M/N) or columns (K) to the next, counted in 128-bit units along the leading
    dimension; ``unit`` is "unused" where the text says the offset is not used."""

    quantity: str  # LBO | SBO
    major: str  # K | MN
    swizzled: bool | None  # None: the clause holds for every mode
    count: int | str  # a number, or "c" for (swizzle-byte-size/16)
    unit: str  # row | column | unused
    span: Span


@dataclass(frozen=True)
class KSliceRow:
    """The K one instruction reads, by element type: ``wgmma | f16 | 16 | 16 | 32`` is 16
    elements of 16 bits dense and 32 sparse (None: the type has no sparse form)."""

    family: str  # wgmma | tcgen05
    type: str
    bits: int
    k: int
    sparse_k: int | None
    span: Span


@dataclass(frozen=True)
class SmemText:
    document: str
    atoms: tuple[AtomRow, ...]
    canonical: tuple[CanonicalRow, ...]
    examples: tuple[Example, ...]
    fields: tuple[FieldRow, ...]
    findings: tuple[Finding, ...]
    definitions: tuple[OffsetDefinition, ...] = ()
    mentions: tuple[str, ...] = ()  # the instruction families the text names, sorted
    k_slices: tuple[KSliceRow, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.atoms or self.canonical or self.examples or self.fields
                    or self.definitions or self.k_slices)


@dataclass(frozen=True)
class LineFacts:
    """What a line is about, as ``grammar/smem.lark``'s ``smem_line`` reads it: a heading (ends
    every table), the tables its phrases name, an ``Exact layout :`` / ``Canonical Layout :``
    label, and the modes, majorness words, example type and first comma it holds, each at its
    0-based column.  ``| MN- major | 32B Swizzling | ...`` -> majors ((2, "MN", True),),
    modes ((14, "32B"),)."""

    heading: bool = False
    tables: tuple[str, ...] = ()  # atoms | canonical | fields-wgmma | fields-tcgen05 | LBO | SBO
    label: str = ""  # exact | canonical
    modes: tuple[tuple[int, str], ...] = ()
    majors: tuple[tuple[int, str, bool], ...] = ()  # (column, K | MN, written as "-major")
    type: str = ""
    comma: int = -1
    encoding: tuple[str, int] | None = None  # "Encoding of LBO in descriptor": LBO, its end
    families: tuple[str, ...] = ()  # the instruction families it names (wgmma, tcgen05)

    @property
    def counts(self) -> bool:
        """Whether the line can start something outside a table."""
        return bool(self.heading or self.tables or self.label or self.majors)

    def mode_in(self, lo: int, hi: int) -> str | None:
        """The first mode at a column in [lo, hi)."""
        return next((m for c, m in self.modes if lo <= c < hi), None)

    def major_in(self, lo: int, hi: int, worded: bool = False) -> str | None:
        """The first majorness at a column in [lo, hi) (``worded``: only "K-major" forms)."""
        return next((m for c, m, w in self.majors if lo <= c < hi and (w or not worded)), None)
