"""The caches are never a way in, and never a way to a false "proved".

(a) A hostile pickle (one whose loading would write a marker file) planted where the grammar
    tables are looked for -- under our file name and under Lark's own -- is never loaded: not
    from a folder others can write (a warning names the folder and why), and not from the
    user's own folder either (the tables are JSON: the file is "not valid JSON", ignored).
(b) A group-writable cache folder gives one warning and a clean run with the same report.
(c) A proof-cache entry that says Z3 proved a map which collides cannot turn the refutation
    into a proof: the enumeration refutes it, the entry is dropped with a warning, Z3 runs.
(d) A corrupt or foreign entry is ignored with a warning; a warm cache changes no report, and
    ``--no-cache`` writes nothing.
(e) Grammar tables edited in the user's own folder (the pseudocode's COMMENT pattern made to
    swallow ``>> 1``, which would turn ``row = groupID >> 1`` into a correct ``row = groupID``)
    fail their content hash: the formula is still refuted, a warning names the file, and the
    tables are rebuilt.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import pickle
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from formal import prove
from formal.api import model_of
from formal.base import cache as disk
from formal.base.grammar_files import _tables_key, build_parser, grammar_dir
from formal.cli import main
from formal.parse import grammars
from formal.parse.grammars import FRAGMENT_STARTS
from formal.prove.cache import SCHEMA, entry_key

from .test_never_lie import F32, HEAD, LAYOUTS, document

ROOT = Path(__file__).resolve().parents[1]
POSIX = hasattr(os, "geteuid")
pytestmark = pytest.mark.skipif(not POSIX, reason="POSIX owners and modes only")


@pytest.fixture(autouse=True)
def caches_on() -> Any:
    """Every test starts with the caches on (a ``--no-cache`` run before turns them off for
    its process) and no warning remembered."""
    disk.enable()
    disk._WARNED.clear()
    yield
    disk.enable()
    disk._WARNED.clear()


class _Hostile:
    """Unpickling this calls ``open(marker, 'w')``: the marker file appears."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (str(self.marker), "w"))


def _plant_hostile(folder: Path, marker: Path) -> list[Path]:
    """A hostile pickle under every name the grammar tables could be looked for by."""
    data = pickle.dumps(_Hostile(marker))
    planted = []
    tables = folder / "tables"
    tables.mkdir(parents=True, exist_ok=True)
    for name, start, positions in (("pseudocode", "start", False),
                                   ("fragment", list(FRAGMENT_STARTS), False),
                                   ("lines", "line", False)):
        text = (grammar_dir() / f"{name}.lark").read_text(encoding="utf-8")
        ours = tables / f"{name}-{_tables_key(text, [start, positions])[:16]}.json"
        import hashlib
        lark_own = folder / f"{name}-{hashlib.sha256(text.encode()).hexdigest()[:16]}" \
                            ".lark-tables"  # where ptxlayout 0.1 pointed Lark's pickle cache
        for p in (ours, lark_own):
            p.write_bytes(data)
            planted.append(p)
    return planted


def _fresh_prove(cache_dir: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PTXLAYOUT_CACHE_DIR=str(cache_dir), PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "formal", "prove", "--format", "json",
                           "--evidence", "none", *extra], capture_output=True, text=True,
                          env=env, cwd=str(ROOT), timeout=300)


# one small document of the catalog (wgmma's twelve layouts, all proved): it reads the three
# grammar tables and writes proofs as the whole catalog does, in a fraction of its time; the
# shared-folder test below proves the whole catalog from a fresh process
SMALL = ("--no-catalog", str(ROOT / "formal" / "catalog" / "wgmma.md"))


def test_a_hostile_pickle_in_a_shared_cache_folder_is_never_loaded(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    marker = tmp_path / "MARKER"
    _plant_hostile(shared, marker)
    for p in (shared, shared / "tables"):
        p.chmod(0o777)  # what a CI cache volume shared between jobs looks like
    pickle.loads(pickle.dumps(_Hostile(tmp_path / "PROBE")))
    assert (tmp_path / "PROBE").exists()  # the planted pickle is really hostile
    proc = _fresh_prove(shared)
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists()
    assert f"cache ignored: {shared}: the folder is writable by group or others" \
        in proc.stderr, proc.stderr
    # fragments, shared memory (60 layouts and tables, 14 K slices), tcgen05.ld/st, the
    # block-scale factors (10 mma.sync, 82 tcgen05.mma: M = 128, 64 and a pair's 256 and
    # 128), the data paths and packing formats, the sparse tcgen05.mma.sp metadata (one a
    # selector: 9 forms' 9 + 18 of .ws), the tcgen05.cp forms and decompression formats (6 + 2)
    assert json.loads(proc.stdout)["summary"]["layouts"] == \
        163 + 60 + 14 + 148 + 92 + 18 + 27 + 8


def test_a_hostile_pickle_in_the_users_own_folder_is_not_loaded_either(tmp_path: Path) -> None:
    own = tmp_path / "own"
    own.mkdir(mode=0o700)
    marker = tmp_path / "MARKER"
    _plant_hostile(own, marker)
    proc = _fresh_prove(own, *SMALL)
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists()  # the tables are read as JSON, never unpickled
    assert proc.stderr.count("not valid JSON") == 3, proc.stderr
    again = _fresh_prove(own, *SMALL)  # the rebuilt tables replaced the planted files
    assert again.returncode == 0 and again.stderr == "", again.stderr
    assert not marker.exists()


def test_a_group_writable_cache_folder_warns_and_runs_clean(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    clean = _fresh_prove(folder, *SMALL)
    assert clean.returncode == 0 and clean.stderr == "", clean.stderr
    assert json.loads(clean.stdout)["summary"]["layouts"] == 12
    folder.chmod(0o770)
    proc = _fresh_prove(folder, *SMALL)
    assert proc.returncode == 0
    lines = proc.stderr.splitlines()
    assert lines and all(line.startswith(f"ptxlayout: warning: cache ignored: {folder}")
                         and "writable by group or others" in line for line in lines), lines
    assert proc.stdout == clean.stdout  # the same report, built without the cache


def test_a_cache_folder_of_another_user_is_ignored(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root can give a folder away")
    folder = tmp_path / "theirs"
    (folder / "x").mkdir(mode=0o700, parents=True)
    os.chown(folder / "x", 65534, 65534)
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(folder))
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), disk.folder("x") as fd:
            assert fd is None
    finally:
        disk._WARNED.clear()
    assert "belongs to user id 65534" in err.getvalue()


def test_a_symlinked_cache_file_is_not_followed(tmp_path: Path) -> None:
    folder = tmp_path / "c"
    folder.mkdir(mode=0o700)
    target = tmp_path / "elsewhere.json"
    target.write_text('{"schema": "x"}')
    (folder / "e.json").symlink_to(target)
    err = io.StringIO()
    fd = os.open(folder, os.O_RDONLY)
    try:
        with contextlib.redirect_stderr(err):
            assert disk.read_json(fd, "e.json", str(folder)) is None
    finally:
        os.close(fd)
        disk._WARNED.clear()
    assert "symbolic link" in err.getvalue()


# ---- the proof cache ----------------------------------------------------------------------------


def _prove_in_process(*args: str) -> tuple[int, dict[str, Any], str]:
    prove.clear_cache()  # the in-process cache would answer before the disk is asked
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["prove", *args, "--format", "json", "--evidence", "none"])
    disk._WARNED.clear()
    return code, json.loads(out.getvalue()), err.getvalue()


def _status(report: dict[str, Any], name: str) -> str:
    [lay] = report["layouts"]
    return next(ob["status"] for ob in lay["obligations"] if ob["name"] == name)


def _kept(folder: Path) -> dict[str, dict[str, Any]]:
    """Every proof entry in the folder, by the file name it is kept under: the batches'
    (one file a run, formal/prove/cache.py) and any file of its own."""
    from formal.prove.cache import BATCH_SCHEMA
    out: dict[str, dict[str, Any]] = {}
    for p in sorted((folder / "proofs").glob("*.json")):
        value = json.loads(p.read_text())
        if p.name.startswith("batch-"):
            assert value["schema"] == BATCH_SCHEMA
            out.update(value["entries"])
        else:
            out[p.name] = value
    return out


def test_a_lying_proof_entry_cannot_turn_a_refutation_into_a_proof(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "cache"
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(folder))
    doc = document(tmp_path, "collision")
    [lay] = model_of([doc], use_catalog=False).layouts
    obligation = "cases+in-range+injective"
    key = entry_key(lay, obligation, None, 5000)
    from formal import __version__
    from formal.prove.cache import _z3_version
    lie = {"schema": SCHEMA, "tool": __version__, "z3": _z3_version(), "key": key,
           "obligation": obligation, "z3_answer": "unsat"}
    (folder / "proofs").mkdir(parents=True, mode=0o700)
    entry = folder / "proofs" / f"{key}.json"
    entry.write_text(json.dumps(lie))
    entry.chmod(0o600)
    code, report, err = _prove_in_process(doc, "--no-catalog")
    assert _status(report, "injective") == "refuted"
    assert code == 1  # a finding, not an internal error (2)
    assert f"cache ignored: {entry}: says Z3 proved {obligation}, but the enumeration" in err
    # the lie is gone: its key now holds Z3's own answers, the collision among them
    assert not entry.exists()
    kept = _kept(folder)[entry.name]
    assert kept["z3_answer"] == "sat" and kept["answers"]["injective"] == "refuted"
    assert report["summary"]["layouts"] == 1


def _plant(folder: Path, key: str, entry: dict[str, Any]) -> Path:
    from formal import __version__
    from formal.prove.cache import _z3_version
    (folder / "proofs").mkdir(parents=True, mode=0o700, exist_ok=True)
    path = folder / "proofs" / f"{key}.json"
    path.write_text(json.dumps({"schema": SCHEMA, "tool": __version__, "z3": _z3_version(),
                                "key": key, **entry}))
    path.chmod(0o600)
    return path


def test_a_refutation_is_kept_and_replayed_without_z3(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Z3's answers to a map whose combined query is sat are kept per obligation; the next
    # run asks Z3 nothing, the enumeration finds the same witnesses, the report is the same
    from formal.prove import encode, formula
    folder = tmp_path / "cache"
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(folder))
    doc = document(tmp_path, "collision")
    code, honest, err = _prove_in_process(doc, "--no-catalog", "--no-cache")
    assert code == 1 and _status(honest, "injective") == "refuted"
    code, first, err = _prove_in_process(doc, "--no-catalog")
    assert (code, first, err) == (1, honest, "")
    [batch] = (folder / "proofs").iterdir()  # one file: the run's batch
    assert batch.name.startswith("batch-")
    kept = {e["obligation"]: e for e in _kept(folder).values()}
    assert set(kept) == {"cases+in-range+injective", "surjective"}
    formulas = kept["cases+in-range+injective"]
    assert formulas["z3_answer"] == "sat" and formulas["answers"]["injective"] == "refuted"
    assert formulas["answers"]["in-range"] == "proved"
    # two lanes on one cell leave a cell empty: Z3 confirmed the hole the enumeration found
    assert kept["surjective"]["answers"] == {"surjective": "refuted"}
    calls: list[str] = []
    real = encode.solve

    def counting(name: str, *args: Any, **kw: Any) -> Any:
        calls.append(name)
        return real(name, *args, **kw)

    monkeypatch.setattr(formula, "solve", counting)
    code, warm, err = _prove_in_process(doc, "--no-catalog")
    assert (code, warm, err) == (1, honest, "") and calls == []


@pytest.mark.parametrize("name, lie", [
    ("collision", {"injective": "proved", "in-range": "refuted"}),  # hides the collision
    ("correct", {"injective": "refuted"}),  # invents one
])
def test_a_lying_answer_is_caught_by_the_enumeration(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str,
        lie: dict[str, str]) -> None:
    from formal.model.cells import map_of
    from formal.prove.formula import obligation_names
    folder = tmp_path / "cache"
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(folder))
    doc = document(tmp_path, name)
    code, honest, _err = _prove_in_process(doc, "--no-catalog", "--no-cache")
    [lay] = model_of([doc], use_catalog=False).layouts
    obligation = "cases+in-range+injective"
    answers = {n: "proved" for n in obligation_names(map_of(lay), None)}
    answers.update(lie)
    entry = _plant(folder, entry_key(lay, obligation, None, 5000),
                   {"obligation": obligation, "z3_answer": "sat", "answers": answers})
    code2, report, err = _prove_in_process(doc, "--no-catalog")
    assert (code2, report) == (code, honest)
    assert f"cache ignored: {entry}: says Z3 answered " in err and "removed" in err
    # the entry is replaced by Z3's own answer (unsat for the correct map)
    assert not entry.exists()
    assert _kept(folder)[entry.name]["z3_answer"] == ("unsat" if name == "correct" else "sat")


def test_a_lying_surjective_entry_cannot_hide_a_hole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "cache"
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(folder))
    doc = document(tmp_path, "hole")
    code, honest, _err = _prove_in_process(doc, "--no-catalog", "--no-cache")
    assert _status(honest, "surjective") == "refuted"
    [lay] = model_of([doc], use_catalog=False).layouts
    entry = _plant(folder, entry_key(lay, "surjective", None, 5000),
                   {"obligation": "surjective", "z3_answer": "unsat"})
    code2, report, err = _prove_in_process(doc, "--no-catalog")
    assert (code2, report) == (code, honest)
    assert f"cache ignored: {entry}: says Z3 answered surjective proved, but the " \
           "enumeration finds otherwise" in err
    assert not entry.exists()
    assert _kept(folder)[entry.name]["answers"] == {"surjective": "refuted"}


def test_a_lying_relation_entry_cannot_turn_a_refutation_into_a_proof(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # k8's A read as the first half of k16's is refuted (k16's a4 has no k8 element); an
    # entry that says Z3 proved it skips Z3, the enumeration refutes it, the entry goes
    from formal import __version__, catalog
    from formal.prove.cache import ProofCache, _z3_version, flush, relation_key
    from formal.prove.composes import Arrangement, Relation, prove_relations
    folder = tmp_path / "cache"
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(folder))
    k8, k16 = "mma.m16n8k8.A.f16-bf16", "mma.m16n8k16.A.f16-bf16"
    layouts = model_of([], use_catalog=True).layouts
    by = {lay.short_id: lay for lay in layouts}
    assert catalog.documents()
    back, ok = Relation(k8, k16, Arrangement("first half of K")), \
        Relation(k16, k8, Arrangement("first half of K"))
    store = ProofCache.open()
    assert store is not None
    key = relation_key(back, by[k8], by[k16], 5000)
    lie = {"schema": SCHEMA, "tool": __version__, "z3": _z3_version(), "key": key,
           "obligation": "composes", "z3_answer": "unsat"}
    entry = folder / "proofs" / f"{key}.json"
    entry.write_text(json.dumps(lie))
    entry.chmod(0o600)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        v_back, v_ok = prove_relations([back, ok], layouts, letters={k8: "a", k16: "a"},
                                       store=store)
    assert v_back.status == "refuted" and v_back.counterexample is not None
    assert v_back.counterexample["element"] == "a4"
    assert f"cache ignored: {entry}: says Z3 proved composes {k8} -> {k16}, but the " \
           "enumeration finds otherwise; removed" in err.getvalue()
    assert not entry.exists()
    # the honest one is written (in the run's batch), and a second run reads it (Z3
    # skipped, same verdicts)
    flush()
    good = f"{relation_key(ok, by[k16], by[k8], 5000)}.json"
    assert v_ok.status == "proved" and _kept(folder)[good]["z3_answer"] == "unsat"
    again = prove_relations([back, ok], layouts, letters={k8: "a", k16: "a"}, store=store)
    store.close()
    assert [v.to_json() for v in again] == [v_back.to_json(), v_ok.to_json()]
    assert store.hits == 2 and store.rejected == [key]  # the lie, then the honest entry


def test_a_corrupt_or_foreign_entry_is_ignored_with_a_warning(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "cache"
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(folder))
    doc = document(tmp_path, "correct")
    code, honest, err = _prove_in_process(doc, "--no-catalog")
    assert code == 0 and err == ""
    [batch] = (folder / "proofs").iterdir()  # the run's batch: the map's combined query
    [(name, good)] = _kept(folder).items()
    assert good["z3_answer"] == "unsat" and name == f"{good['key']}.json"
    code, warm, err = _prove_in_process(doc, "--no-catalog")
    assert (code, warm, err) == (0, honest, "")  # a hit changes nothing in the report
    entry = folder / "proofs" / name  # the same entry in a file of its own
    batched = json.loads(batch.read_text())
    for spoilt in (b"\x80garbage", json.dumps({**good, "tool": "0.0.0"}).encode(),
                   json.dumps({**good, "key": "0" * 64}).encode()):
        for p in (folder / "proofs").glob("batch-*.json"):
            p.unlink()
        entry.write_bytes(spoilt)
        code, report, err = _prove_in_process(doc, "--no-catalog")
        assert (code, report) == (0, honest)
        assert err.startswith(f"ptxlayout: warning: cache ignored: {entry}: "), err
        assert len(err.splitlines()) == 1
    # and spoilt inside a batch: the entry, then the batch itself
    entry.unlink()
    for p in (folder / "proofs").glob("batch-*.json"):
        p.unlink()
    batch.write_text(json.dumps({**batched, "entries": {name: {**good, "tool": "0.0.0"}}}))
    code, report, err = _prove_in_process(doc, "--no-catalog")
    assert (code, report) == (0, honest)
    assert err == f"ptxlayout: warning: cache ignored: {batch}:{name}: not an entry of this " \
        "version for this key (ignored)\n", err
    for p in (folder / "proofs").glob("batch-*.json"):
        p.unlink()
    batch.write_bytes(b"\x80garbage")
    code, report, err = _prove_in_process(doc, "--no-catalog")
    assert (code, report) == (0, honest)
    assert err.startswith(f"ptxlayout: warning: cache ignored: {batch}: not valid JSON"), err
    assert len(err.splitlines()) == 1


def test_no_cache_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "cache"
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(folder))
    code, _report, err = _prove_in_process(document(tmp_path, "correct"), "--no-catalog",
                                           "--no-cache")
    assert code == 0 and err == ""
    assert not folder.exists() or not any(folder.rglob("*.json"))


def test_a_cache_folder_is_made_private(tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "new"
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(folder))
    code, _report, _err = _prove_in_process(document(tmp_path, "correct"), "--no-catalog")
    assert code == 0
    assert stat.S_IMODE((folder / "proofs").stat().st_mode) == 0o700
    [entry] = (folder / "proofs").iterdir()
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600


def test_identical_formulas_are_proved_once(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # a document that states one seed three times asks Z3 exactly as often as the seed alone
    from formal.prove import encode, formula
    seed = sorted((ROOT.parent / "shared" / "seeds").glob("000*.txt"))
    if not seed:
        pytest.skip("no seeds")
    text = seed[0].read_text(encoding="utf-8")
    once, thrice = tmp_path / "once.txt", tmp_path / "thrice.txt"
    once.write_text(text, encoding="utf-8")
    thrice.write_text("\n\n".join([text] * 3), encoding="utf-8")
    calls: list[str] = []
    real = formula.solve

    def counting(name: str, *args: Any, **kw: Any) -> Any:
        calls.append(name)
        return real(name, *args, **kw)

    monkeypatch.setattr(formula, "solve", counting)
    monkeypatch.setattr(encode, "solve", counting)  # the maps asked together (unsat_together)
    counts = []
    for doc in (once, thrice):
        calls.clear()
        _code, report, _err = _prove_in_process(str(doc), "--no-catalog", "--no-cache")
        counts.append((len(calls), len(report["layouts"])))
    (z1, n1), (z3_, n3) = counts
    assert n3 == 3 * n1 and n1 > 0
    assert z1 > 0 and z3_ == z1


def test_the_progress_bar_waits_a_second_and_clears_its_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from formal import cli
    from formal.base.progress import Progress
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    now = [100.0]
    bar = Progress(clock=lambda: now[0])
    bar(1, 4)  # at once: nothing
    assert err.getvalue() == ""
    now[0] = 101.5
    bar(2, 4)
    assert err.getvalue() == "\rproving 2/4 layouts [" + "#" * 15 + " " * 15 + "]"
    now[0] = 102.0
    bar(4, 4)  # done: the line is wiped
    assert err.getvalue().endswith("\r" + " " * len("proving 4/4 layouts [" + "#" * 30 + "]")
                                   + "\r")
    assert cli._progress() is None  # a StringIO is not a terminal


def test_a_new_cache_folder_is_private_whatever_the_umask(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "fresh"
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(folder))
    old = os.umask(0o002)  # a umask that makes folders group-writable
    try:
        with disk.folder("tables") as fd:
            assert fd is not None  # no warning: the folder above was made private too
    finally:
        os.umask(old)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "tables").stat().st_mode) == 0o700


# ---- (e) edited grammar tables -------------------------------------------------------------

_COMMENT = '"name":"COMMENT","pattern":{"__type__":"PatternRE","_width":[2,18446744073709551616],' \
           '"flags":[],"raw":null,"value":"//[^\\n]*"},"priority":0}'
_SWALLOW = _COMMENT.replace('//[^\\n]*', '//[^\\n]*|>> 1').replace('"priority":0',
                                                                   '"priority":9')


def _prove_fresh_parser(doc: str) -> tuple[int, dict[str, Any], str]:
    """A run as a new process would make it: the pseudocode parser loaded from the folder
    (the document's kept parses, formal/parse/kept.py, forgotten: they would spare it)."""
    grammars.pseudo_parser.cache_clear()
    grammars.clear_memo()
    root = disk.root()
    if root:
        for kept in Path(root, "parses").glob("*.json"):
            kept.unlink()
    return _prove_in_process(doc, "--no-catalog")


def test_edited_grammar_tables_are_rebuilt_not_believed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "cache"
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(folder))
    doc = tmp_path / "shift.txt"
    formulas = LAYOUTS["correct"][0].replace("row = groupID for", "row = groupID >> 1 for")
    doc.write_text(HEAD.format(row=F32) + formulas + "\n", encoding="utf-8")
    code, honest, err = _prove_fresh_parser(str(doc))
    assert (code, _status(honest, "injective"), err) == (1, "refuted", "")
    [table] = (folder / "tables").glob("pseudocode-*.json")
    entry = json.loads(table.read_text())
    assert entry["tables"].count(_COMMENT) == 1
    edited = entry["tables"].replace(_COMMENT, _SWALLOW)
    table.write_text(json.dumps({**entry, "tables": edited}))
    # the plant is a real attack: Lark itself, given the edited tables, drops the shift
    from lark import Lark

    from formal.base.grammar_files import _decode_object
    lark = Lark._load_from_dict(**json.loads(edited, object_hook=_decode_object))
    assert [str(tok) for tok in lark.lex("groupID >> 1")] == ["groupID"]
    code, report, err = _prove_fresh_parser(str(doc))
    assert (code, report) == (1, honest)
    assert err == f"ptxlayout: warning: cache ignored: {table}: not usable tables (the tables " \
                  "do not match their hash (edited or damaged)); rebuilt\n", err
    rebuilt = json.loads(table.read_text())["tables"]  # Lark numbers its states afresh
    assert rebuilt.count(_COMMENT) == 1 and _SWALLOW not in rebuilt
    code, report, err = _prove_fresh_parser(str(doc))
    assert (code, report, err) == (1, honest, "")


def test_tables_said_to_come_from_another_grammar_are_rebuilt(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(tmp_path))
    build_parser("ptx_asm", "start", positions=False)
    [table] = (tmp_path / "tables").glob("ptx_asm-*.json")
    entry = json.loads(table.read_text())
    table.write_text(json.dumps({**entry, "grammar": "0" * 64}))
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        parser = build_parser("ptx_asm", "start", positions=False)
    assert err.getvalue() == f"ptxlayout: warning: cache ignored: {table}: not usable tables " \
                             "(built from another grammar text); rebuilt\n"
    again = json.loads(table.read_text())  # rebuilt, with the grammar's own hash
    assert again["grammar"] == entry["grammar"] and again["key"] == entry["key"]
    assert [str(t) for t in parser.lex("mma.sync.aligned.m8n8k4 ;")] == \
        ["mma", ".sync", ".aligned", ".m8n8k4", ";"]
