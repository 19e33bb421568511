"""tcgen05.cp kernels: one entry per form of the variant table (shape, multicast,
decompression) and cta_group, from the one tcgen05 template (``formal.execute.ptx_tcgen05``),
assembled for sm_100a by ``ptxlayout ptx --check`` (compile-only: no lent device runs it);
ptxas refuses the forms the table leaves out, so the table's multicast rule is checked too."""

from __future__ import annotations

from pathlib import Path

import pytest

from formal.base.matrix_variants import tcgen05_cp_forms, tcgen05_cp_opcode
from formal.execute.ptx import assemble, ptxas_path
from formal.execute.ptx_tcgen05 import Tc05Kernel, module_text, tcgen05_cp_module


def test_every_form_is_an_entry_of_the_module() -> None:
    forms = tcgen05_cp_forms()
    # 3 plain shapes + .64x128b's two pairings + .32x128b.warpx4, each plain and decompressing
    assert len(forms) == 6 * 3
    text = tcgen05_cp_module()
    assert text.count(".entry ") == 2 * len(forms) == 36
    assert "@%p3 tcgen05.cp.cta_group::1.64x128b.warpx2::02_13 [%r1], %rd1;" in text
    assert "@%p3 tcgen05.cp.cta_group::2.128x128b.b8x16.b6x16_p32 [%r1], %rd1;" in text
    assert ".explicitcluster .reqnctapercluster 2, 1, 1" in text  # the cta_group::2 entries
    assert tcgen05_cp_opcode("32x128b", "warpx4", "b8x16.b4x16_p64", 2) == \
        "tcgen05.cp.cta_group::2.32x128b.warpx4.b8x16.b4x16_p64"


@pytest.mark.ptxas
@pytest.mark.parametrize("bad", ["tcgen05.cp.cta_group::1.64x128b",
                                 "tcgen05.cp.cta_group::1.32x128b.warpx2::02_13",
                                 "tcgen05.cp.cta_group::1.4x256b.warpx4"])
def test_ptxas_assembles_the_forms_and_refuses_the_others(bad: str) -> None:
    if ptxas_path() is None:
        pytest.skip("ptxas is not on PATH")
    form = bad.split(".", 3)[3]  # 64x128b, 32x128b.warpx2::02_13 ...: not rows of the table
    assert form not in {f"{s}.{m}" if m else s for s, m, _f in tcgen05_cp_forms()}
    ok, msg = assemble(module_text([Tc05Kernel("bad", bad, 32)]), "sm_100a")
    assert not ok and "tcgen05.cp" in msg


@pytest.mark.ptxas
def test_ptx_check_assembles_the_cp_module(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    from formal.cli import main
    if ptxas_path() is None:
        pytest.skip("ptxas is not on PATH")
    code = main(["ptx", "--check", "--arch", "sm_100a", "--only", "tcgen05.cp", "--out",
                 str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert [p.name for p in tmp_path.iterdir()] == ["tcgen05.cp.ptx"]
    assert "tcgen05.cp (36 entries) for sm_100a: ok (compile-only)" in out
