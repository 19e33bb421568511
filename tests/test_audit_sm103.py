"""SM103's K = 96 scale factors as SM103's own collective sizes them: the fragment made with
``Sm103BlockScaledBasicChunk``'s four factors a row (one 32-bit word) and tiled along K, checked
by hand against the wheel's ``tmem_sf_frg`` and against the catalog's K = 96 layout (a row's
factors in two consecutive columns, a reading the text does not state)."""

from __future__ import annotations

from pathlib import Path

from formal.audit.header import read_header
from formal.audit.tc_scale import SM103_WORD, cute_factor_places

from .test_audit_tc_scale import K96, _trimmed
from .wheel import cutlass_include as _include

TRAITS = "cute/atom/mma_traits_sm100.hpp"
SM103_CONFIG = "cutlass/detail/sm103_blockscaled_layout.hpp"


def test_the_word_is_the_sm103_chunks_blk_sf() -> None:
    h = read_header(_include() / SM103_CONFIG)
    chunk = next(s for s in h.structs if s.name == "Sm103BlockScaledBasicChunk")
    blk = chunk.member("Blk_SF")
    assert blk is not None and str(blk.type) == f"_{SM103_WORD}"


def _places(nsf: int, word: int | None) -> dict:
    from formal.audit.atoms import Env
    from formal.audit.umma import _struct
    env = Env([_include() / TRAITS])
    frg = _struct(env, "tmem_sf_frg")
    assert frg is not None
    got = cute_factor_places(env, frg, 1, True, "ScaleFactorDuplicated4by1", 128, 16, nsf, word)
    assert not isinstance(got, str)
    return got


def test_sm103_sizing_puts_a_rows_second_word_four_columns_on() -> None:
    """M = 128, VS = 16, K = 96 (six factors a row): the atom (((32,4),4),(16,4)) :
    (((1,512),32),(0,128)) fills [0, 2048), so block 4 is block 0 one cosize on: row 0's at
    virtual address 2048 -> byte 16 of lane 0 -> column 4, byte 0 (and lanes 32, 64, 96);
    row 32's block 0 at 512 -> byte 4 -> column 1, byte 0.  No two factors share a byte, where
    the fragment made at NSF = 6 put row 0's block 4 on row 32's block 0."""
    got = _places(6, SM103_WORD)
    assert got[(0, 4)] == {(0, lane, 4, 0) for lane in (0, 32, 64, 96)}
    assert got[(0, 5)] == {(0, lane, 4, 1) for lane in (0, 32, 64, 96)}
    assert got[(32, 0)] == {(0, lane, 1, 0) for lane in (0, 32, 64, 96)}
    assert got[(97, 3)] == {(0, 1 + lane, 3, 3) for lane in (0, 32, 64, 96)}
    every = [p for ps in got.values() for p in ps]
    assert len(every) == len(set(every)) == 128 * 6 * 4
    old = _places(6, None)
    assert old[(0, 4)] & old[(32, 0)]  # NSF = 6: one byte, two factors


def test_the_audit_records_the_sm103_difference_with_its_cells(tmp_path: Path) -> None:
    rows = _trimmed(tmp_path, [K96])
    a16 = next(r for r in rows if (r.operand, r.m, r.vs) == ("A", 128, 16)
               and r.spec.endswith("ue8m0.scale_A"))
    assert a16.verdict == "differs" and "NSF 4 a word" in a16.cute
    # the catalog: column 2 * (0 / 32) + (0 + 4) / 4 = 1, byte 0
    assert a16.differences[0] == {
        "factor": [0, 4], "cute_only": [[0, lane, 4, 0] for lane in (0, 32, 64, 96)],
        "spec_only": [[0, lane, 1, 0] for lane in (0, 32, 64, 96)]}
    # equal: rows 0-31's blocks 0-3 (column 0) and rows 96-127's blocks 4-5 (column 4 + 3 =
    # 2 * 3 + 1 = 7); the other 576 of the 768 differ
    assert a16.differing == 576
