"""The prove stage's vocabulary: obligations, verdicts, results, and the options of a run.

A ``Verdict`` is one obligation's answer for one layout, e.g. ``Verdict("injective", "refuted",
"lanes 0 and 1 both hold (0, 0)", {"a": {...}, "b": {...}, "cell": [0, 0]})``; a ``Core`` is the
same answer before it is placed on a source line, so layouts with one map share it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..base.source import Finding, Span
from ..model.layout import Layout

OBLIGATIONS = ("cases", "in-range", "injective", "surjective", "register-budget",
               "element-list", "reference", "type-names", "sparse-chunks",
               "metadata-coverage", "selector-range", "hardware")

# Test-only hook: a function (query name, z3 formula) -> z3 formula applied to every query,
# so the tests can plant a wrong encoding and watch the cross-check catch it.
TEST_HOOKS: dict[str, Callable[[str, Any], Any]] = {}


@dataclass(frozen=True)
class Options:
    timeout_ms: int = 5000
    cross_check: bool = True
    evidence: Any = None  # formal.prove.evidence.Evidence | None
    disk_cache: bool = False  # Z3's verdicts kept on disk between runs (prove/cache.py)
    progress: Any = None  # a callable (done, total) the driver calls after each layout


@dataclass(frozen=True)
class Verdict:
    name: str
    status: str  # proved | refuted | unknown | error | not-applicable | unconfirmed (a warning)
    message: str = ""
    counterexample: Any = None
    span: Span | None = None
    severity: str = "error"
    method: str = ""
    note: str = ""  # the Core's note: decided by enumeration where Z3 timed out


@dataclass(frozen=True)
class LayoutResult:
    layout: Layout
    verdicts: tuple[Verdict, ...]
    findings: tuple[Finding, ...]

    def verdict(self, name: str) -> Verdict:
        for v in self.verdicts:
            if v.name == name:
                return v
        return Verdict(name, "not-applicable")

    @property
    def ok(self) -> bool:
        return all(v.status in ("proved", "not-applicable") or v.severity == "warning"
                   for v in self.verdicts)


@dataclass(frozen=True)
class Proof:
    results: tuple[LayoutResult, ...]
    findings: tuple[Finding, ...]
    internal_errors: int = 0
    seconds: dict[str, float] = field(default_factory=dict)
    # composes.RelationVerdict of each relation whose two layouts the model holds (Any:
    # composes imports this module)
    relations: tuple[Any, ...] = ()
    # smem.SmemResult of each shared-memory layout, example and table (Any: smem imports this)
    smem: tuple[Any, ...] = ()
    # block_scale.ScaleResult of each block-scale factor layout a document states
    scales: tuple[Any, ...] = ()
    # datapath.DataPathResult of each tcgen05.mma data-path layout a document states
    datapaths: tuple[Any, ...] = ()


class InternalError(Exception):
    """Z3 and enumeration disagree, or a Z3 witness does not replay: a bug of ptxlayout (in the
    prover, the diff or the audit), never a verdict."""



# ---- core results (cacheable across layouts with the same map) -----------------------------------


@dataclass(frozen=True)
class Core:
    status: str
    message: str = ""
    cex: Any = None
    where: tuple[str, int] | None = None  # (formula name, case index) the fault is in
    method: str = "z3+enumeration"
    cases: tuple[int, ...] = ()  # cases of where's formula to name by their source lines
    # "decided by enumeration; Z3 timed out after 0.001 s": Z3 gave no answer, and the
    # exhaustive enumeration of the finite map, a proof on its own, decided
    note: str = ""
