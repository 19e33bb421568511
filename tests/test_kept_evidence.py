"""GPU evidence files kept between runs (formal/prove/kept_evidence.py): a file read from its
kept entry is the file read from its bytes, field by field and type by type; a damaged,
edited or foreign entry is ignored with a warning and written again; a file whose bytes
changed is read again; the hardware verdicts are the same either way."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from formal.base import cache
from formal.prove import evidence as E
from formal.prove import kept_evidence as K

SHIPPED = E.default_dir()


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    where = tmp_path / "cache"
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(where))
    cache.enable()
    E._READ.clear()
    yield where
    E._READ.clear()


def _read(paths: list[Path], kept: bool) -> list[E.EvidenceFile]:
    E._READ.clear()  # this process's memo would answer without either path
    with cache.folder(K.KEPT_FOLDER) as fd:
        return [E._read_file(q, fd if kept else None) for q in paths]


def _fields(f: E.EvidenceFile) -> Any:
    tables = [{h: K.table_value(dict(getattr(f, part)), h) for h in getattr(f, part)}
              for part in ("discovered", "maps")]
    runs = [[(k, type(v), v) for k, v in vars(r).items() if k != "file"] for r in f.runs]
    return f.path, f.device, f.sm, f.driver, f.date, tables, runs


def test_a_kept_file_is_the_file_read_from_its_bytes(cache_dir: Path) -> None:
    assert SHIPPED is not None
    paths = sorted(SHIPPED.glob("*.json"))
    fresh = _read(paths, False)
    assert not (cache_dir / K.KEPT_FOLDER).exists() or \
        not list((cache_dir / K.KEPT_FOLDER).glob("*.json"))
    _read(paths, True)  # reads the bytes, writes the entries
    assert len(list((cache_dir / K.KEPT_FOLDER).glob("*.json"))) == len(paths)
    kept = _read(paths, True)
    assert [_fields(f) for f in kept] == [_fields(f) for f in fresh]
    # the shipped evidence has runs with differing D cells and kept tables: both were read
    assert sum(len(r.d_cells) for f in kept for r in f.runs) > 1000
    assert sum(len(f.maps) + len(f.discovered) for f in kept) > 10
    assert all(r.file is f for f in kept for r in f.runs)


@pytest.mark.parametrize("cells", [((1, 2), (3, 4)), ((1, 2, 7), (0, 0, -3)),
                                   ((1, 2), (3, 4, 5), (6,))])
def test_the_cells_of_a_run_read_back(cells: tuple[tuple[int, ...], ...]) -> None:
    assert K._cells(K._cells_flat(cells)) == cells


def _one(tmp: Path) -> Path:
    assert SHIPPED is not None
    src = sorted(SHIPPED.glob("*.json"))[1]
    q = tmp / "ev" / src.name
    q.parent.mkdir()
    q.write_bytes(src.read_bytes())
    return q


@pytest.mark.parametrize("damage", ["digest", "text", "schema", "not json", "cut", "runs",
                                    "nested selector", "nested hash", "device not a text",
                                    "odd hashes text", "odd hashes list", "cells cut short",
                                    "cells not numbers"])
def test_a_damaged_entry_is_ignored_and_written_again(
        damage: str, cache_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    q = _one(tmp_path)
    want = _fields(_read([q], False)[0])
    _read([q], True)
    [entry] = list((cache_dir / K.KEPT_FOLDER).glob("*.json"))
    data = entry.read_bytes()
    value = json.loads(data)  # one JSON object, the content in place
    key = value["key"]
    text = K.content_text(data, key)
    assert text is not None and json.loads(text) == value["content"]
    if damage == "digest":
        data = data.replace(value["digest"].encode(), b"0" * 64, 1)
    elif damage == "text":
        data = data.replace(b'"match"', b'"mismatch"', 1)
    elif damage == "schema":
        data = data.replace(b'"schema":3', b'"schema":99', 1)
    elif damage == "cut":
        data = data[:-100]
    elif damage == "not json":
        data = b"{"
    else:  # a consistent digest over a value out of its place
        c = json.loads(text)
        if damage == "runs":
            c["runs"]["mode"] = c["runs"]["mode"][1:]
        elif damage == "nested selector":
            c["runs"]["selector"][0] = json.loads("[" * 80 + "]" * 80)
        elif damage == "nested hash":
            c["runs"]["layout_hashes"][0] = ["A", [["x"]]]
        elif damage == "odd hashes text":  # a name without its hash: no run can be made
            c["runs"]["layout_hashes"][-1] = "A\n8148\nB"
        elif damage in ("cells cut short", "cells not numbers"):  # refused before any run is made
            c["runs"]["d_cells"]["0"] = [2, 1, 2, 3] if damage == "cells cut short" \
                else [2, 1, "3"]
        elif damage == "odd hashes list":
            c["runs"]["discovered_hashes"][-1] = ["A", 3, "B"]
        else:
            c["device"] = ["NVIDIA H100"]
        data = K.entry_bytes(key, json.dumps(c).encode())
    entry.write_bytes(data)
    capsys.readouterr()
    got = _read([q], True)[0]
    assert _fields(got) == want
    assert "cache ignored" in capsys.readouterr().err
    again = entry.read_bytes()  # written again from the bytes
    classes = (E.EvidenceFile, E.EvidenceRun)
    assert json.loads(again)["schema"] == K.SCHEMA == 3
    assert K._file_of(again, key, str(q), classes)


def test_an_entry_is_one_json_object_with_its_content_in_place(cache_dir: Path) -> None:
    """The content is written where it lies, not as a JSON text inside a JSON text: the
    file's JSON holds it as an object, and its digest is of the content's bytes."""
    assert SHIPPED is not None
    q = sorted(SHIPPED.glob("*.json"))[1]
    _read([q], True)
    [entry] = list((cache_dir / K.KEPT_FOLDER).glob("*.json"))
    data = entry.read_bytes()
    value = json.loads(data)
    assert list(value) == ["schema", "key", "digest", "content"]
    assert isinstance(value["content"], dict) and isinstance(value["content"]["runs"], dict)
    text = K.content_text(data, value["key"])
    assert text is not None and json.loads(text) == value["content"]
    import hashlib
    assert value["digest"] == hashlib.sha256(text.encode()).hexdigest()
    assert K.content_text(data, "0" * 64) is None  # another key's
    assert K.content_text(data.replace(b"}", b"} ", 1), value["key"]) is None


def test_changed_bytes_are_read_again(cache_dir: Path, tmp_path: Path) -> None:
    q = _one(tmp_path)
    first = _read([q], True)[0]
    doc = json.loads(q.read_text())
    doc["runs"][0]["result"] = "mismatch" if doc["runs"][0]["result"] != "mismatch" else "match"
    q.write_text(json.dumps(doc))
    second = _read([q], True)[0]
    assert second.runs[0].result == doc["runs"][0]["result"] != first.runs[0].result
    assert len(list((cache_dir / K.KEPT_FOLDER).glob("*.json"))) == 2


def test_no_cache_writes_nothing(cache_dir: Path, tmp_path: Path) -> None:
    q = _one(tmp_path)
    cache.disable()
    try:
        E._READ.clear()
        E.Evidence.load(q.parent)
    finally:
        cache.enable()
    assert not (cache_dir / K.KEPT_FOLDER).exists()


@pytest.mark.parametrize("pairs", [{}, {"A": "8148"}, {"A": "1", "C/D": "2", "smem": "3"},
                                   {"": ""}, {"A": "a\nb"}, {"A": 3}, {"A": None}])
def test_a_runs_operand_hashes_read_back(pairs: dict[str, Any]) -> None:
    kept = K._pairs_text(pairs)
    assert isinstance(kept, str) == all(type(v) is str and "\n" not in v for v in pairs.values())
    back = K._pairs(json.loads(json.dumps(kept)))
    assert back == pairs and [type(v) for v in back.values()] == [type(v) for v in pairs.values()]


def test_a_run_whose_selector_is_not_a_number_is_read_from_the_bytes(
        cache_dir: Path, tmp_path: Path) -> None:
    """A selector (or an operand's hash) that is a list or an object is kept by no entry, so
    an entry's every value sits at a fixed depth and is read without a depth walk; the file
    is read from its bytes each time, the same as it was."""
    q = _one(tmp_path)
    doc = json.loads(q.read_text())
    doc["runs"][0]["selector"] = [[1]]
    q.write_text(json.dumps(doc))
    first = _read([q], True)[0]
    assert first.runs[0].selector == [[1]]
    assert not list((cache_dir / K.KEPT_FOLDER).glob("*.json"))
    assert _fields(_read([q], True)[0]) == _fields(first)


def test_kept_runs_are_made_only_where_read(cache_dir: Path) -> None:
    """A file read from its kept entry makes no run until one is read: the index by variant
    and by an operand's hash answers with the very runs the whole listing then holds, in the
    order a scan of the file read from its bytes gives."""
    assert SHIPPED is not None
    paths = sorted(SHIPPED.glob("*.json"))
    fresh = E.Evidence(_read(paths, False))
    _read(paths, True)  # writes the entries
    kept_files = _read(paths, True)
    assert all(f.kept is not None and not any(f.kept._made) for f in kept_files)
    ev = E.Evidence(kept_files)
    one = next(r for r in fresh.runs if r.layout_hashes.get("smem"))
    key, h = one.key, one.layout_hashes["smem"]
    got = ev.runs_of([key])
    with_h = ev.runs_with("smem", h)
    made = sum(x is not None for f in kept_files for x in f.kept._made)
    assert 0 < made < len(fresh.runs) // 4
    every = ev.runs  # now every run, the ones made before among them
    assert len(every) == len(fresh.runs)
    assert all(any(r is x for x in every) for r in [*got, *with_h])
    assert [vars(r) | {"file": r.file.path} for r in got] == \
        [vars(r) | {"file": r.file.path} for r in fresh.runs_of([key])]
    assert [r.key for r in with_h] == [r.key for r in fresh.runs
                                       if r.layout_hashes.get("smem") == h]
    assert [r.key for r in ev.runs_with("A", "nothing")] == []


def _run_by_run(q: Path) -> E.EvidenceFile:
    """The file at ``q`` read as it was before its runs were read by column: each run made
    by ``EvidenceRun.of`` from its JSON object."""
    doc = json.loads(q.read_text())
    f = E.EvidenceFile(str(q), doc["device"], int(doc.get("sm") or 0),
                       str(doc.get("driver", "?")), str(doc.get("date", "")),
                       discovered=dict(doc.get("discovered") or {}),
                       maps=dict(doc.get("maps") or {}))
    f.runs = [E.EvidenceRun.of(r, f) for r in doc["runs"]]
    return f


def test_a_first_reading_by_column_is_the_reading_run_by_run(cache_dir: Path) -> None:
    """A file read from its bytes holds its runs by column (``columns_of``); every run made
    from them is the run ``EvidenceRun.of`` makes, field by field and type by type, and the
    entry written from the columns is the one written from the runs."""
    assert SHIPPED is not None
    paths = sorted(SHIPPED.glob("*.json"))
    for q, f in zip(paths, _read(paths, False), strict=True):
        assert f.kept is not None and not any(f.kept._made)  # no run made by reading
        slow = _run_by_run(q)
        assert f._columns() is not None and K._content(f) == K._content(slow)
        assert json.dumps(K._content(f)) == json.dumps(K._content(slow))
        assert _fields(f)[1:] == _fields(slow)[1:]


@pytest.mark.parametrize("change", [
    {"key": None}, {"mode": 3}, {"trials": "5"}, {"trials": True}, {"trials": 2.0},
    {"trials": False}, {"trials": 0}, {"erratum": 0}, {"erratum": ["x"]}, {"plant": None},
    {"detail": {"a": 1}}, {"layout_hashes": [["A", "8148"]]}, {"layout_hashes": []},
    {"layout_hashes": {"A": 3, "B": None}}, {"discovered_hashes": {"A": "x\ny"}},
    {"d_cells": [[1.0, 2]]}, {"d_cells": [[1, 2], [3]]}, {"d_cells": [[]]}, {"d_cells": 0},
    {"d_cells": [[True, 2]]}, {"selector": 1.5}, {"selector": {"s": 1}}])
def test_a_run_of_another_type_reads_as_it_always_did(
        change: dict[str, Any], cache_dir: Path, tmp_path: Path) -> None:
    """A value not of its plain type (a number as a text, a selector that is an object) is
    read by ``EvidenceRun.of``, converted as it always was; a false one takes its default
    either way; both readings give the same runs."""
    q = _one(tmp_path)
    doc = json.loads(q.read_text())
    doc["runs"][3].update(change)
    q.write_text(json.dumps(doc))
    got = _read([q], False)[0]
    assert _fields(got)[1:] == _fields(_run_by_run(q))[1:]


@pytest.mark.parametrize("run", ['"a run"', "[1]", '{"d_cells": [["x"]]}',
                                 '{"layout_hashes": 5}'])
def test_a_run_that_cannot_be_read_fails_as_it_always_did(
        run: str, cache_dir: Path, tmp_path: Path) -> None:
    q = _one(tmp_path)
    doc = json.loads(q.read_text())
    doc["runs"][1] = json.loads(run)
    q.write_text(json.dumps(doc))
    with pytest.raises(Exception) as slow:
        _run_by_run(q)
    with pytest.raises(type(slow.value), match=re.escape(str(slow.value))):
        _read([q], True)
    assert not list((cache_dir / K.KEPT_FOLDER).glob("*.json"))


def test_a_table_is_written_as_its_own_text(cache_dir: Path) -> None:
    """A table's text is written once a process and given again only for a value of the
    very same types and order: ``1``, ``1.0`` and ``True`` are told apart, so are two
    orders of the same keys; every shipped table's text is its own JSON."""
    K._WRITTEN.clear()
    values = [{"columns": ["lane", "row"], "rows": [[1, 2]]},
              {"columns": ["lane", "row"], "rows": [[1.0, 2]]},
              {"columns": ["lane", "row"], "rows": [[True, 2]]},
              {"rows": [[1, 2]], "columns": ["lane", "row"]},
              {"columns": ["lane", "row"], "rows": [[1, 2]]}]
    for t in [*values, *values]:
        assert K._table_text("9f2e", t) == json.dumps(t, separators=(",", ":"))
    assert SHIPPED is not None
    for f in _read(sorted(SHIPPED.glob("*.json")), False):
        written = K._content(f)["tables"]
        assert written == {part: {h: json.dumps(t, separators=(",", ":"))
                                  for h, t in getattr(f, part).items()}
                           for part in ("discovered", "maps")}
