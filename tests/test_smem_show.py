"""``ptxlayout show`` of a shared-memory layout (16-byte chunks, the swizzle visible) and its
exports: CuTe notation that the spec's grammar reads back, and the descriptor fields in C."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from formal.cli import main
from formal.model.smem import CHUNKS, DescriptorRead, descriptor_of, pack_descriptor
from formal.parse.smem import read_layout
from formal.writers.smem_figure import (
    catalog_instances,
    chunk_holders,
    draw_smem,
    export_c,
    export_cute,
    pick_smem,
    smem_cute_text,
)

INSTANCES = catalog_instances()


def test_the_catalog_has_every_family_majorness_mode_and_width() -> None:
    assert len(INSTANCES) == 48
    assert {(i.family, i.major) for i in INSTANCES} == {
        ("wgmma", "K"), ("wgmma", "MN"), ("tcgen05", "K"), ("tcgen05", "MN")}


def test_the_figure_draws_the_chunk_index_permuted_per_row() -> None:
    text = draw_smem(pick_smem("wgmma.smem.K-major.128B.b16"))
    lines = text.splitlines()
    assert lines[2] == ("  at T=8, m=2, k=1, LBO=1, SBO=512 (elements): "
                        "Swizzle<3,4,3> o ((8,2),(8,2)):((64,512),(1,8))")
    grid = lines[lines.index("  byte | " + " ".join(f"chunk {j}" for j in range(8))) + 1:]
    # row r of the atom holds the matrix's row r; its K units 0 and 1 sit at chunks r ^ 0, r ^ 1
    assert grid[0].split("|")[1].split() == ["0,0", "0,1", ".", ".", ".", ".", ".", "."]
    assert grid[1].split("|")[1].split() == ["1,1", "1,0", ".", ".", ".", ".", ".", "."]
    assert grid[3].split("|")[1].split() == [".", ".", "3,1", "3,0", ".", ".", ".", "."]
    assert grid[8] == "       | -- atom 1 at byte 1024"
    assert grid[9].split("|")[1].split()[:2] == ["8,0", "8,1"]


@pytest.mark.parametrize("inst", INSTANCES, ids=lambda i: i.id)
def test_every_chunk_holds_one_unit_where_the_swizzle_puts_it(inst) -> None:  # type: ignore[no-untyped-def]
    c = CHUNKS[inst.mode]
    held = chunk_holders(inst)
    assert all(len(units) == 1 for units in held.values())  # chunks kept whole, no collision
    assert len(held) * 16 * 8 == inst.layout.extent[0] * inst.layout.extent[1] * inst.bits
    if inst.major == "K":  # the unit's K index XOR the row (within 128 bytes) is its chunk
        for chunk, units in held.items():
            (row, q), = units
            unswizzled = chunk % c ^ ((chunk * 16 // 128) % 8) % c
            assert unswizzled == q % c, (chunk, row, q)
    assert "!!" not in draw_smem(inst)


@pytest.mark.parametrize("inst", INSTANCES, ids=lambda i: i.id)
def test_the_cute_export_reads_back_as_the_same_layout(inst) -> None:  # type: ignore[no-untyped-def]
    swizzle, (shape, stride) = read_layout(smem_cute_text(inst))
    sw = inst.layout.swizzle

    def ints(t):  # type: ignore[no-untyped-def]
        return t.scale if hasattr(t, "scale") else tuple(ints(x) for x in t)

    assert swizzle == (sw.bits, sw.base, sw.shift)
    assert (ints(shape), ints(stride)) == (inst.layout.layout.shape, inst.layout.layout.stride)


def test_the_cute_export_lists_each_layout_once() -> None:
    text = export_cute(INSTANCES[:2])
    assert text.count("catalog:wgmma.smem.") == 2
    # MN-major, no swizzle, 16-bit at m = k = 2: the spec's own MN-major bf16 example
    assert "  Swizzle<0,4,3> o ((8,1,2),(8,2)):((1,8,64),(8,128))" in text
    assert "ComposedLayout<Swizzle<0,4,3>, smem_ptr_flag_bits<16>, Layout<Shape<Shape<_8,_1,_2>" \
           ",Shape<_8,_2>>, Stride<Stride<_1,_8,_64>,Stride<_8,_128>>>>" in text


@pytest.mark.parametrize("query", ["wgmma.smem.K-major.128B.b16", "tcgen05.smem.MN-major.64B.b8",
                                   "tcgen05.smem.K-major.none.b4"])
def test_the_c_export_gives_the_descriptor_fields(query: str) -> None:
    inst = pick_smem(query)
    text = export_c([inst])
    desc = descriptor_of(inst)
    assert f"constexpr uint64_t kDescriptor = 0x{desc:016x}ull;  // {inst.family}" in text
    read = DescriptorRead.of(inst.family, desc)
    assert f"kLeadingByteOffset = {read.lbo};" in text
    assert f"kStrideByteOffset = {read.sbo};" in text and read.mode == inst.mode
    if inst.family == "tcgen05":  # the fixed constant 0b001 at bits 46-48
        assert (desc >> 46) & 0b111 == 1 and "kFixedConstant = 1;" in text
    fields = {"leading dimension byte offset" if inst.family == "wgmma" else
              "leading dimension byte offset or absolute address": read.lbo,
              "stride dimension byte offset": read.sbo,
              "swizzling mode": (desc >> (62 if inst.family == "wgmma" else 61))}
    assert pack_descriptor(inst.family, fields) == desc


@pytest.mark.skipif(not shutil.which("g++"), reason="no C++ compiler")
def test_the_c_export_compiles(tmp_path: Path) -> None:
    src = tmp_path / "d.cpp"
    src.write_text(export_c(INSTANCES) + "int main() { return "
                   "ptxlayout::wgmma_smem_K_major_128B_b16::kSwizzleCode == 1 ? 0 : 1; }\n")
    subprocess.run(["g++", "-std=c++17", "-fsyntax-only", str(src)], check=True)


def test_show_and_export_on_the_command_line(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["show", "catalog:wgmma.smem.MN-major.64B.b16"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("wgmma.smem.MN-major.64B.b16: wgmma A/B transposed, MN-major")
    assert main(["show", "wgmma.smem.K-major.32B"]) == 2  # four widths: name one
    err = capsys.readouterr().err
    assert "matches 4 shared-memory layouts" in err and "wgmma.smem.K-major.32B.b1" in err
    assert main(["show", "wgmma.smem.K-majr.32B.b8"]) == 2
    assert "did you mean wgmma.smem.K-major.32B.b8" in capsys.readouterr().err
    assert main(["export", "--format", "f2", "wgmma.smem.K-major.32B.b8"]) == 2
    out_file = tmp_path / "d.h"
    assert main(["export", "--format", "c", "tcgen05.smem.K-major.128B.b16",
                 "--output", str(out_file)]) == 0
    assert "namespace tcgen05_smem_K_major_128B_b16 {" in out_file.read_text()


def test_the_module_docstring_toy() -> None:
    grid = {line.split("|")[0].strip(): line.split("|")[1].split()
            for line in draw_smem(pick_smem("wgmma.smem.K-major.32B.b16")).splitlines()
            if "|" in line and line.split("|")[0].strip().isdigit()}
    assert grid["96"] == ["3,0", "3,1"] and grid["128"] == ["4,1", "4,0"]
