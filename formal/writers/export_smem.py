"""The catalog's wgmma shared-memory layouts as export records, for the GPU runs of
``formal.execute.smem_runs`` (numpy only: they take layouts as data, never the prover).

Each record is one catalog layout (``wgmma.smem.K-major.128B.b16``) and the concrete layouts a
64-row operand (A of m64, B of n64) is run with: the canonical layout at ``m`` atoms along
M/N and one instruction's K slice, under three LBO/SBO choices -- packed densely, the other
order of the atoms or gaps between them, and (K-major, swizzled, where LBO is not used) a
junk LBO field -- each with its shape, stride, swizzle and the
descriptor's LBO and SBO in bytes.  K-major choices carry ``wide``: the same layout with its K
mode one atom (one 16c-byte row of the atom; without swizzle two core matrices) wider, the
planted "K slice too wide" edit.  A worked example, K-major, 128B, f16, dense:

    {"shape": [[8, 8], [8, 2]], "stride": [[64, 512], [1, 8]], "swizzle": [3, 4, 3],
     "lbo": 16, "sbo": 1024, "wide": {"shape": [[8, 8], [8, 10]], ...}}

(``lbo`` 16: the field the layout does not use holds the spec's "assumed 1").  ``map_hash``
is the hash of the catalog layout's addresses at the catalog's parameters, the name a run's
evidence gives the layout it confirms; ``stale_smem`` names each layout whose hash no
bit-exact run (and no mismatched planted edit) of the evidence carries any more.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..model.smem import (
    CHUNKS,
    K_SLICE_BYTES,
    SWIZZLE_CODES,
    TCGEN05_DESCRIPTOR,
    SmemInstance,
    at_params,
    descriptor_of,
    descriptor_values,
    names_in,
    smem_hash,
)

ROWS = 64  # rows of A (m64) and of B at n64


def _choices(inst: SmemInstance) -> list[dict[str, int]]:
    """Parameters (elements) of the 64-row operand: dense, the atoms in the other order, and
    with gaps; each a dict of T, m, k, LBO, SBO."""
    t, c, bits = 128 // inst.bits, CHUNKS[inst.mode], inst.bits
    k_elems = K_SLICE_BYTES * 8 // bits
    if inst.major == "K":
        m, k = ROWS // 8, k_elems // (2 * t)
        if inst.mode == "none":  # core matrices: 8T elements each
            return [{"T": t, "m": m, "k": k, "LBO": 8 * t, "SBO": 16 * t * k},
                    {"T": t, "m": m, "k": k, "LBO": 8 * t * m, "SBO": 8 * t},
                    {"T": t, "m": m, "k": k, "LBO": 8 * t, "SBO": 24 * t * k}]
        atom = 8 * c * t  # the third: dense, a junk LBO field (the layout does not use it)
        return [{"T": t, "m": m, "k": k, "LBO": 1, "SBO": atom},
                {"T": t, "m": m, "k": k, "LBO": 1, "SBO": 2 * atom},
                {"T": t, "m": m, "k": k, "LBO": 1, "SBO": atom, "lbo_field": 4096}]
    m, k = max(1, ROWS // (c * t)), max(1, k_elems // 8)
    atom = 8 * c * t
    if inst.mode == "none":  # SBO steps M/N, LBO steps K
        return [{"T": t, "m": m, "k": k, "SBO": atom, "LBO": atom * m},
                {"T": t, "m": m, "k": k, "SBO": atom * k, "LBO": atom},
                {"T": t, "m": m, "k": k, "SBO": atom, "LBO": atom * (m + 1)}]
    return [{"T": t, "m": m, "k": k, "LBO": atom, "SBO": atom * m},
            {"T": t, "m": m, "k": k, "LBO": atom * k, "SBO": atom},
            {"T": t, "m": m, "k": k, "LBO": 2 * atom, "SBO": 2 * atom * m}]


def _layout(inst: SmemInstance, p: dict[str, int]) -> dict[str, Any]:
    lay = at_params(inst.row.layout, p, inst.bits, inst.row.swizzle)
    sw = lay.swizzle
    return {"shape": _lists(lay.layout.shape), "stride": _lists(lay.layout.stride),
            "swizzle": [sw.bits, sw.base, sw.shift]}


def _lists(t: Any) -> Any:
    """Nested tuples as the lists JSON reads back (the record is the same before and after)."""
    return t if isinstance(t, int) else [_lists(x) for x in t]


def smem_record(inst: SmemInstance) -> dict[str, Any]:
    """The export record of one catalog layout (see the module's example)."""
    choices = []
    uses = names_in(inst.row.layout.stride)
    for p in _choices(inst):
        junk = p.pop("lbo_field", None)
        lay = _layout(inst, p)
        values = descriptor_values(SmemInstance(inst.family, inst.major, inst.mode, inst.bits,
                                                p, inst.layout, inst.row))
        ch: dict[str, Any] = {**lay, "params": p,
                              "lbo": next(v for n, v in values.items()
                                          if n.startswith("leading dimension")),
                              "sbo": values["stride dimension byte offset"]}
        if junk is not None:
            ch["lbo"] = junk
        if inst.major == "K":
            c = CHUNKS[inst.mode]
            wide = dict(p, k=p["k"] + max(1, c // 2))
            ch["wide"] = _layout(inst, wide)
        choices.append(ch)
    return {"id": inst.id, "instruction": f"{inst.family}.smem", "major": inst.major,
            "mode": inst.mode, "bits": inst.bits, "types": list(inst.types),
            "layout": inst.row.layout.text, "uses": sorted(uses), "map_hash": smem_hash(inst),
            "choices": choices}


def smem_records(instances: list[SmemInstance]) -> list[dict[str, Any]]:
    """The records of the wgmma layouts among ``instances`` (tcgen05's are not run here)."""
    return [smem_record(i) for i in instances if i.family == "wgmma"]


# ---- tcgen05.mma's operands (formal.execute.tcgen05_mma) -----------------------------------

TC_ROWS = 128  # rows of the largest operand a CTA holds (A of M = 128 or of a pair's 256)
TC_BITS = (32, 16, 8)  # the widths the plain kinds read: tf32, f16 / bf16, 8-bit
# the descriptor's fields the runner writes and the fake device reads, by short name
TC_FIELDS = {"start": "matrix start address", "lbo": "leading dimension",
             "sbo": "stride dimension", "swizzle": "swizzling mode"}


def tcgen05_smem_record(inst: SmemInstance) -> dict[str, Any]:
    """The record of one K-major tcgen05 catalog layout for the tcgen05.mma runs: its dense
    choice at ``TC_ROWS`` rows (a smaller operand takes its first rows: the atoms follow each
    other along M/N), the descriptor ``model.smem.descriptor_of`` gives it (start address 0),
    and the descriptor's field bits and swizzle codes, so the runner numpy-only writes a start
    address or a planted edit and a fake device reads the fields back.  A worked example,
    ``tcgen05.smem.K-major.128B.b16``: SBO 1024 (8 rows of 128 bytes), LBO 16 (unused: the
    spec's "assumed 1"), code 2 in bits 61-63, the constant 0b001 in bits 46-48:
    ``descriptor`` 0x4000404000010000."""
    p = dict(_choices(inst)[0], m=TC_ROWS // 8)
    at = SmemInstance(inst.family, inst.major, inst.mode, inst.bits, p, inst.layout, inst.row)
    values = descriptor_values(at)
    fields = {short: next([f.lo, f.hi] for f in TCGEN05_DESCRIPTOR if f.name.startswith(long))
              for short, long in TC_FIELDS.items()}
    choice = {**_layout(inst, p), "params": p,
              "lbo": next(v for n, v in values.items() if n.startswith("leading dimension")),
              "sbo": values["stride dimension byte offset"],
              "descriptor": f"0x{descriptor_of(at):016x}"}
    return {"id": inst.id, "instruction": f"{inst.family}.smem", "major": inst.major,
            "mode": inst.mode, "bits": inst.bits, "types": list(inst.types), "rows": TC_ROWS,
            "layout": inst.row.layout.text, "map_hash": smem_hash(inst), "choices": [choice],
            "descriptor_fields": fields, "swizzle_codes": dict(SWIZZLE_CODES["tcgen05"])}


def tcgen05_smem_records(instances: list[SmemInstance]) -> list[dict[str, Any]]:
    """The records of the K-major tcgen05 layouts of ``TC_BITS`` among ``instances``."""
    return [tcgen05_smem_record(i) for i in instances
            if i.family == "tcgen05" and i.major == "K" and i.bits in TC_BITS]


def catalog_tcgen05_smem_records() -> list[dict[str, Any]]:
    """The embedded catalog's K-major tcgen05 shared-memory layouts as export records (what
    ``formal.execute.tcgen05_mma`` lays A and B out by and builds descriptors from)."""
    return [r for r in catalog_smem_records() if r["instruction"] == "tcgen05.smem"]


def catalog_smem_records() -> list[dict[str, Any]]:
    """The embedded catalog's shared-memory layouts as export records: the 20 wgmma layouts
    ``formal.execute.smem_runs`` builds its descriptors and images from, then the 12 K-major
    tcgen05 layouts ``formal.execute.tcgen05_mma`` does (``catalog_tcgen05_smem_records``)."""
    from .. import catalog
    from ..model.smem import instances, read_smem
    text = (catalog.CATALOG_DIR / "smem" / "layouts.md").read_text(encoding="utf-8")
    canon = read_smem(text, "catalog/smem/layouts.md").canonical
    return smem_records(instances("wgmma", canon)) + \
        tcgen05_smem_records(instances("tcgen05", canon))


def stale_smem(evidence: Any, records: Sequence[Mapping[str, Any]], sm: int = 90) -> list[str]:
    """The wgmma shared-memory layouts among ``records`` that the evidence (a
    ``formal.prove.evidence.Evidence``) no longer confirms, one line each: no ``check`` run
    built from the layout's current ``map_hash`` (its ``layout_hashes["smem"]``) matched, or
    none of its planted edits mismatched.  Owed only where the device runs wgmma (sm_90) and
    once the evidence holds any shared-memory run (the first device run switches it on, as
    for wgmma.sp): a layout edited since then is named with the date of the last run."""
    runs = [r for r in evidence.runs if r.layout_hashes.get("smem")]
    if sm != 90 or not runs:
        return []
    last = max(r.file.date for r in runs)[:10]
    out = []
    for rec in records:
        if rec.get("instruction") != "wgmma.smem":
            continue
        h = str(rec.get("map_hash") or "")
        mine = [r for r in runs if r.layout_hashes["smem"] == h]
        checks = [r for r in mine if r.mode == "check"]
        if not checks:
            out.append(f"{rec['id']}: no hardware run of the current shared-memory layout "
                       f"(smem {h}; the layout changed since the runs of {last})")
        elif not any(r.result == "match" for r in checks):
            out.append(f"{rec['id']}: no hardware match for the current shared-memory layout "
                       f"(last run {checks[-1].result}; smem {h})")
        elif not any(r.mode == "experiment" and r.result == "mismatch" for r in mine):
            out.append(f"{rec['id']}: no planted edit of the current shared-memory layout "
                       f"mismatched on hardware (smem {h})")
    return out
