"""tcgen05.mma's instruction descriptor (``formal.execute.idesc``): words computed by hand,
decode(encode(x)) == x, refusals, and the table against CuTe's bitfields in the installed
CUTLASS wheel (their order and widths, read from the header)."""

from __future__ import annotations

import itertools
import re

import pytest

from formal.execute.idesc import (
    FIELDS,
    Idesc,
    IdescError,
    decode_idesc,
    encode_idesc,
    idesc_fields,
    idesc_for,
    idesc_types,
)
from tests.wheel import cutlass_include


def test_f16_m128_n64_k_major_by_hand() -> None:
    # D F32 = 1 at bit 4; N >> 3 = 8 at bit 17; M >> 4 = 8 at bit 24
    x = idesc_for("f16", m=128, n=64, a="f16", b="f16", d="f32")
    assert encode_idesc(x) == (1 << 4) | (8 << 17) | (8 << 24) == 0x08100010


def test_sparse_by_hand() -> None:
    # the f16 word above with the sparse flag (bit 2) and selector 1 (bits 0-1); bf16 A and
    # B (code 1 at bits 7 and 10); N = 128 (16 << 17)
    x = idesc_for("f16", m=128, n=128, a="bf16", b="bf16", d="f32", sparse=True, selector=1)
    want = 1 | (1 << 2) | (1 << 4) | (1 << 7) | (1 << 10) | (16 << 17) | (8 << 24)
    assert encode_idesc(x) == want == 0x08200495


def test_block_scaled_by_hand() -> None:
    # mxf8f6f4, e5m2 x e4m3, ue8m0 (bit 23), M 256 (16 << 24), N 256 (32 << 17), scale
    # factor A ID 2 (bits 29-30), B ID 3 (bits 4-5), B N-major (bit 16)
    x = idesc_for("mxf8f6f4", m=256, n=256, a="e5m2", b="e4m3", scale="ue8m0", a_scale_id=2,
                  b_scale_id=3, b_major="MN")
    want = (3 << 4) | (1 << 7) | (1 << 16) | (32 << 17) | (1 << 23) | (16 << 24) | (2 << 29)
    assert encode_idesc(x) == want == 0x50C100B0


def test_i8_and_ws_by_hand() -> None:
    # i8: S32 = 2 at bit 4, s8 = 1 at bits 7 and 10, saturate off; .ws M 32 (2 << 24),
    # N 64, maximum shift of 16 (2 at bits 30-31)
    x = idesc_for("i8", m=32, n=64, a="s8", b="u8", d="s32", max_shift=16)
    assert encode_idesc(x) == (2 << 4) | (1 << 7) | (8 << 17) | (2 << 24) | (2 << 30)
    assert idesc_types(decode_idesc("i8", encode_idesc(x))) == {"a": "s8", "b": "u8",
                                                                 "d": "s32"}


@pytest.mark.parametrize("kind", ["tf32", "f16", "f8f6f4", "i8", "mxf8f6f4", "mxf4",
                                  "mxf4nvf4"])
def test_decode_inverts_encode(kind: str) -> None:
    scaled = kind.startswith("mx")
    seen = set()
    for m, n, sel, major in itertools.product((64, 128, 256), (8, 64, 136, 256), range(4),
                                              ("K", "MN")):
        types = {"tf32": "tf32", "f16": "bf16", "f8f6f4": "e2m3", "i8": "s8"}
        t = "e2m1" if kind in ("mxf4", "mxf4nvf4") else types.get(kind, "e3m2")
        d = "" if scaled else {"i8": "s32"}.get(kind, "f32")
        x = idesc_for(kind, m=m, n=n, a=t, b=t, d=d, a_major=major, sparse=sel % 2 == 1,
                      selector=sel, scale="ue4m3" if scaled else "",
                      a_scale_id=sel if scaled else 0, b_scale_id=3 - sel if scaled else 0)
        word = encode_idesc(x)
        assert decode_idesc(kind, word) == x
        assert (decode_idesc(kind, word).m, decode_idesc(kind, word).n) == (m, n)
        seen.add(word)
    # every field change shows in the word: selectors 0 and 2 are both dense (selector 0) for a
    # plain kind, where a scaled kind's scale factor IDs still differ
    assert len(seen) == 3 * 4 * 2 * (4 if scaled else 3)


def test_refusals() -> None:
    with pytest.raises(IdescError, match="n_dim = 33"):
        encode_idesc(Idesc("f16", m_dim=8, n_dim=33))
    with pytest.raises(IdescError, match="m_dim = 3"):
        encode_idesc(Idesc("f16", m_dim=3, n_dim=8))
    with pytest.raises(IdescError, match="no field max_shift"):
        encode_idesc(Idesc("mxf4", m_dim=8, n_dim=8, max_shift=1))
    with pytest.raises(IdescError, match="no field a_scale_id"):
        encode_idesc(Idesc("f16", m_dim=8, n_dim=8, a_scale_id=1))
    with pytest.raises(IdescError, match="no format code for e2m1"):
        idesc_for("f16", m=128, n=64, a="e2m1", b="f16", d="f32")
    with pytest.raises(IdescError, match="D format"):
        idesc_for("tf32", m=128, n=64, a="tf32", b="tf32", d="f16")


def test_fields_do_not_overlap_and_fit_32_bits() -> None:
    for kind in ("f16", "mxf4"):
        used = 0
        for f in idesc_fields(kind):
            mask = ((1 << f.width) - 1) << f.lo
            assert not used & mask, f.name
            assert f.hi < 32
            used |= mask
    # the two layouts share every field but these
    plain = {f.name for f in FIELDS if "plain" in f.layouts}
    scaled = {f.name for f in FIELDS if "scaled" in f.layouts}
    assert plain - scaled == {"saturate", "d_format", "max_shift"}
    assert scaled - plain == {"b_scale_id", "scale_format", "a_scale_id", "k96"}
    # every field names its source: the PTX ISA's table, CuTe's bitfields for the scaled ones
    f = {x.name: x for x in FIELDS}
    assert f["max_shift"].source.startswith("PTX ISA 9.7.16.4.2")
    assert f["a_scale_id"].source.startswith("CuTe UMMA::InstrDescriptorBlockScaled")
    assert "PTX ISA" in f["n_dim"].source and "CuTe" in f["n_dim"].source


# ---- the cross-check against CuTe's bitfields ---------------------------------------------------

CUTE_NAMES = {"sparse_id2_": "sparse_selector", "sparse_flag_": "sparse",
              "saturate_": "saturate", "c_format_": "d_format", "a_format_": "a_format",
              "b_format_": "b_format", "a_negate_": "negate_a", "b_negate_": "negate_b",
              "a_major_": "a_major", "b_major_": "b_major", "n_dim_": "n_dim",
              "m_dim_": "m_dim", "max_shift_": "max_shift", "b_sf_id_": "b_scale_id",
              "scale_format_": "scale_format", "a_sf_id_": "a_scale_id", "k_size_": "k96"}


def cute_bitfields(text: str, union: str) -> list[tuple[str, int, int]]:
    """(name or "", first bit, width) of each bitfield of ``union``'s struct, in order."""
    body = text[text.index(f"union {union}\n"):]
    body = body[body.index("struct {"):body.index("};")]
    body = re.sub(r"//[^\n]*", "", body)
    out, bit = [], 0
    for name, width in re.findall(r"(\w*)\s*:\s*(\d+)\s*[,;]", body):
        out.append((name, bit, int(width)))
        bit += int(width)
    return out


@pytest.mark.parametrize(("union", "kind"), [("InstrDescriptor", "f16"),
                                             ("InstrDescriptorBlockScaled", "mxf4nvf4")])
def test_table_matches_cute_bitfields(union: str, kind: str) -> None:
    header = cutlass_include() / "cute" / "arch" / "mma_sm100_desc.hpp"
    got = cute_bitfields(header.read_text(encoding="utf-8"), union)
    assert sum(w for _n, _b, w in got) == 32
    cute = [(CUTE_NAMES[n], lo, w) for n, lo, w in got if n]
    mine = [(f.name, f.lo, f.width) for f in idesc_fields(kind)]
    assert cute == mine
