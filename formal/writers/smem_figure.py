"""A shared-memory layout shown as the spec's figures draw it, and written back as CuTe and C.

``ptxlayout show wgmma.smem.K-major.128B.b16`` draws shared memory as the swizzle sees it:
one line per row of the swizzle atom (16c bytes for a mode of c 16-byte chunks), one cell
per 16-byte chunk, and in each cell the 16-byte unit of the matrix it holds (T elements of
one row along K for K-major, written ``row,kunit``; T elements along M/N of one column for
MN-major, written ``mnunit,col``).  A toy: K-major, 32B (two chunks a row), 16-bit elements
(T = 8), rows 3 and 4 of a 16 x 16 tile:

    byte  | chunk 0 chunk 1
      96  |   3,0     3,1          bytes 0-127: address bit 7 is 0, no swap
     128  |   4,1     4,0          bytes 128-255: Swizzle<1,4,3> XORs bit 7 into bit 4

The chunk index permuted per row is the swizzle; a ``.`` is a chunk of the atom the tile
leaves to other K slices or other tiles.  The whole tile is drawn at the catalog's
parameters (``formal.model.smem.tile_params``: m = 2 atoms along M/N, one instruction's K).

``export --format cute`` writes the layout at those parameters in CuTe notation,
``Swizzle<1,4,3> o ((8,2),(8,2)):((16,128),(1,8))`` (elements; the swizzle on bytes), which
the grammar that reads the spec reads back (a test re-reads every one); ``--format c``
writes the fields of the matrix descriptor that names it (start address, LBO, SBO in bytes
and as encoded, swizzle code, base offset) and the 64-bit descriptor, for the layout's own
family (wgmma bits 62-63 for the swizzle; tcgen05 bits 61-63, fixed constant 0b001 at 46-48).
"""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # at run time imported where used: every command asks is_smem_query
    from ..model.smem import SmemInstance

_SMEM_ID = re.compile(r"^(?:[\w./-]+:)?(?:wgmma|tcgen05)\.smem(?:\.|$)", re.IGNORECASE)


def is_smem_query(query: str) -> bool:
    """Does ``query`` name a shared-memory layout (``[catalog:]wgmma.smem...``)?"""
    return bool(_SMEM_ID.match(query))


def catalog_instances() -> list[SmemInstance]:
    """The embedded catalog's shared-memory layouts, wgmma's then tcgen05's."""
    from .. import catalog
    from ..model.smem import instances, read_smem
    text = (catalog.CATALOG_DIR / "smem" / "layouts.md").read_text(encoding="utf-8")
    rows = read_smem(text, "catalog/smem/layouts.md").canonical
    return instances("wgmma", rows) + instances("tcgen05", rows)


def pick_smem(query: str, insts: list[SmemInstance] | None = None) -> SmemInstance:
    """The one layout ``query`` names (its id, with or without ``catalog:``); ValueError
    with the candidates when it names none or several."""
    import difflib
    insts = catalog_instances() if insts is None else insts
    q = query.split(":", 1)[1] if ":" in query else query
    exact = [i for i in insts if i.id.lower() == q.lower()]
    hits = exact or [i for i in insts if q.lower() in i.id.lower()]
    if not hits:
        close = difflib.get_close_matches(q, [i.id for i in insts], n=3)
        raise ValueError(f"no shared-memory layout matches '{query}'" + (
            f"; did you mean {' or '.join(close)}?" if close else ""))
    if len(hits) > 1:
        ids = "\n".join(f"  {i.id}" for i in hits)
        raise ValueError(f"'{query}' matches {len(hits)} shared-memory layouts; name one of "
                         f"them:\n{ids}")
    return hits[0]


# ---- the figure --------------------------------------------------------------------------------


def chunk_holders(inst: SmemInstance) -> dict[int, set[tuple[int, int]]]:
    """Each 16-byte chunk of shared memory (byte address // 16) and the 16-byte units of the
    matrix held there: (row, K unit) for K-major, (M/N unit, column) for MN-major.  A chunk
    kept whole holds one unit; two would be a collision, drawn as such."""
    lay, bits = inst.layout, inst.bits
    out: dict[int, set[tuple[int, int]]] = {}
    for mn, k in lay.coords():
        unit = (mn, k * bits // 128) if inst.major == "K" else (mn * bits // 128, k)
        out.setdefault(lay.address((mn, k)) // 16, set()).add(unit)
    return out


def draw_smem(inst: SmemInstance) -> str:
    """The figure (see the module's docstring)."""
    from ..model.smem import CHUNKS
    c = CHUNKS[inst.mode]
    held = chunk_holders(inst)
    rows = max(held) // c + 1
    label = {ch: "/".join(f"{a},{b}" for a, b in sorted(us)) + ("!!" if len(us) > 1 else "")
             for ch, us in held.items()}
    width = max(7, *(len(v) for v in label.values()))
    p = inst.params
    names = ", ".join(f"{n}={p[n]}" for n in ("T", "m", "k", "LBO", "SBO") if n in p)
    unit = "row,kunit" if inst.major == "K" else "mnunit,col"
    head = [f"{inst.id}: {inst.family} {'A/B' if inst.major == 'K' else 'A/B transposed'}, "
            f"{inst.major}-major, swizzle {inst.mode}, {inst.bits}-bit elements "
            f"({', '.join(inst.types)})",
            f"  canonical {inst.row.layout.text} with {inst.layout.swizzle}",
            f"  at {names} (elements): {inst.layout}",
            f"  tile {inst.layout.extent[0]} x {inst.layout.extent[1]} (M/N x K); each cell a "
            f"16-byte chunk of shared memory holding the matrix's 16-byte unit '{unit}' "
            f"({128 // inst.bits} elements); rows of {16 * c} bytes, atoms of 8 rows",
            "",
            "  byte | " + " ".join(f"chunk {j}".rjust(width) for j in range(c))]
    body = []
    for r in range(rows):
        if r and r % 8 == 0:
            body.append(f"  {'':>4} | -- atom {r // 8} at byte {r * 16 * c}")
        cells = [label.get(r * c + j, ".") for j in range(c)]
        body.append(f"  {r * 16 * c:>4} | " + " ".join(x.rjust(width) for x in cells))
    return "\n".join(head + body) + "\n"


# ---- CuTe and C ----------------------------------------------------------------------------------


def _cute_type(t: Any) -> str:
    if isinstance(t, int):
        return f"_{t}"
    return ",".join(_cute_type(x) for x in t)


def _nested(t: Any, kind: str) -> str:
    if isinstance(t, int):
        return f"_{t}"
    return f"{kind}<" + ",".join(_nested(x, kind) for x in t) + ">"


def smem_cute_text(inst: SmemInstance) -> str:
    """The layout at the catalog's parameters as CuTe writes it: the swizzle composed with
    the (shape):(stride) of elements -- one line the spec's grammar reads back."""
    return str(inst.layout)


def export_cute(insts: list[SmemInstance]) -> str:
    out = ["# ptxlayout CuTe export of shared-memory layouts: (mn, k) -> element offset, the",
           "# swizzle on the byte address (offset * bits / 8), as Swizzle<B,M,S> o smem_ptr o",
           "# layout in CuTe; mode 0 runs along M/N, mode 1 along K, for either majorness.", ""]
    for i in insts:
        lay = i.layout.layout
        sw = i.layout.swizzle
        out += [f"catalog:{i.id}",
                f"  canonical {i.row.layout.text} at "
                + ", ".join(f"{k}={v}" for k, v in sorted(i.params.items())),
                f"  {smem_cute_text(i)}",
                f"  ComposedLayout<Swizzle<{sw.bits},{sw.base},{sw.shift}>, "
                f"smem_ptr_flag_bits<{i.bits}>, Layout<{_nested(lay.shape, 'Shape')}, "
                f"{_nested(lay.stride, 'Stride')}>>", ""]
    return "\n".join(out)


def _c_name(s: str) -> str:
    return re.sub(r"\W", "_", s)


def export_c(insts: list[SmemInstance]) -> str:
    """A C++ header: each layout's descriptor fields (bytes and as encoded) and descriptor."""
    from ..model.smem import (
        DESCRIPTORS,
        descriptor_encode,
        descriptor_of,
        descriptor_values,
        smem_hash,
    )
    out = ["// Generated by ptxlayout (export --format c): shared-memory matrix descriptors.",
           "// Each layout at the catalog's parameters, its matrix at start address 0 (add the",
           "// buffer's address >> 4 to the descriptor's low 14 bits); LBO and SBO in bytes and",
           "// as matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4 writes them.",
           "#pragma once", "#include <cstdint>", "", "namespace ptxlayout {", ""]
    for i in insts:
        v = descriptor_values(i)
        lbo = next(x for n, x in v.items() if n.startswith("leading"))
        sbo = v["stride dimension byte offset"]
        fields = {f.name: f for f in DESCRIPTORS[i.family]}
        sw = fields["swizzling mode"]
        lo = next(f for n, f in fields.items() if n.startswith("leading"))
        out += [f"// catalog:{i.id}: {i.layout}; tile {i.layout.extent[0]} x "
                f"{i.layout.extent[1]} (M/N x K), address hash {smem_hash(i)}",
                f"namespace {_c_name(i.id)} {{",
                f"constexpr int kElementBits = {i.bits};",
                "constexpr uint32_t kStartAddress = 0;  // bits 0-13, encoded",
                f"constexpr uint32_t kLeadingByteOffset = {lbo};  // bytes; bits "
                f"{lo.lo}-{lo.hi} hold {descriptor_encode(lbo)}",
                f"constexpr uint32_t kStrideByteOffset = {sbo};  // bytes; bits 32-45 hold "
                f"{descriptor_encode(sbo)}",
                "constexpr uint32_t kBaseOffset = 0;  // bits 49-51: the atoms start aligned",
                f"constexpr uint32_t kSwizzleCode = {v['swizzling mode']};  // bits "
                f"{sw.lo}-{sw.hi}: {i.mode}"]
        if i.family == "tcgen05":
            out += ["constexpr uint32_t kLeadingStrideMode = 0;  // bit 52: relative offset",
                    "constexpr uint32_t kFixedConstant = 1;  // bits 46-48: 0b001"]
        out += [f"constexpr uint64_t kDescriptor = 0x{descriptor_of(i):016x}ull;  // "
                f"{i.family}", f"}}  // namespace {_c_name(i.id)}", ""]
    out.append("}  // namespace ptxlayout")
    return "\n".join(out) + "\n"


def export_smem_layouts(insts: list[SmemInstance], fmt: str) -> str:
    """``export --format FMT`` of shared-memory layouts; ValueError for a format they lack."""
    if fmt == "cute":
        return export_cute(insts)
    if fmt == "c":
        return export_c(insts)
    if fmt == "json":
        import json

        from .export_smem import smem_record
        return json.dumps([smem_record(i) for i in insts], indent=1, sort_keys=True) + "\n"
    raise ValueError(f"shared-memory layouts export as json, c or cute, not {fmt}")


def smem_command(args: Any, write: Any) -> int | None:
    """``ptxlayout show ID`` and ``ptxlayout export ID ...`` where every id names a
    shared-memory layout (None for any other command or id, which the command itself
    answers): the figure, or the export in ``--format``, written by ``write(text, output)``;
    an id that names none or several, or a format they lack, is one line on stderr, exit 2."""
    from .export_smem_ids import smem_entry_command  # examples, canonical forms, tables
    done = smem_entry_command(args, write)
    if done is not None:
        return done
    command = getattr(args, "command", None)
    ids = [args.id] if command == "show" else list(getattr(args, "ids", None) or [])
    if command not in ("show", "export") or not ids or not all(map(is_smem_query, ids)):
        return None
    try:
        insts = [pick_smem(q) for q in ids]
        text = draw_smem(insts[0]) if command == "show" else \
            export_smem_layouts(insts, args.format)
    except ValueError as exc:
        if command == "show" and str(exc).startswith("no shared-memory layout"):
            return None  # an example, a canonical form, a descriptor table: show's card
        print(f"ptxlayout: {exc}", file=sys.stderr)
        return 2
    write(text, getattr(args, "output", None) if command == "export" else None)
    return 0
