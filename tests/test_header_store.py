"""The CuTe header cache (formal/audit/store.py) on the wheel's headers whose reading skips
tokens: ``struct copy_cv<Src const, Dst>`` is read as ``copy_cv<Src,Dst>`` with a warning for
``const``, and the entry's check leaves the skipped tokens out as the reader did -- so such a
header is kept and read back, not parsed again on every run; a skip warning that is not the
text, a dropped one or an edited item is still refused and the header read afresh."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from formal.audit import header as cpp
from formal.audit import store

from .wheel import cutlass_include

# the headers of the wheel whose reading skips tokens inside what the entry keeps (cv
# qualifiers and references in a specialization's arguments, '||' in a template argument,
# a pointer type's '*>'), and one whose alias names the global scope (``::dim3``)
SKIPPING = ("cute/numeric/integral_constant.hpp", "cute/numeric/integral_ratio.hpp",
            "cute/numeric/numeric_types.hpp", "cute/pointer_sparse.hpp",
            "cute/tensor_impl.hpp", "cute/util/type_traits.hpp")
GLOBAL_SCOPE = "cute/container/cuda_types.hpp"


def _header(rel: str) -> tuple[Path, str]:
    path = cutlass_include() / rel
    return path, path.read_text(encoding="utf-8")


def _entry_path(where: Path, text: str) -> Path:
    return where / store.SUBFOLDER / f"{store.header_key(text)}.json"


def _kept(h: cpp.CppHeader) -> Any:
    return store.header_json(h)  # what an entry keeps (its locals and asserts are re-read)


@pytest.mark.parametrize("rel", (*SKIPPING, GLOBAL_SCOPE))
def test_a_header_read_with_skips_is_kept_and_read_back(
        rel: str, kept_cache_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, text = _header(rel)
    fresh = cpp.read_header(str(path), text)
    skips = [f for f in fresh.findings if f.message.startswith("skipped ")]
    assert (len(skips) > 0) == (rel in SKIPPING)
    assert store.header_lie(text, store.header_of_json(str(path), _kept(fresh))) == ""
    first = store.from_disk(path)
    entry = _entry_path(kept_cache_dir, text)
    written = entry.read_bytes()
    back = store.from_disk(path)
    assert _kept(first) == _kept(fresh) and _kept(back) == _kept(fresh)
    assert back.findings == fresh.findings
    assert entry.read_bytes() == written  # read, not removed and written again
    assert "cache ignored" not in capsys.readouterr().err


def _plant(where: Path, text: str, change: Any) -> dict[str, Any]:
    entry_path = _entry_path(where, text)
    entry = json.loads(entry_path.read_text(encoding="utf-8"))
    planted = json.loads(json.dumps(entry))
    change(planted["header"])
    assert planted != entry
    entry_path.write_text(json.dumps(planted), encoding="utf-8")
    return entry  # type: ignore[no-any-return]


def _refused(path: Path, text: str, where: Path, entry: dict[str, Any],
             capsys: pytest.CaptureFixture[str], why: str) -> None:
    again = store.from_disk(path)
    err = capsys.readouterr().err
    assert "the entry does not match" in err and why in err, err
    assert _kept(again) == _kept(cpp.read_header(str(path), text))
    assert json.loads(_entry_path(where, text).read_text(encoding="utf-8")) == entry  # rebuilt


def _skip_at(h: dict[str, Any], line: int, token: str) -> list[Any]:
    hits = [f for f in h["findings"] if f[1] == line and f[3].startswith(f"skipped '{token}'")]
    assert len(hits) >= 1, h["findings"]
    return hits[0]  # type: ignore[no-any-return]


def test_a_skip_warning_that_is_not_the_text_is_refused(
        kept_cache_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # type_traits.hpp line 101: `struct copy_cv<Src const, Dst> {`; the entry's warning for
    # 'const' moved one column on names "onst": not the header's text
    path, text = _header("cute/util/type_traits.hpp")
    store.from_disk(path)

    def move(h: dict[str, Any]) -> None:
        _skip_at(h, 101, "const")[2] += 1
    entry = _plant(kept_cache_dir, text, move)
    _refused(path, text, kept_cache_dir, entry, capsys,
             "the skipped 'const' at line 101 column 21 is not the header's text")


def test_a_dropped_skip_warning_is_refused(kept_cache_dir: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    # without its warning for 'const', copy_cv<Src,Dst> is not the text `copy_cv<Srcconst,Dst>`
    path, text = _header("cute/util/type_traits.hpp")
    store.from_disk(path)

    def drop(h: dict[str, Any]) -> None:
        h["findings"].remove(_skip_at(h, 101, "const"))
    entry = _plant(kept_cache_dir, text, drop)
    _refused(path, text, kept_cache_dir, entry, capsys, "struct copy_cv is not the header's text")


def test_an_edited_alias_beside_skipped_tokens_is_refused(
        kept_cache_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # integral_ratio.hpp: `using type = typename conditional<num == 0 || den == 1, C<num>,
    # R<num,den>>::type;` is kept as conditional<num==0,C<num>,R<num,den>>::type (the reader
    # skipped `|| den == 1`); the entry's R<num,den> made R<den,num>
    path, text = _header("cute/numeric/integral_ratio.hpp")
    store.from_disk(path)

    def swap(h: dict[str, Any]) -> None:
        raw = json.dumps(h["structs"])
        old = '[["R", [{"t": [["num", null]]}, {"t": [["den", null]]}]]'
        assert raw.count(old) >= 1
        h["structs"] = json.loads(raw.replace(
            old, '[["R", [{"t": [["den", null]]}, {"t": [["num", null]]}]]', 1))
    entry = _plant(kept_cache_dir, text, swap)
    _refused(path, text, kept_cache_dir, entry, capsys, "alias type is not the header's text")


def test_the_key_covers_the_code(monkeypatch: pytest.MonkeyPatch) -> None:
    # another reader (any file of the package changed) is another key: its entries are not read
    text = "using X = Layout<_1,_0>;\n"
    key = store.header_key(text)
    assert key == store.header_key(text) and key != store.header_key(text + " ")
    monkeypatch.setattr(store, "code_key", lambda: "another package")
    assert store.header_key(text) != key


@pytest.mark.parametrize("rel", ("cute/util/type_traits.hpp", "cute/tensor_impl.hpp"))
def test_the_canonical_text_is_the_one_character_walks(rel: str) -> None:
    # header_lie's reading of the text from an offset, taken a run at a time, is exactly the
    # one-character walk's, from every offset (inside comments, words and skipped tokens too)
    path, text = _header(rel)
    skipped = store._skipped(text, cpp.read_header(str(path), text))
    assert isinstance(skipped, dict) and skipped
    at = sorted(skipped)
    for start in range(0, len(text), 17):
        for want in (8, 40):
            for skip in (skipped, {}):
                assert store._canon(text, start, want, skip, sorted(skip)) == \
                    store._canon_plain(text, start, want, skip), (start, want)
    for start in at:
        assert store._canon(text, start, 60, skipped, at) == \
            store._canon_plain(text, start, 60, skipped)
    tricky = "a/b//c\n d/*e*/f /*/ g*/h typename ::x, ::y /* open"
    for start in range(len(tricky)):
        for want in (1, 5, 30):
            assert store._canon(tricky, start, want) == store._canon_plain(tricky, start, want)
