"""The ``tcgen05-mma`` family of ``ptxlayout gpu``: A and B in shared memory by a catalog
layout, the descriptors from it, an instruction descriptor, D read back through a data path.

A worked example, ``tcgen05.mma.m128n64k16.kind::f16.f32.f16.f16.layoutD`` under the
catalog's ``tcgen05.smem.K-major.128B.b16``: random exact A (128 x 16) and B (16 x 64)
(``cpu.draw``'s pools, so D = A @ B is exact in f32) are laid out by the record's dense choice
-- A from byte 0, B (its 64 rows of N) from byte 16384 -- into one shared-memory image; the
descriptors are the record's ``0x4000404000010000`` with the start address field 0 and
16384 >> 4 = 1024; the instruction descriptor is ``idesc.encode_idesc`` of (kind::f16, M 128,
N 64, f16, f16 -> f32, K-major) = ``0x08100010``.  The kernel
(``ptx_tcgen05.datapath_kernel``) copies the image into shared memory, issues the mma and
has warp w read lanes 32w..32w+31, columns 0-63 back with ``tcgen05.ld.32x32b``: an image
``(CTAs, 128 lanes, columns)`` of words.  Layout D's record says lane 40, column 3 holds
D[40][3]; every cell is compared bit for bit (``tc_differences``), the first that differs
named with both words.

A pair (``cta_group::2``: Layouts A and B) splits A by rows and B by columns between its two
CTAs: CTA c's image holds rows c*M/2.. of A and columns c*N/2.. of B, under the same
descriptors.  The tasks (``tc_mma_tasks``): a ``check`` per row of
``base.matrix_variants.TCGEN05_MMA_VARIANTS`` (each dense data path at N 64 and 128, each
plain kind), the swizzle mode rotating none, 32B, 64B, 128B over them; and per data path,
two planted edits that must mismatch: ``other-datapath`` (D read back by another layout's
record, one whose cells differ) and ``lbo-sbo-swapped`` (the two descriptor fields written
into each other).  On a device that is not sm_100a each row is assembled for sm_100a
(``compiled-only``: not run, and the log says it needs sm_100a).

The block-scaled rows (``TCGEN05_MMA_SCALE_VARIANTS``, ``scale_row_tasks``) add the factors
in tensor memory and their planted edits (``formal.execute.tcgen05_scale``); their 4-bit
operands lie two a byte, so their images are the 8-bit layout's bytes (``_stored``).

``FakeTcgen05Device`` runs a launch from its own truth -- it decodes the instruction
descriptor and the two smem descriptors from the kernel's parameters, reads A and B out of
the image by the descriptors' fields (``smem.SmemLayout``), multiplies, writes D into tensor
memory by the truth's data-path record, and does the kernel's read-back -- so the harness is
tested without a Blackwell GPU; planted truths (warps 1 and 2 swapped, the swizzle read the
other way) must be caught, with the cell.  ``formal.execute.tcgen05_run`` runs a task on a
device (assembled where it is not sm_100a, this fake, or CuPy).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..base.matrix_variants import (
    TCGEN05_MMA_SCALE_VARIANTS,
    TCGEN05_MMA_SP_VARIANTS,
    TCGEN05_MMA_VARIANTS,
    datapath_row,
    issued_ws,
    variant,
)
from ..base.variants import TYPE_BITS, Variant, runs_on, selects
from . import cpu, numbers
from .datapath import DATAPATH_INSTRUCTION, DataPathError, DataPathMap, datapath_map
from .idesc import SCALE_CODES, decode_idesc, encode_idesc, idesc_for, idesc_types
from .ptx_tcgen05 import Tc05Kernel, datapath_kernel, scale_kernel
from .runs import Job, Run, Task
from .smem import SmemLayout, element_bytes_image, image_codes
from .smem_runs import CatalogSmem
from .tcgen05_scale import (
    B_PLANTS,
    PAIR_PLANTS,
    SCALE_PLANTS,
    device_product,
    draw_factors,
    find_tc_scale,
    pack_nibbles,
    row_scales,
    scale_view,
    scaled_product,
    tmem_scale_words,
    unpack_nibbles,
    wrong_id,
)
from .tcgen05_sp import (
    META_COLUMNS,
    SP_PLANTS,
    dense_a,
    draw_sparse,
    find_meta,
    meta_words,
    read_indices,
    row_meta,
    sparse,
)

TC_SMEM = "tcgen05.smem"
MODES = ("none", "32B", "64B", "128B")
SP_MODES = ("64B", "128B")  # B of a sparse row: 64 bytes of K inside the atom (``sparse_k``)
PLANTS = ("other-datapath", "lbo-sbo-swapped")
TARGET = "sm_100a"
UNWRITTEN = 0xDEADBEEF  # a word no kernel wrote (``devices.UNWRITTEN``'s value)


class LaunchError(RuntimeError):
    """The fake device cannot execute a launch (no truth for it, a code it does not read)."""


def smem_id(v: Variant, mode: str) -> str:
    """The catalog layout of a row's A and B (packed 4-bit elements: the 8-bit one's bytes)."""
    return f"{TC_SMEM}.K-major.{mode}.b{max(8, TYPE_BITS[v.a])}"


def scaled(v: Variant) -> bool:
    """A block-scaled row (``TCGEN05_MMA_SCALE_VARIANTS``)."""
    return bool(v.scale) and bool(v.datapath)


def _stored(t: str, k: int) -> tuple[str, int]:
    """(the type, K) a row of ``k`` elements of ``t`` is stored as in shared memory: 4-bit
    elements two a byte (``tcgen05_scale.pack_nibbles``), as ``k / 2`` bytes."""
    return ("u8", k // 2) if TYPE_BITS[t] == 4 else (t, k)


def tc_mma_tasks(job: Job, sm: int) -> list[Task]:
    """The family's tasks (see the module docstring); ``compile`` on a device that is not
    sm_100a, one per row."""
    rows = [v for v in TCGEN05_MMA_VARIANTS if selects(job.only, v.key)]
    sp_rows = [v for v in TCGEN05_MMA_SP_VARIANTS if selects(job.only, v.key)]
    sc_rows = [v for v in TCGEN05_MMA_SCALE_VARIANTS if selects(job.only, v.key)]
    if not rows + sp_rows + sc_rows or not runs_on((rows + sp_rows + sc_rows)[0], sm):
        return [Task(v.key, "compile") for v in rows + sp_rows + sc_rows]
    # the modes rotate over the rows and, a step further each (layout, N), over the kinds:
    # every kind's element width meets every mode
    out = [Task(v.key, "check", catalog=smem_id(v, MODES[(i + i // len(MODES)) % len(MODES)]))
           for i, v in enumerate(rows)]
    if job.experiments:
        firsts: dict[str, Variant] = {}
        for v in rows:
            if v.kind == "f16":
                firsts.setdefault(v.datapath, v)
        out += [Task(v.key, "experiment", plant=p, expect="mismatch",
                     catalog=smem_id(v, "none" if p == "lbo-sbo-swapped" else "128B"))
                for v in firsts.values() for p in PLANTS]
    # .sp: the modes rotate the same way; a plant for each data path's first f16 row
    out += [Task(v.key, "check", catalog=smem_id(v, SP_MODES[i % len(SP_MODES)]))
            for i, v in enumerate(sp_rows)]
    if job.experiments:
        firsts_sp: dict[tuple[str, bool], Variant] = {}
        for v in sp_rows:
            if v.kind == "f16":
                firsts_sp.setdefault((v.datapath, issued_ws(v)), v)
        out += [Task(v.key, "experiment", plant=p, expect="mismatch", catalog=smem_id(v, "128B"))
                for v in firsts_sp.values() for p in SP_PLANTS]
    return out + scale_row_tasks(sc_rows, job.experiments)


def scale_form(v: Variant) -> tuple[str, str, int, str]:
    """A block-scaled row's form: (data path, kind, .scale_vec, scale type)."""
    return (v.datapath, v.kind, v.scale_vec, v.scale)


def scale_row_tasks(rows: Sequence[Variant], experiments: bool = True) -> list[Task]:
    """The block-scaled rows' tasks: a check each (the modes rotating), and on each form's
    first row the planted edits (``tcgen05_scale.SCALE_PLANTS``; ``scale-id-wrong`` only
    where the form has another legal scale_A ID; a pair's also ``PAIR_PLANTS``)."""
    out = [Task(v.key, "check", catalog=smem_id(v, MODES[i % len(MODES)]))
           for i, v in enumerate(rows)]
    if experiments:
        firsts: dict[tuple[str, str, int, str], Variant] = {}
        for v in rows:
            firsts.setdefault(scale_form(v), v)
        out += [Task(v.key, "experiment", plant=p, expect="mismatch", catalog=smem_id(v, "128B"))
                for v in firsts.values()
                for p in SCALE_PLANTS + (PAIR_PLANTS if split_rows(v)[0] > 1 else ())
                if p != "scale-id-wrong" or v.scale_vec < 4]
    return out


# ---- the launch: its parameters, and the kernel ---------------------------------------------


@dataclass(frozen=True)
class Launch:
    """What one launch passes: the kernel, ``idesc``, the two smem descriptors and the
    shared-memory image of each CTA (CTAs, bytes)."""

    kernel: Tc05Kernel
    idesc: int
    adesc: int
    bdesc: int
    smem: np.ndarray
    meta: np.ndarray | None = None  # .sp: (CTAs, 128 lanes, META_COLUMNS) words
    # .block_scale: (CTAs x 128 lanes, scale_A's + scale_B's columns) words (``tcgen05_scale``)
    scales: np.ndarray | None = None


def _round(x: int, to: int) -> int:
    return (x + to - 1) // to * to


def _field(word: int, span: Sequence[int]) -> int:
    lo, hi = int(span[0]), int(span[1])
    return (word >> lo) & ((1 << (hi - lo + 1)) - 1)


def _set_field(word: int, span: Sequence[int], value: int) -> int:
    lo, hi = int(span[0]), int(span[1])
    mask = ((1 << (hi - lo + 1)) - 1) << lo
    return (word & ~mask) | ((value << lo) & mask)


@dataclass(frozen=True)
class Operands:
    """One task's data: A (M x K) and B (K x N) codes, D's words (M x N), and the launch."""

    a: np.ndarray
    b: np.ndarray
    d_words: np.ndarray
    launch: Launch


def split_rows(v: Variant) -> tuple[int, int, int]:
    """(CTAs, rows of A a CTA holds, rows of B -- columns of N -- a CTA holds)."""
    g = datapath_row(v.datapath)[2]
    return g, v.dims.m // g, v.n // g


def d_words(v: Variant, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """D = A @ B of codes, as the accumulator's words (f32 or s32 bits)."""
    d = numbers.decode(v.a, a).astype(np.float64) @ numbers.decode(v.b, b).astype(np.float64)
    if v.d == "s32":
        return d.astype(np.int64).astype(np.int32).view(np.uint32)
    return d.astype(np.float32).view(np.uint32)


def image_plan(v: Variant, rec: Mapping[str, Any]) \
        -> tuple[CatalogSmem, int, int, int, CatalogSmem]:
    """(A's layout, A's bytes, B's first byte, the image's bytes, B's layout) of a CTA's
    image of row ``v`` under ``rec``'s choice: A from byte 0, B from the next 1024-byte
    boundary (a swizzle atom's), the whole rounded to 1024.  A sparse row's B spans twice
    the K of the record's layout: its K mode taken on inside the swizzle atom (``sparse_k``)."""
    _g, rows_a, rows_b = split_rows(v)
    ch = rec["choices"][0]
    lay = CatalogSmem(ch["shape"], ch["stride"], tuple(ch["swizzle"]), "K")
    lay_b = sparse_k(ch) if sparse(v) else lay
    t, k = _stored(v.a, v.k)
    bits = TYPE_BITS[t]
    a_span = _round(lay.extent(rows_a, k // 2 if sparse(v) else k, bits), 16)
    b_off = _round(a_span, 1024)
    return (lay, a_span, b_off,
            _round(b_off + _round(lay_b.extent(rows_b, k, bits), 16), 1024), lay_b)


def sparse_k(ch: Mapping[str, Any]) -> CatalogSmem:
    """A K-major swizzled layout ``((8, m), (T, 2)) : ((s, SBO), (1, T))`` with its K mode
    doubled, ``(T, 4) : (1, T)``: 64 bytes of K a row inside the swizzle atom (64B and 128B
    modes), under the same descriptor; ValueError for a mode whose atom is narrower."""
    (mn, (t, kk)), (mn_s, (one, step)) = ch["shape"], ch["stride"]
    if one != 1 or step != t or ch["swizzle"][0] < 2:
        raise ValueError("B of a sparse row needs 64 bytes of K inside a swizzle atom "
                         "(the 64B and 128B modes)")
    return CatalogSmem([mn, [t, 2 * kk]], [mn_s, [1, t]], tuple(ch["swizzle"]), "K")


def run_kernels(records: Sequence[Mapping[str, Any]]) -> list[Tc05Kernel]:
    """The kernel of each row's check as a Blackwell run makes it (its data path's read-back,
    its image's size): what ``ptxlayout ptx --check`` assembles as ``tcgen05.mma.runs``.
    Rows that differ only in the selector (an idesc field) have one kernel."""
    out: dict[str, Tc05Kernel] = {}
    for t in tc_mma_tasks(Job(records), 100):
        v, rec = variant(t.key), tc_smem_record(records, t.catalog)
        if t.mode == "check" and rec is not None:
            k = kernel_of(v, datapath_map(records, v.datapath, v.n), image_plan(v, rec)[3],
                          records)
            if k.name in out and out[k.name] != k:  # another image size: its own entry
                k = replace(k, name=f"{k.name}_{k.smem_bytes}")
            out.setdefault(k.name, k)
    return list(out.values())


def tc_operands(v: Variant, m: DataPathMap, rec: Mapping[str, Any], rng: np.random.Generator,
                plant: str = "", meta: Mapping[str, Any] | None = None) -> Operands:
    """Random exact A and B laid out by ``rec``'s choice in each CTA's image, the descriptors
    from the record (``plant`` lbo-sbo-swapped: the two fields written into each other), the
    instruction descriptor, and the kernel that reads D back by ``m``.  A sparse row
    (``tcgen05_sp``): A compressed in the image, the metadata placed by ``meta`` at the
    row's selector (``plant`` meta-chunks-swapped: two chunks' fields exchanged); ``a`` is
    then the dense A the product is of."""
    g, rows_a, rows_b = split_rows(v)
    k = v.k
    meta_img = None
    if sparse(v):
        assert meta is not None
        a_img, units = draw_sparse(rng, v)
        a = dense_a(v.kind, a_img, units, k)
        meta_img = meta_words(meta, v.selector, units, rng, plant)[None]
    else:
        a = a_img = cpu.draw(rng, v.a, "A", v, (v.dims.m, k))
    b = cpu.draw(rng, v.b, "B", v, (k, v.n))
    ch = rec["choices"][0]
    lay, a_span, b_off, size, lay_b = image_plan(v, rec)
    img = np.zeros((g, size), dtype=np.uint8)
    bt = np.swapaxes(b, 0, 1)  # N rows of K: B is K-major too
    for c in range(g):
        img[c, :a_span] = _image(a_img[c * rows_a:(c + 1) * rows_a], v.a, lay, a_span)
        img[c, b_off:size] = _image(bt[c * rows_b:(c + 1) * rows_b], v.b, lay_b, size - b_off)
    fields = rec["descriptor_fields"]
    base = int(ch["descriptor"], 16)
    if plant == "lbo-sbo-swapped":
        lbo, sbo = _field(base, fields["lbo"]), _field(base, fields["sbo"])
        base = _set_field(_set_field(base, fields["lbo"], sbo), fields["sbo"], lbo)
    adesc = _set_field(base, fields["start"], 0)
    bdesc = _set_field(base, fields["start"], b_off >> 4)
    idesc = encode_idesc(idesc_for(v.kind, m=v.dims.m, n=v.n, a=v.a, b=v.b, d=v.d,
                                   sparse=sparse(v), selector=v.selector)) if not scaled(v) \
        else 0  # a block-scaled row's: tc_scale_operands
    # a block-scaled row's kernel, like its idesc, is tc_scale_operands'
    kernel = kernel_of(replace(v, scale="") if scaled(v) else v, m, size)
    return Operands(a, b, d_words(v, a, b), Launch(kernel, idesc, adesc, bdesc, img, meta_img))


def _image(codes: np.ndarray, t: str, lay: CatalogSmem, size: int) -> np.ndarray:
    """One operand's (rows, K) codes as ``size`` bytes by ``lay`` (4-bit: two a byte)."""
    if TYPE_BITS[t] == 4:
        return element_bytes_image(pack_nibbles(codes)[None], "u8", lay, size)[0]
    return element_bytes_image(codes[None], t, lay, size)[0]


def tc_scale_operands(v: Variant, m: DataPathMap, rec: Mapping[str, Any],
                      scale: tuple[Mapping[str, Any], Mapping[str, Any]], ids: tuple[int, int],
                      rng: np.random.Generator, plant: str = "") -> Operands:
    """Dense row ``v``'s A and B (its image and descriptors, ``tc_operands``) multiplied by the
    block-scaled kind of ``scale``'s records (scale_A's, scale_B's): the factors drawn
    (``tcgen05_scale.draw_factors``) and placed by the records at the scale factor IDs ``ids``
    (``plant``: one of ``tcgen05_scale.SCALE_PLANTS``), the IDs and the scale type in the idesc,
    D the scaled product."""
    ra, rb = scale
    va, vb = scale_view(ra), scale_view(rb)
    ops = tc_operands(v, m, rec, rng)
    sa, sb = draw_factors(rng, ra, v.dims.m, va.vec), draw_factors(rng, rb, va.vec, v.n)
    b_plant = plant if plant in B_PLANTS else ""
    words = np.concatenate([tmem_scale_words(ra, ids[0], sa, rng, "" if b_plant else plant),
                            tmem_scale_words(rb, ids[1], sb, rng, b_plant)], axis=1)
    d = scaled_product(numbers.decode(v.a, ops.a), numbers.decode(v.b, ops.b), sa, sb, va.stype)
    named = ids
    if plant == "scale-id-wrong":  # the factors at ``ids``, the idesc naming another
        other = wrong_id(va, ids[0])
        if other is None:
            raise ValueError(f"{va.id} has one legal scale factor ID: no other to name")
        named = (other, ids[1])
    idesc = encode_idesc(idesc_for(va.kind, m=v.dims.m, n=v.n, a=v.a, b=v.b, scale=va.stype,
                                   a_scale_id=named[0], b_scale_id=named[1]))
    k = scale_kernel(m, va.kind, va.form, (va.columns, vb.columns), ops.launch.kernel.smem_bytes)
    return replace(ops, d_words=d.astype(np.float32).view(np.uint32),
                   launch=replace(ops.launch, kernel=k, idesc=idesc, scales=words))


def kernel_of(v: Variant, m: DataPathMap, smem_bytes: int = 0,
              records: Sequence[Mapping[str, Any]] = ()) -> Tc05Kernel:
    """The kernel of row ``v``: its mma, and each block of ``m`` read back (a block-scaled
    row's: its factors stored first, as many columns as ``records``' scale layouts take)."""
    if scaled(v):
        pair = row_scales(records, v)
        if pair is None:
            raise DataPathError(f"the layouts JSON has no scale layouts of {v.key}")
        va, vb = (scale_view(r) for r in pair)
        return scale_kernel(m, va.kind, va.form, (va.columns, vb.columns), smem_bytes)
    g = datapath_row(v.datapath)[2]
    sp = sparse(v)
    name = ("tcsp" if sp else "tc") + ("ws" if v.ws else "")  # D as .ws: its own entry
    return datapath_kernel(name, v.datapath, g, sp, issued_ws(v), v.n,
                           [(b.cta, b.warp, b.tcol_lo, b.tcol_hi - b.tcol_lo + 1)
                            for b in m.blocks], v.kind, smem_bytes, META_COLUMNS if sp else 0)


def tc_differences(m: DataPathMap, dw: np.ndarray, out: np.ndarray) -> list[dict[str, Any]]:
    """Each cell of ``m`` whose word in the read-back ``out`` (CTAs, 128, columns) is not
    D's (``dw``: M x N words) there: the TMEM cell, D's cell (or None where ``m`` names a row
    or column D does not have), both words.  A cell outside ``out`` holds no word (None)."""
    c = m.cells()
    bad = []
    rows, cols = dw.shape
    for cta, lane, col, r, dc in c.tolist():
        got = int(out[cta, lane, col]) if cta < out.shape[0] and col < out.shape[2] else None
        want = int(dw[r, dc]) if r < rows and dc < cols else None
        if got is None or want is None or got != want:
            bad.append({"cta": cta, "lane": lane, "column": col, "d": [r, dc],
                        "got": got, "want": want})
    return bad


def _describe(bad: Sequence[Mapping[str, Any]], total: int, layout: str) -> str:
    f = bad[0]
    got = "nothing" if f["got"] is None else f"0x{f['got']:08x}"
    want = "no cell of D" if f["want"] is None else f"0x{f['want']:08x}"
    return (f"{len(bad)} of {total} cells of D differ read through Layout {layout}; first: "
            f"CTA {f['cta']} lane {f['lane']} column {f['column']} holds {got} where "
            f"D[{f['d'][0]}][{f['d'][1]}] is {want}")


def other_layout(records: Sequence[Mapping[str, Any]], m: DataPathMap) -> DataPathMap | None:
    """The first other data path stated at ``m``'s N whose cells differ from ``m``'s."""
    mine = {tuple(x) for x in m.cells().tolist()}
    for r in records:
        if r.get("instruction") != DATAPATH_INSTRUCTION or r.get("layout") == m.layout:
            continue
        try:
            o = datapath_map(records, str(r["layout"]), m.n)
        except DataPathError:
            continue
        if {tuple(x) for x in o.cells().tolist()} != mine:
            return o
    return None


def tc_smem_record(records: Sequence[Mapping[str, Any]], lid: str) -> Mapping[str, Any] | None:
    return next((r for r in records if r.get("instruction") == TC_SMEM
                 and r.get("id") == lid), None)


def run_tc_task(launcher: Any, task: Task, records: Sequence[Mapping[str, Any]],
                trials: int) -> Run:
    """One check or planted edit (see the module docstring) on ``launcher`` (``launch(
    Launch)`` -> the read-back image), every cell of D compared in every trial."""
    v = variant(task.key)
    t0 = time.perf_counter()
    run = Run(v, None, "not-executed", mode=task.mode, expect=task.expect, plant=task.plant)
    rec = tc_smem_record(records, task.catalog)
    try:
        m = datapath_map(records, v.datapath, v.n)
    except DataPathError as exc:
        run.detail = str(exc)
        return run
    if rec is None:
        run.detail = f"the layouts JSON has no {task.catalog} record"
        return run
    meta = row_meta(records, v) if sparse(v) else None
    if sparse(v) and meta is None:
        run.detail = f"the layouts JSON has no metadata layout of {v.key}"
        return run
    pair = row_scales(records, v) if scaled(v) else None
    if scaled(v) and pair is None:
        run.detail = f"the layouts JSON has no scale layouts of {v.key}"
        return run
    read = m
    if task.plant == "other-datapath":
        other = other_layout(records, m)
        if other is None:
            run.detail = "no other data path differs from this one at this N"
            return run
        read = other
    run.layout_hashes = {"datapath": m.map_hash, "smem": str(rec.get("map_hash") or "")}
    if meta is not None:
        run.layout_hashes["meta"] = str(meta.get("map_hash") or "")
        run.selector = v.selector
    if pair is not None:  # the scale layouts by their hashes; the IDs are the row's
        run.layout_hashes.update({x.operand: x.map_hash for x in map(scale_view, pair)})
    run.smem_layout = {"catalog": task.catalog, "choice": 0, "name": task.catalog,
                       "descriptor": rec["choices"][0]["descriptor"]}
    run.seed = secrets.randbits(63)
    rng = np.random.default_rng(run.seed)
    for _ in range(trials):
        ids = (v.scale_ids[0], v.scale_ids[1]) if pair else (0, 0)
        ops = tc_scale_operands(v, m, rec, pair, ids, rng, task.plant) if pair \
            else tc_operands(v, m, rec, rng, task.plant, meta)
        out = np.asarray(launcher.launch(ops.launch), dtype=np.uint32)
        bad = tc_differences(read, ops.d_words, out)
        run.trials += 1
        if bad:
            run.result = "mismatch"
            run.detail = _describe(bad, len(read.cells()), read.layout)
            run.d_cells = [list(x["d"]) for x in bad[:64]]
            break
    else:
        run.result = "match"
        run.detail = (f"{trials} trials: every one of the {len(m.cells())} cells of D bit-exact "
                      f"through Layout {m.layout} (A, B by {task.catalog}, idesc "
                      f"0x{ops.launch.idesc:08x}"
                      + (f", metadata by {meta['id']} at selector {v.selector}" if meta else "")
                      + (f", scale factors by {scale_view(pair[0]).id} and _B at IDs "
                         f"{v.scale_ids[0]} and {v.scale_ids[1]}" if pair else "")
                      + ")")
    run.seconds = time.perf_counter() - t0
    return run


# ---- a device: the fake, and CuPy ------------------------------------------------------------


class _ReversedSwizzle(SmemLayout):
    """A swizzle read the other way: the chunk bits (4-6) XORed into the row bits (7-9)."""

    def _swizzled(self, lin: np.ndarray) -> np.ndarray:
        if not self.swizzle:
            return lin
        mask = self.swizzle // 16 - 1
        return lin ^ (((lin >> 4) & mask) << 7)  # type: ignore[no-any-return]


def swap_warps(m: DataPathMap, w1: int, w2: int) -> DataPathMap:
    """``m`` with the lanes of warps ``w1`` and ``w2`` exchanged (a planted truth)."""
    shift = 32 * (w2 - w1)
    blocks = tuple(replace(b, lane_lo=b.lane_lo + s, lane_hi=b.lane_hi + s)
                   if (s := shift if b.warp % 4 == w1 else -shift if b.warp % 4 == w2 else 0)
                   else b for b in m.blocks)
    return replace(m, blocks=blocks)


class FakeTcgen05Device:
    """A Blackwell stand-in whose truth is ``records`` (the data paths and the tcgen05.smem
    records' descriptor fields): ``launch`` executes a ``Launch`` as the module docstring says.
    ``warps`` (w1, w2): its data paths hold those warps' lanes exchanged; ``swizzle_reversed``:
    it reads a swizzled image the other way."""

    def __init__(self, records: Sequence[Mapping[str, Any]],
                 warps: tuple[int, int] | None = None, swizzle_reversed: bool = False) -> None:
        self.records = list(records)
        self.warps = warps
        self.swizzle_reversed = swizzle_reversed
        rec = next((r for r in self.records if r.get("instruction") == TC_SMEM), None)
        if rec is None:
            raise LaunchError("the fake device has no tcgen05.smem record to read "
                              "descriptors by")
        self.fields = rec["descriptor_fields"]
        self.widths = {int(code): 0 if mode == "none" else int(mode.removesuffix("B"))
                       for mode, code in rec["swizzle_codes"].items() if "-" not in mode}
        self.launches = 0

    def _layout(self, desc: int) -> tuple[int, SmemLayout]:
        code = _field(desc, self.fields["swizzle"])
        if code not in self.widths:
            raise LaunchError(f"swizzle code {code} is not one this device reads")
        cls = _ReversedSwizzle if self.swizzle_reversed else SmemLayout
        return (_field(desc, self.fields["start"]) << 4,
                cls(self.widths[code], _field(desc, self.fields["lbo"]) << 4,
                    _field(desc, self.fields["sbo"]) << 4))

    def truth(self, k: Tc05Kernel, mm: int, n: int) -> DataPathMap:
        """The data path this device writes D by: the record of M, the CTA group, .ws."""
        ws = ".ws" in k.opcode
        for r in self.records:
            if r.get("instruction") != DATAPATH_INSTRUCTION or int(r["m"]) != mm \
                    or int(r.get("cta_group", 1)) != k.cta_group \
                    or r.get("sparsity") == "sparse":
                continue
            if (r.get("ws") == "yes") == ws or r.get("ws") == "either":
                m = datapath_map(self.records, str(r["layout"]), n)
                return swap_warps(m, *self.warps) if self.warps else m
        raise LaunchError(f"no data path of M = {mm}, cta_group::{k.cta_group}"
                          f"{', .ws' if ws else ''}")

    def _decompressed(self, k: Tc05Kernel, x: Any, a: np.ndarray,
                      meta: np.ndarray | None) -> np.ndarray:
        """A as the device sees it: the metadata read by its truth's record at the idesc's
        selector, the compressed values put back where the indices say."""
        rec = find_meta(self.records, x.kind, x.m, ".ws" in k.opcode)
        if rec is None or meta is None:
            raise LaunchError(f"no metadata layout of kind::{x.kind} M = {x.m} to read by")
        units = read_indices(rec, x.sparse_selector, meta[0])
        return dense_a(x.kind, a, units, 2 * a.shape[1])

    def _scaled(self, k: Tc05Kernel, x: Any, a: np.ndarray, b: np.ndarray,
                scales: np.ndarray | None) -> np.ndarray:
        """D of a block-scaled mma: the factors read by its truth's scale records (the
        opcode's form, the idesc's scale type) at the idesc's scale factor IDs."""
        form = k.opcode.partition(".block_scale.")[2]
        stype = {c: t for t, c in SCALE_CODES.items()}[x.scale_format]
        ra, rb = (find_tc_scale(self.records, x.kind, form, stype, x.m, op, k.cta_group)
                  for op in ("scale_A", "scale_B"))
        if ra is None or rb is None or scales is None:
            raise LaunchError(f"no scale layouts of kind::{x.kind} {form} {stype} M = {x.m} "
                              "to read the factors by")
        ca = scale_view(ra).columns
        try:
            return device_product((ra, rb), (x.a_scale_id, x.b_scale_id), a, b, scales[:, :ca],
                                  scales[:, ca:])
        except ValueError as exc:  # an ID the form does not admit
            raise LaunchError(str(exc)) from exc

    def launch(self, ln: Launch) -> np.ndarray:
        k = ln.kernel
        kind = k.opcode.partition(".kind::")[2].partition(".")[0]
        x = decode_idesc(kind, ln.idesc)
        types = idesc_types(x)
        g = k.cta_group
        rows_a, rows_b = x.m // g, x.n // g
        kk = 256 // TYPE_BITS[types["a"]]  # one 32-byte K slice of A (compressed, .sp)
        kb = kk * (2 if x.sparse else 1)
        a_parts: list[np.ndarray] = []
        b_parts: list[np.ndarray] = []
        for c in range(g):
            for desc, rows, t, parts, kx in ((ln.adesc, rows_a, types["a"], a_parts, kk),
                                             (ln.bdesc, rows_b, types["b"], b_parts, kb)):
                start, lay = self._layout(desc)
                st, sk = _stored(t, kx)  # 4-bit: two a byte, element k at bit 4k
                need = lay.extent(rows, sk, TYPE_BITS[st]) + start
                img = np.zeros((1, max(need, ln.smem.shape[1])), dtype=np.uint8)
                img[0, :ln.smem.shape[1]] = ln.smem[c]
                got = image_codes(img[:, start:], st, lay, rows, sk)[0]
                parts.append(unpack_nibbles(got) if st != t else got)
        a_codes = np.concatenate(a_parts)
        if x.sparse:
            a_codes = self._decompressed(k, x, a_codes, ln.meta)
        a_vals = numbers.decode(types["a"], a_codes).astype(np.float64)
        b_vals = numbers.decode(types["b"], np.concatenate(b_parts)).astype(np.float64).T
        d = self._scaled(k, x, a_vals, b_vals, ln.scales) if ".block_scale" in k.opcode \
            else a_vals @ b_vals
        with np.errstate(over="ignore", invalid="ignore"):  # a wrong factor's inf, NaN
            words = d.astype(np.int64).astype(np.int32).view(np.uint32) \
                if types.get("d") == "s32" else d.astype(np.float32).view(np.uint32)
        truth = self.truth(k, x.m, x.n)
        tmem = np.full((g, 128, max(k.out_columns, truth.columns)), UNWRITTEN, dtype=np.uint32)
        cells = truth.cells()
        tmem[cells[:, 0], cells[:, 1], cells[:, 2]] = words[cells[:, 3], cells[:, 4]]
        out = np.full((g, 128, k.out_columns), UNWRITTEN, dtype=np.uint32)
        for r in k.reads:
            lanes = slice(32 * (r.warp % 4), 32 * (r.warp % 4) + 32)
            cols = slice(r.column, r.column + r.count)
            out[r.cta, lanes, cols] = tmem[r.cta, lanes, cols]
        self.launches += 1
        return out


__all__ = ["FakeTcgen05Device", "Launch", "LaunchError", "run_tc_task", "scale_row_tasks", "scaled",
           "tc_differences", "tc_mma_tasks", "tc_scale_operands"]
