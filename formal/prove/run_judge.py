"""The one way a layout's ``hardware`` obligation is judged from ``tcgen05-mma`` runs: the runs
of the rows that read the layout sorted into what they say about it.

A layout is read by some rows of ``ptxlayout gpu``'s tcgen05-mma family (its ``tasks``); each
run names the map it used by a hash (``layout_hashes[key]``); some planted edits are owed on
those rows (``owed``: (row, plant), the row None where any of the tasks may carry it).  A
worked example, a data path read by two rows, run on a B200 with hash ``h``::

    row 1 check match, row 2 check match, plant p mismatch   -> proved
    row 1 check match, row 2 check mismatch (cell D[3][0])   -> refuted, by row 2
    row 1 check match (another hash)                         -> stale: the layout changed
    row 1 check match, row 2 no run                          -> missing row 2
    row 1, row 2 match, plant p matched too                  -> blind: p cannot tell maps apart

``judge_runs`` does that sorting once (``Judged``); each judge -- the data paths'
(``prove.datapath.hardware``), the sparse metadata's (``prove.tc_meta.meta_hardware``), the
block-scale factors' (``prove.tc_scale.scale_hardware``) -- words the verdict in its own
terms with the phrases here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

BLIND = "matched too: the run cannot tell this map from a wrong one"


@dataclass(frozen=True)
class Judged:
    """The runs of a layout's rows on an sm_100 device, sorted (see the module docstring)."""

    tasks: tuple[str, ...]
    runs: tuple[Any, ...]  # every finished run of the tasks (match | mismatch)
    mine: tuple[Any, ...]  # those that used this map
    other: tuple[Any, ...]  # those that used another map (a hash, not this one)
    checks: tuple[Any, ...]  # mine's checks
    bad: Any  # the first of mine's checks that mismatched (None: none)
    matched: frozenset[str]  # the tasks with a check of this map that matched
    missing: tuple[str, ...]  # the tasks without
    blind: tuple[tuple[str | None, str], ...]  # owed plants that did not mismatch
    ran: frozenset[tuple[str | None, str]]  # the owed plants that ran
    hash: str = ""  # the map's hash, as compared with the runs' ("": no run to compare)
    owed: tuple[tuple[str | None, str], ...] = ()  # the owed plants (none listed: no run)

    @property
    def status(self) -> str:
        """refuted | none (no run of this map) | missing | blind | proved."""
        if self.bad is not None:
            return "refuted"
        if not self.mine:
            return "none"
        return "missing" if self.missing else "blind" if self.blind else "proved"

    @property
    def trials(self) -> int:
        return sum(r.trials for r in self.checks if r.result == "match")

    def missing_message(self, noun: str, more: bool = False) -> str:
        """``3 of its 4 rows matched on <device, date>; no bit-exact run of <row>``."""
        extra = len(self.missing) - 1
        return (f"{len(self.matched)} of its {len(self.tasks)} {noun} matched on "
                f"{self.mine[-1].file.where}; no bit-exact run of {self.missing[0]}"
                + (f" and {extra} more" if more and extra > 0 else ""))

    def blind_message(self, noun: str) -> str:
        """``every row matched, but the planted edit <p> [of <row>] did not run | matched too``."""
        key, plant = self.blind[0]
        return (f"every {noun} matched, but the planted edit {plant} "
                + (f"of {key} " if key else "")
                + ("did not run" if (key, plant) not in self.ran else BLIND))


def judge_runs(evidence: Any, tasks: Sequence[str], key: str, h: str | Callable[[], str],
               owed: Sequence[tuple[str | None, str]]
               | Callable[[], Sequence[tuple[str | None, str]]]) -> Judged:
    """The finished sm_100 runs of ``tasks`` in ``evidence`` (an ``EvidenceSet``) sorted by
    whether they used the map of hash ``h`` (``layout_hashes[key]``), and the ``owed`` planted
    edits (row or None, plant) that did not mismatch.  ``h`` and ``owed`` may be functions
    (the hash written from the layout, the plants listed from ``ptxlayout gpu``'s tasks):
    each is called only where there is a run to judge (with none, no run used this map or
    another and no plant ran, whatever they are: the verdict is 'no device'), and
    ``Judged.hash`` and ``Judged.owed`` hold their answers."""
    runs = tuple(r for r in evidence.runs_of(list(tasks))
                 if r.file.sm >= 100 and r.result in ("match", "mismatch")) if tasks else ()
    if callable(h):
        h = h() if runs else ""
    if callable(owed):
        owed = owed() if runs else ()
    mine = tuple(r for r in runs if r.layout_hashes.get(key) == h)
    other = tuple(r for r in runs if r.layout_hashes.get(key) not in (None, h))
    checks = tuple(r for r in mine if r.mode == "check")
    bad = next((r for r in checks if r.result == "mismatch"), None)
    matched = frozenset(r.key for r in checks if r.result == "match")
    plants: dict[tuple[str | None, str], str] = {}
    for r in mine:
        if r.mode == "experiment":
            plants[(r.key, r.plant)] = plants[(None, r.plant)] = r.result
    blind = tuple(o for o in owed if plants.get(o) != "mismatch")
    return Judged(tuple(tasks), runs, mine, other, checks, bad, matched,
                  tuple(k for k in tasks if k not in matched), blind,
                  frozenset(o for o in owed if o in plants), h, tuple(owed))


__all__ = ["BLIND", "Judged", "judge_runs"]
