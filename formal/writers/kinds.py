"""Every kind of finding, once: its one-line rule, and picking findings by kind as ruff does.

A finding's ``kind`` names what was checked: an obligation that was refuted (``injective``),
or a problem with the text (``parse``, ``punctuation``).  ``KINDS`` maps each kind to the rule
it enforces; the SARIF writer takes its rules from here and ``--select`` / ``--ignore`` check
their prefixes against it.  A tiny run, findings ``injective``, ``in-range`` and
``punctuation``::

    --select in          ->  injective, in-range        (a prefix picks every kind it starts)
    --ignore punct       ->  injective, in-range
    --select injective --ignore inj  ->  nothing        (ignore wins, as in ruff)
    --select injectve    ->  a usage error: "unknown finding kind 'injectve'; did you mean
                             injective?"

``helpUri`` of a rule points at its anchor in ``docs/obligations.md`` (``#kind-injective``),
or in ``docs/audit.md`` for the audit's rules; a test checks that every anchor exists.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TypeVar

from ..base.options import picked, unknown_prefixes
from ..base.source import Finding
from ..prove.block_scale import SCALE_OBLIGATIONS
from ..prove.smem import SMEM_OBLIGATIONS
from ..prove.verdicts import OBLIGATIONS, Proof

DOCS_URI = "https://github.com/ptxlayout/ptxlayout/blob/main/docs/"

_OBLIGATION_TEXT = {
    "cases": "The cases of a formula must cover every element exactly once",
    "in-range": "Every (lane, element) must map inside the tile",
    "injective": "No two (lane, element) pairs may share a cell",
    "surjective": "Every cell of the tile must be held",
    "register-budget": "Registers x elements per register must match the tile",
    "element-list": "The element list must be x0 .. x(n-1)",
    "reference": "A 'same as' reference must resolve to a compatible layout",
    "type-names": "Type names must be real and legal for the operand",
    "sparse-chunks": "Sparse A must hold whole chunks with the stated non-zeros",
    "metadata-coverage": "Metadata must describe every (row, chunk, slot) once",
    "selector-range": "Metadata lanes per group must imply the selector range",
    "hardware": "The map must match the GPU",
    "exact-layout": "A shared-memory layout must equal its stated (shape):(stride) form",
    "in-atom": "A shared-memory layout must stay inside its swizzle atom",
    "swizzle": "A swizzle must permute the addresses of its atom",
    "atom-shape": "A swizzle atom's shape must match its stated size",
    "definitions": "Every name of a shared-memory layout must be defined",
    "encoding": "A descriptor's field encodings must match the layout",
    "field-fit": "Every descriptor field must fit its bits",
    "descriptor": "The descriptor must address the layout's every element",
    "tma-swizzle": "The TMA swizzle mode must equal the layout's swizzle",
    "scale-coverage": "Scale factors must cover every block of the matrix once",
    "tile-shape": "The scale-factor tile must have the stated shape",
    "quad-locality": "The lanes holding a scale factor must sit in the quad of its values",
}

_TEXT_KINDS = {
    "parse": "The text must be readable",
    "unreadable": "A sentence that could not be read names what was not checked",
    "punctuation": "Element lists should be punctuated consistently",
    "wording": "The prose should say what the table says",
    "model": "Formulas must define every needed name",
    "input": "The document must be readable text",
    "limit": "Inputs must stay within limits",
    "internal": "Z3 and enumeration must agree",
    "unknown": "Every obligation must be decided",
    "unchecked": "Every layout must be checked",
    "element-name": "Conditions must name this operand's elements",
    "guard": "A condition must admit only the elements a lane holds",
    "composes": "A producer's layout must be the consumer's, moved by the arrangement",
    "figure-only": "A layout the spec gives only as a figure must be in the catalog",
    "unattached": "Every formula block must belong to a layout",
    "figure": "A figure must show the block it stands under",
    "catalog": "Every variant a section admits must have its layout stated",
    "move-prose": "The prose of ldmatrix, stmatrix and movmatrix must be readable and consistent",
    "tmem": "The tcgen05 data-path tables must be readable and consistent",
    "datapath": "A tcgen05.mma data-path layout must hold D once, each warp in its own lanes",
    "packing": "A packing format must keep every element in its own bits of the unit",
    "smem-syntax": "A shared-memory layout must be written in CuTe notation",
    "block-scale": "A block-scaled mma section must be readable and consistent",
    "block-scale-table": "A block-scale table must be readable",
    "block-scale-caption": "A block-scale figure's caption must name its operand",
    "block-scale-fit": "A block-scale layout must fit its scale matrix",
    "sparse-metadata": "A tcgen05.mma.sp metadata section must be readable",
    "lane-partition": "A row's sparse metadata must sit in its row's 32-lane partition",
    "tensor-copy": "A tcgen05.cp section must be readable",
    "copy-coverage": "Every piece of a tcgen05.cp source must land on its places, once a word",
    "warp-pairs": "A tcgen05.cp multicast must reach the warps its qualifier pairs",
    "copy-shape": "A tcgen05.cp form must move its shape's rows and bits",
    "decompression": "A tcgen05.cp packed format's elements and padding must fill its group",
    "header": "A header must be readable",
    "cute-syntax": "A CuTe atom must be written in the subset the audit reads",
    "cute-input": "A CuTe header must be readable",
}

# kind -> its rule, one line
KINDS: dict[str, str] = {
    **{k: _OBLIGATION_TEXT.get(k, k) for k in (*OBLIGATIONS, *SMEM_OBLIGATIONS,
                                               *SCALE_OBLIGATIONS)},
    **_TEXT_KINDS,
}

# the audit's own rules (formal.audit: an operand's verdict against the spec)
AUDIT_RULES = {
    "audit-differs": "The library's layout must equal the spec's",
    "audit-unreadable": "The library's layout must be readable",
    "audit-not-in-spec": "The library's instruction is one the spec does not state",
}


def anchor(kind: str) -> str:
    """The id of a kind's anchor in the docs (``kind-injective``)."""
    return f"kind-{kind}"


def help_uri(kind: str) -> str:
    """Where a rule is explained: docs/audit.md for the audit's, docs/obligations.md else."""
    page = "audit.md" if kind in AUDIT_RULES else "obligations.md"
    return f"{DOCS_URI}{page}#{anchor(kind)}"


def rule_text(kind: str) -> str:
    return KINDS.get(kind) or AUDIT_RULES.get(kind) or kind


def unknown_kinds(prefixes: Iterable[str]) -> list[str]:
    """One line per prefix that starts no known kind, with the closest kinds."""
    return unknown_prefixes(prefixes, KINDS)


F = TypeVar("F", bound=Finding)


def select_findings(findings: Sequence[F], select: Sequence[str] = (),
                    ignore: Sequence[str] = ()) -> list[F]:
    """The findings whose kind starts with a ``select`` prefix (all, when none is given) and
    with no ``ignore`` prefix."""
    return [f for f in findings if picked(f.kind, select, ignore)]


def allowing_unknown(proof: Proof) -> Proof:
    """``--allow-unknown``: an undecided obligation (kind ``unknown``) is a warning, so that
    the report's count of errors and the exit status say the same (it printed '314 errors'
    and exited 0)."""
    return replace(proof, findings=tuple(
        replace(f, severity="warning") if f.kind == "unknown" and f.severity == "error" else f
        for f in proof.findings))


def kept_kinds(proof: Proof, select: Sequence[str] = (),
               ignore: Sequence[str] = ()) -> Proof:
    """The proof with only the findings ``select_findings`` keeps (the same proof when
    neither is given)."""
    if not select and not ignore:
        return proof
    return replace(proof, findings=tuple(select_findings(proof.findings, select, ignore)))
