"""``ptxlayout export`` of the shared-memory ids that are not a catalog layout at one width: the
worked examples, the canonical forms, the descriptor tables and the K slices.

Each id exports as JSON, a list of records, in the style of the other records beyond the
fragments (``export_beyond``): an example's cells are a table, the byte address of each (row,
col) of its tile (M/N x K) in row-major order, named by ``place_fields``.  A worked example,
the K-major 128B bf16 example ``Swizzle<3,4,3> o ((8,2),(8,2)):((64,512),(1,8))`` (16 x 16):
(row 1, col 0) is element 64, byte 128; the swizzle XORs bits 7-9 (1) into bits 4-6, so
byte 144.  (row 0, col 8) is element 8, byte 16, whose bits 7-9 are 0: byte 16::

    {"id": "wgmma.smem.example.K-major.128B.bf16", "instruction": "wgmma.smem",
     "entry": "example", "major": "K", "mode": "128B", "type": "bf16", "bits": 16,
     "tile": [16, 16], "place_fields": ["byte"], "places": [0, 16, 32, ..., 144, ...]}
     (places[1 * 16 + 0] == 144, places[0 * 16 + 8] == 16)

A canonical form carries its layout as written (``((8,m),(T,2k)):((8T,SBO),(1,T))``, entries as
strings) and the ids of its layouts at each width; a descriptor table its bit fields; a K
slice its K, dense and sparse.

``--format cute`` writes an example or a canonical form as a CuTe expression,
``Swizzle<B,M,S> o shape:stride`` on element offsets, the swizzle on the byte address (the bit
address for sub-byte types); a canonical form's entries keep their names (T, m, k, LBO, SBO),
so it is the family of layouts its instances are (a test evaluates it at each instance's
parameters against the instance's addresses).  ``--format c`` writes an example's byte
addresses as a table and a descriptor's fields as constants; ``--format f2`` an example's
addresses as F2 bases (each bit of row and col -> the address it alone gives), checked by XOR
at every cell before they are printed.  Everything else has no such form: ``ValueError`` says
why and the command exits 2.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from .cards import bare

ENTRY = re.compile(r"^(wgmma|tcgen05)\.smem\.(example|canonical|descriptor|k-slice)(\.|$)",
                   re.IGNORECASE)
SMEM_DOCS = ("layouts.md", "k-slices.md")


def is_smem_entry_query(query: str) -> bool:
    """Does ``query`` name an example, canonical form, descriptor table or K slice?"""
    return bool(ENTRY.match(bare(query)))


def _sym(t: Any) -> Any:
    """A layout's entries as written, nested lists of strings (``2k``, ``SBO``, ``8``)."""
    return str(t) if not isinstance(t, tuple) else [_sym(x) for x in t]


def _ints(t: Any) -> Any:
    return t if isinstance(t, int) else [_ints(x) for x in t]


def _cute(t: Any) -> str:
    return str(t) if not isinstance(t, (tuple, list)) else \
        "(" + ",".join(_cute(x) for x in t) + ")"


def _example(ex: Any, family: str) -> dict[str, Any]:
    from ..model.smem import ELEMENT_BITS, at_params
    from ..prove.smem import _params
    params, _where, na = _params(ex)
    bits = ELEMENT_BITS.get(ex.type, 0)
    rec: dict[str, Any] = {
        "id": f"{family}.smem.example.{ex.major}-major.{ex.mode}.{ex.type}",
        "instruction": f"{family}.smem", "entry": "example", "major": ex.major,
        "mode": ex.mode, "type": ex.type, "bits": bits,
        "layout": ex.exact.text if ex.exact else None,
        "canonical": ex.canonical.text if ex.canonical else None,
        "params": dict(sorted(params.items())), "not_applicable": na}
    if ex.exact is None or not bits:
        return rec
    try:
        lay = at_params(ex.exact, params, bits)
    except KeyError:  # a name the parameters lack: no cells (prove says why)
        return rec
    rows, cols = lay.extent
    sub = bits % 8 != 0
    addr = [lay.bit_address((r, c)) for r in range(rows) for c in range(cols)]
    rec.update({"shape": _ints(lay.layout.shape), "stride": _ints(lay.layout.stride),
                "swizzle": [lay.swizzle.bits, lay.swizzle.base, lay.swizzle.shift],
                "tile": [rows, cols],
                "place_fields": ["byte", "bit"] if sub else ["byte"],
                "places": [v for a in addr for v in ((a // 8, a % 8) if sub else (a // 8,))]})
    return rec


def _canonical(row: Any, family: str, instances: Sequence[Any]) -> dict[str, Any]:
    from ..model.smem import atom_of, names_in
    lay = row.layout
    return {"id": f"{family}.smem.canonical.{row.major}-major.{row.mode}",
            "instruction": f"{family}.smem", "entry": "canonical", "major": row.major,
            "mode": row.mode, "layout": lay.text, "shape": _sym(lay.shape),
            "stride": _sym(lay.stride), "swizzle": list(row.swizzle),
            "parameters": sorted(names_in(lay.shape) | names_in(lay.stride)),
            "atom": list(atom_of(row)),
            "instances": [i.id for i in instances
                          if (i.family, i.major, i.mode) == (family, row.major, row.mode)]}


def _descriptor(family: str, rows: Sequence[Any]) -> dict[str, Any]:
    return {"id": f"{family}.smem.descriptor", "instruction": f"{family}.smem",
            "entry": "descriptor",
            "fields": [{"lo": f.lo, "hi": f.hi, "bits": f.size, "description": f.description,
                        "constant": int(f.constant, 0) if f.constant else None}
                       for f in rows]}


def _k_slice(r: Any) -> dict[str, Any]:
    return {"id": f"{r.family}.smem.k-slice.{r.type}", "instruction": f"{r.family}.smem",
            "entry": "k-slice", "type": r.type, "bits": r.bits, "k": r.k,
            "sparse_k": r.sparse_k, "bytes": r.k * r.bits // 8,
            "sparse_bytes": None if r.sparse_k is None else r.sparse_k * r.bits // 8}


@cache
def smem_entry_records() -> tuple[dict[str, Any], ...]:
    """The catalog's examples, canonical forms, descriptor tables and K slices as records, in
    the order ``prove`` reports them (built once a process; callers copy)."""
    from .. import catalog
    from ..model.smem import instances, read_smem
    from ..prove.smem import family_of
    out: list[dict[str, Any]] = []
    for name in SMEM_DOCS:
        text = read_smem((catalog.CATALOG_DIR / "smem" / name).read_text(encoding="utf-8"),
                         f"catalog/smem/{name}")
        fam = family_of(text)
        insts = instances(fam, text.canonical)
        out += [_example(ex, fam) for ex in text.examples]
        out += [_canonical(row, fam, insts) for row in text.canonical]
        for f in sorted({f.family for f in text.fields}):
            out.append(_descriptor(f, [r for r in text.fields if r.family == f]))
        out += [_k_slice(r) for r in text.k_slices]
    return tuple(out)


def smem_entries_for(query: str) -> list[dict[str, Any]]:
    """The records ``query`` names: the one whose id it is, else every one it begins with a
    dot after it; ValueError when none."""
    q = bare(query).lower()
    recs = smem_entry_records()
    got = [r for r in recs if r["id"].lower() == q] or \
        [r for r in recs if r["id"].lower().startswith(q + ".")]
    if not got:
        raise ValueError(f"no shared-memory example, canonical form, descriptor table or K "
                         f"slice matches '{query}' (see 'ptxlayout list --family "
                         f"{'.'.join(bare(query).split('.')[:2])}')")
    return [json.loads(json.dumps(r)) for r in got]


# ---- CuTe, C and F2 ----------------------------------------------------------------------------


def cute_expression(rec: dict[str, Any]) -> str:
    """An example's or a canonical form's ``Swizzle<B,M,S> o shape:stride`` (elements; the
    swizzle on the byte address)."""
    b, m, s = rec["swizzle"]
    return f"Swizzle<{b},{m},{s}> o {_cute(rec['shape'])}:{_cute(rec['stride'])}"


def _no(rec: dict[str, Any], fmt: str, why: str) -> ValueError:
    return ValueError(f"export --format {fmt} has no meaning for {rec['id']}: {why}; "
                      "--format json exports its record")


def _cute_text(recs: Sequence[dict[str, Any]]) -> str:
    out = ["# ptxlayout CuTe export of shared-memory examples and canonical forms: (mn, k) ->",
           "# element offset, the swizzle on the byte address (offset * bits / 8); mode 0 runs",
           "# along M/N, mode 1 along K.  A canonical form's names: T = 128 / bits elements a",
           "# 16-byte unit, m and k atoms (core matrices) along M/N and K, LBO and SBO elements.",
           ""]
    for r in recs:
        if r["entry"] not in ("example", "canonical") or "swizzle" not in r:
            raise _no(r, "cute", "a descriptor table or a K slice is not a layout"
                      if r["entry"] in ("descriptor", "k-slice") else "the example has no cells")
        where = (f"at {', '.join(f'{k}={v}' for k, v in r['params'].items())}"
                 if r["entry"] == "example" else
                 f"for {', '.join(r['parameters'])}; at one width: {', '.join(r['instances'])}")
        out += [f"catalog:{r['id']}", f"  {where}", f"  {cute_expression(r)}", ""]
    return "\n".join(out)


def _c_name(s: str) -> str:
    return re.sub(r"\W", "_", s)


def _c_text(recs: Sequence[dict[str, Any]]) -> str:
    out = ["// Generated by ptxlayout (export --format c): shared-memory examples' addresses",
           "// and matrix descriptors' bit fields.", "#pragma once", "#include <cstdint>", "",
           "namespace ptxlayout {", ""]
    for r in recs:
        if r["entry"] == "example" and "places" in r:
            rows, cols = r["tile"]
            w = len(r["place_fields"])
            body = ",\n".join("  {" + ", ".join(str(r["places"][w * (i * cols + j)])
                                                for j in range(cols)) + "}"
                              for i in range(rows))
            out += [f"// catalog:{r['id']}: {r['layout']}; kByte[row][col] of the "
                    f"{rows} x {cols} tile (M/N x K)", f"namespace {_c_name(r['id'])} {{",
                    f"constexpr uint32_t kByte[{rows}][{cols}] = {{", body, "};",
                    f"}}  // namespace {_c_name(r['id'])}", ""]
        elif r["entry"] == "descriptor":
            out += [f"// catalog:{r['id']}: bits lo..hi of the 64-bit descriptor",
                    f"namespace {_c_name(r['id'])} {{",
                    f"constexpr int kFields = {len(r['fields'])};",
                    "constexpr int lo[kFields] = {" + ", ".join(str(f["lo"]) for f in r["fields"])
                    + "};",
                    "constexpr int bits[kFields] = {"
                    + ", ".join(str(f["bits"]) for f in r["fields"]) + "};",
                    "// -1: not a fixed constant",
                    "constexpr int constant[kFields] = {" + ", ".join(
                        str(-1 if f["constant"] is None else f["constant"]) for f in r["fields"])
                    + "};"]
            out += [f"//   [{i}] bits {f['lo']}-{f['hi']}: {f['description']}"
                    for i, f in enumerate(r["fields"])]
            out += [f"}}  // namespace {_c_name(r['id'])}", ""]
        else:
            raise _no(r, "c", {"canonical": "its T, m, k, LBO and SBO have no values (export "
                                             "a layout at one width, e.g. "
                                             + ", ".join(r.get("instances", [])[:1])
                                             + ", for its descriptor)",
                               "k-slice": "a K slice is two numbers, not a table"}.get(
                                   r["entry"], "the example has no cells"))
    out.append("}  // namespace ptxlayout")
    return "\n".join(out) + "\n"


def f2_bases(rec: dict[str, Any]) -> tuple[list[int], list[int]] | str:
    """An example's F2 bases, the byte address of each bit of row and of col alone, or why
    there are none: an extent not a power of two, or the first cell the XOR of its bits'
    bases misses."""
    rows, cols = rec["tile"]
    if rows & (rows - 1) or cols & (cols - 1) or len(rec["place_fields"]) != 1:
        return "its tile is not a power of two of whole bytes"
    t = rec["places"]
    rb = [t[(1 << i) * cols] for i in range(rows.bit_length() - 1)]
    cb = [t[1 << j] for j in range(cols.bit_length() - 1)]
    for r in range(rows):
        for c in range(cols):
            x = 0
            for i, v in enumerate(rb):
                x ^= v if r >> i & 1 else 0
            for j, v in enumerate(cb):
                x ^= v if c >> j & 1 else 0
            if x != t[r * cols + c]:
                return (f"not F2-linear: (row {r}, col {c}) is byte {t[r * cols + c]}, the XOR "
                        f"of its bits' bases {x}")
    return rb, cb


def _f2_text(recs: Sequence[dict[str, Any]]) -> str:
    out = ["# ptxlayout F2 export of shared-memory examples: each bit of row (M/N) and col (K)",
           "# -> the byte address it alone gives; a cell's address is the XOR of its bits'.", ""]
    for r in recs:
        got = f2_bases(r) if r["entry"] == "example" and "places" in r else \
            "a canonical form, a descriptor table or a K slice has no cells"
        if isinstance(got, str):
            raise _no(r, "f2", got)
        rb, cb = got
        out += [f"catalog:{r['id']}",
                "  row: " + " ".join(f"{1 << i}->{v}" for i, v in enumerate(rb)),
                "  col: " + " ".join(f"{1 << j}->{v}" for j, v in enumerate(cb)), ""]
    return "\n".join(out)


FORMATS: dict[str, Callable[[Sequence[dict[str, Any]]], str]] = {
    "cute": _cute_text, "c": _c_text, "f2": _f2_text}


def export_smem_entries(queries: Sequence[str], fmt: str) -> str:
    """The records the queries name, in order and each once, in ``fmt``; ValueError for a
    query that names nothing or a record the format cannot express (with the reason)."""
    recs: list[dict[str, Any]] = []
    for q in queries:
        recs.extend(r for r in smem_entries_for(q) if r not in recs)
    if fmt == "json":
        from .export_beyond import records_text
        return records_text(recs) + "\n"
    return FORMATS[fmt](recs)


def smem_entry_command(args: Any, write: Callable[[str, str | None], None]) -> int | None:
    """``ptxlayout export ID ...`` where every id is an example, canonical form, descriptor
    table or K slice of the catalog (``export_beyond.ids_export_command``; None otherwise)."""
    from .export_beyond import ids_export_command
    return ids_export_command(args, write, is_smem_entry_query, export_smem_entries)
