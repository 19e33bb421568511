"""Issue 29, class 1: hostile or unreadable input is exit 2 with one line, never a hang or a
traceback.

Every case runs the console entry point and asserts the exit status, the one stderr line and
that no "internal error" or traceback reached the user: a missing document, a folder, an
empty or binary file, a FIFO (which an ``open()`` would wait on forever) and ``/dev/zero``
(size 0, endless) for ``prove``; FIFOs where a cache entry, an evidence file or a CuTe
header should be; JSON nested thousands deep in ``--accept``, the ledger, an evidence file
and a cache entry (which is removed, so that later runs are not troubled); an evidence file
that is not one (``[]``, ``{"a": 1}``); 300 chained definitions; 200 nested ``Shape<``; a
300-character ``-o`` name; an ASCII-only stdout; a numpy-only install.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from formal.base.files import (
    FileProblem,
    load_json,
    parse_json,
    read_limited,
    text_too_deep,
    too_deep,
)
from formal.cli import main

from .conftest import ROOT

DEEP = "[" * 5000 + "]" * 5000


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert "internal error" not in err and "Traceback" not in err, err
    assert len(lines) == 1, err
    return lines[0]


def fifo(path: Path) -> Path:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    os.mkfifo(path)
    return path


# ---- the helper itself --------------------------------------------------------------------------


def test_read_limited_refuses_what_is_not_a_plain_file_before_opening_it(tmp_path: Path) -> None:
    with pytest.raises(FileProblem, match="it is a folder, not a plain file"):
        read_limited(tmp_path)
    with pytest.raises(FileProblem, match="it is a FIFO, not a plain file"):
        read_limited(fifo(tmp_path / "f"))  # would block forever if it were opened
    if Path("/dev/zero").exists():
        with pytest.raises(FileProblem, match="character device"):
            read_limited("/dev/zero")
    big = tmp_path / "big"
    big.write_bytes(b"x" * 11)
    with pytest.raises(FileProblem, match="it is 11 bytes; the limit is 10"):
        read_limited(big, 10)
    assert read_limited(big, 11) == b"x" * 11
    with pytest.raises(FileNotFoundError):
        read_limited(tmp_path / "missing")


def test_parse_json_refuses_deep_nesting_and_keeps_shallow_values() -> None:
    with pytest.raises(FileProblem, match="nested deeper than 64"):
        parse_json(DEEP)
    with pytest.raises(FileProblem, match="nested deeper than 64"):
        parse_json("[" * 65 + "]" * 65)  # too deep for us, though json.loads takes it
    assert parse_json("[" * 64 + "]" * 64) is not None
    assert parse_json('{"a": [1, {"b": 2}]}') == {"a": [1, {"b": 2}]}
    with pytest.raises(FileProblem, match="not UTF-8"):
        parse_json(b"\xff\xfe")


@pytest.mark.parametrize("text", [
    "[]", "1", '"[[["', '{"a": [1, {"b": 2}]}', "[" * 64 + "]" * 64, "[" * 65 + "]" * 65,
    '[{"x": "]]]]", "y": [["\\"[[["]]}]', "[" + "{}," * 5 + "[[[[]]]]]",
    '{"a": ' * 64 + "1" + "}" * 64, '{"a": ' * 65 + "1" + "}" * 65,
    '[{"a": ' * 32 + "1" + "}]" * 32, '[{"a": ' * 33 + "1" + "}]" * 33])  # braces in brackets
def test_the_depth_of_a_text_is_the_depth_of_its_value(text: str) -> None:
    """``text_too_deep`` (asked before the parse, for readers that build values as they parse)
    says what ``too_deep`` says of the parsed value, brackets inside strings not counted."""
    import json
    assert text_too_deep(text) == too_deep(json.loads(text))
    # parse_json asks the text, once it parsed: it refuses exactly what the walk refuses
    for data in (text, text.encode()):
        if too_deep(json.loads(text)):
            with pytest.raises(FileProblem, match="nested deeper than 64"):
                parse_json(data)
        else:
            assert parse_json(data) == json.loads(text)


@pytest.mark.parametrize("text", ['["\\\\", ["\\\""]]', '{"\\\\[": [[]]}',
                                  r'[["\u005c\\", "]"]]', '"\\\\\\\\"'])
def test_escapes_do_not_hide_a_bracket_from_the_depth(text: str) -> None:
    """Backslashes before a quote or a bracket inside a string: the depth of the text is
    the depth of its value, at the limit and over it."""
    import json
    value = json.loads(text)
    for limit in range(4):
        assert text_too_deep(text, limit) == too_deep(value, limit)


def test_the_shipped_evidence_is_not_too_deep() -> None:
    """Each evidence file the package ships: its text's depth is its value's."""
    import json

    from formal.prove.evidence import default_dir
    where = default_dir()
    assert where is not None
    files = sorted(where.glob("*.json"))
    assert files
    for path in files:
        data = path.read_bytes()
        assert text_too_deep(data, 3) == too_deep(json.loads(data), 3) is True
        assert parse_json(data) == json.loads(data)


# ---- prove: an input that cannot be read is 2, with one line ------------------------------------


@pytest.mark.parametrize("what", ["missing", "folder", "empty", "binary", "fifo", "devzero",
                                  "oversize"])
def test_prove_of_an_unreadable_document_is_a_usage_error(
        what: str, tmp_path: Path, seeds: dict[str, Path],
        capsys: pytest.CaptureFixture[str]) -> None:
    path, extra, said = tmp_path / what, [], ""
    if what == "missing":
        said = "No such file or directory"
    elif what == "folder":
        path.mkdir()
        said = "it is a folder, not a plain file"
    elif what == "empty":
        path.write_text("\n")
        said = "the document is empty"
    elif what == "binary":
        path.write_bytes(b"\x00\x01" * 100)
        said = "binary data"
    elif what == "fifo":
        fifo(path)
        said = "it is a FIFO, not a plain file"
    elif what == "devzero":
        if not Path("/dev/zero").exists():
            pytest.skip("no /dev/zero")
        path, said = Path("/dev/zero"), "it is a character device, not a plain file"
    else:
        path = seeds["000"]
        extra, said = ["--max-size", "100"], "the limit is 100 (raise it with --max-size)"
    code, _out, err = run(capsys, "prove", "--no-catalog", *extra, str(path))
    line = one_line(err)
    assert code == 2
    assert line.startswith(f"ptxlayout: cannot read the input: {path}:1:1: error: input: ")
    assert said in line


def test_a_chain_of_300_definitions_is_a_finding_not_a_recursion_error(
        tmp_path: Path, seeds: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    text = seeds["000"].read_text(encoding="utf-8")
    head = "groupID           = %laneid >> 2\n"
    assert head in text
    chain = "\n".join(["x0 = %laneid >> 2"] + [f"x{k} = x{k - 1}" for k in range(1, 300)])
    doc = tmp_path / "chain.txt"
    doc.write_text(text.replace(head, chain + "\ngroupID = x299\n", 1), encoding="utf-8")
    code, out, err = run(capsys, "prove", "--no-catalog", str(doc))
    assert code == 1 and "internal error" not in err
    assert "is reached through over 32 definitions" in out
    code, out, err = run(capsys, "diff", str(seeds["000"]), str(doc))
    assert code == 1 and "internal error" not in err
    assert "not-comparable  mma.m16n8k16.A.s8-u8" in out


# ---- JSON files named on the command line -------------------------------------------------


def test_deeply_nested_accept_and_ledger_are_usage_errors(
        tmp_path: Path, seeds: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text(DEEP)
    code, _out, err = run(capsys, "prove", "--accept", str(deep), str(seeds["000"]))
    assert code == 2
    assert one_line(err) == f"ptxlayout: cannot read {deep}: JSON nested deeper than 64 levels"
    ledger = tmp_path / "led"
    ledger.mkdir()
    (ledger / "ledger.json").write_text(DEEP)
    code, _out, err = run(capsys, "prove", "--check-ledger", str(ledger), str(seeds["000"]))
    assert code == 2
    assert one_line(err) == (f"ptxlayout: cannot read the ledger: {ledger / 'ledger.json'}: "
                             "JSON nested deeper than 64 levels")
    (ledger / "ledger.json").unlink()
    fifo(ledger / "ledger.json")
    code, _out, err = run(capsys, "prove", "--check-ledger", str(ledger), str(seeds["000"]))
    assert code == 2 and "it is a FIFO, not a plain file" in one_line(err)


@pytest.mark.parametrize("content", ["[]", '{"a": 1}', DEEP, "fifo"])
def test_an_evidence_folder_holding_no_evidence_is_a_usage_error(
        content: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "a.json"
    if content == "fifo":
        fifo(path)
        said = "it is a FIFO, not a plain file"
    else:
        path.write_text(content)
        said = ("JSON nested deeper than 64 levels" if content == DEEP else
                "not an evidence file (a JSON object with a 'device' and a list of 'runs')")
    code, _out, err = run(capsys, "evidence", str(tmp_path))
    assert code == 2
    assert one_line(err) == f"ptxlayout: {path}: {said}"
    if content == DEEP:
        with pytest.raises(FileProblem, match="nested deeper than 64 levels"):
            load_json(path)


def test_a_bad_cache_entry_is_discarded_with_a_warning_and_a_fifo_never_blocks(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from formal.base import cache
    from formal.prove.cache import ProofCache, flush
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(tmp_path / "c"))
    store = ProofCache.open()
    assert store is not None and store.fd is not None
    (tmp_path / "c" / "proofs" / "deep.json").write_text(DEEP)
    fifo(tmp_path / "c" / "proofs" / "pipe.json")
    assert store.answers("deep", "injective", ["injective"]) is None
    assert store.answers("pipe", "injective", ["injective"]) is None  # returned: no block
    err = capsys.readouterr().err
    assert "deep.json: JSON nested deeper than 64 levels; removed" in err
    assert "pipe.json: it is not a plain file" in err
    assert not (tmp_path / "c" / "proofs" / "deep.json").exists()
    store.store("pipe", "injective")  # kept in the run's batch; the FIFO is never read again
    flush()
    store.close()
    again = ProofCache.open()
    assert again is not None and again.answers("pipe", "injective", ["injective"]) == \
        {"injective": "proved"}
    again.close()
    assert capsys.readouterr().err == ""
    assert cache.root() == str(tmp_path / "c")


def test_a_shared_cache_folder_is_refused_before_anything_is_made_in_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from formal.base import cache
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(shared))
    with cache.folder("tables") as fd:
        assert fd is None
    assert list(shared.iterdir()) == []  # no 'tables' made in /tmp's like
    assert "the folder is writable by group or others" in capsys.readouterr().err


# ---- headers, outputs, streams, installs --------------------------------------------------------


def test_audit_of_a_fifo_or_200_nested_shapes_is_a_usage_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    deep = tmp_path / "deep_traits_sm80.hpp"
    deep.write_text("namespace cute {\nstruct MMA_Traits<SM80_16x8x8_F16F16F16F16_TN> {\n"
                    "  using Shape_MNK = " + "Shape<" * 200 + "_1" + ">" * 200 + ";\n};\n}\n")
    code, _out, err = run(capsys, "audit", "cute", str(deep))
    assert code == 2 and "internal error" not in err
    assert f"{deep}:0:0: warning: cute-syntax: nested too deeply to read" in err
    pipe = fifo(tmp_path / "pipe_traits_sm80.hpp")
    code, _out, err = run(capsys, "audit", "cute", str(pipe))
    assert code == 2 and f"{pipe}:0:0: warning: cute-input: not a plain file" in err


def test_an_output_name_of_300_characters_is_a_usage_error(
        tmp_path: Path, seeds: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    name = str(tmp_path / ("a" * 300))
    code, _out, err = run(capsys, "extract", "-o", name, str(seeds["000"]))
    assert code == 2
    assert one_line(err) == f"ptxlayout: cannot write {name}: File name too long"


def _python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, **env}, timeout=300)


def test_an_ascii_stdout_gets_escapes_not_a_unicode_error(seeds: dict[str, Path]) -> None:
    p = _python(f"import sys; from formal.cli import main; "
                f"sys.exit(main(['prove', '--no-catalog', {str(seeds['000'])!r}]))",
                PYTHONIOENCODING="ascii")
    assert p.returncode == 1, p.stderr
    assert "internal error" not in p.stderr and "Traceback" not in p.stderr
    assert "\\u2713 A        .u8/.s8" in p.stdout  # the check mark, escaped


def test_a_numpy_only_install_names_what_prove_is_missing() -> None:
    p = _python("import sys; sys.modules['lark'] = None\n"
                "from formal.cli import main; sys.exit(main(['prove']))")
    assert p.returncode == 2
    assert one_line(p.stderr) == (
        "ptxlayout: prove needs the prover's dependencies, and 'lark' is not installed: pip "
        "install ptxlayout (z3-solver, sympy, lark); a numpy-only install runs 'ptxlayout gpu "
        "--layouts FILE' only")


# ---- class 2: every output is written all or nothing ------------------------------------


def _failing_write(monkeypatch: pytest.MonkeyPatch) -> None:
    """os.write in base.files fails after the first call, as a full disk would."""
    import errno

    from formal.base import files
    calls = {"n": 0}
    real = os.write

    def write(fd: int, data: bytes | memoryview) -> int:
        calls["n"] += 1
        if calls["n"] > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, bytes(data[:10]))

    monkeypatch.setattr(files.os, "write", write)


def test_a_failed_write_of_o_or_the_ledger_leaves_the_old_file(
        tmp_path: Path, seeds: dict[str, Path], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "report.txt"
    out.write_text("the old report\n")
    ledger = tmp_path / "led"
    ledger.mkdir()
    (ledger / "ledger.json").write_text('{"old": true}\n')
    _failing_write(monkeypatch)
    code, _o, err = run(capsys, "extract", "-o", str(out), str(seeds["000"]))
    assert code == 2
    assert one_line(err) == f"ptxlayout: cannot write {out}: No space left on device"
    assert out.read_text() == "the old report\n"
    code, _o, err = run(capsys, "prove", "--no-catalog", "--ledger", str(ledger),
                        str(seeds["000"]))
    assert code == 2
    assert one_line(err) == (f"ptxlayout: cannot write the ledger to {ledger}: "
                             "No space left on device")
    assert (ledger / "ledger.json").read_text() == '{"old": true}\n'
    assert sorted(p.name for p in tmp_path.rglob("*") if ".tmp" in p.name) == []


def test_write_atomic_keeps_the_mode_of_the_file_it_replaces(tmp_path: Path) -> None:
    from formal.base.files import write_atomic
    p = tmp_path / "x.json"
    p.write_text("old")
    p.chmod(0o640)
    write_atomic(p, "new")
    assert p.read_text() == "new" and (p.stat().st_mode & 0o777) == 0o640
    write_atomic(tmp_path / "fresh", b"\x00\x01")
    assert (tmp_path / "fresh").read_bytes() == b"\x00\x01"
    assert [q.name for q in tmp_path.iterdir() if q.name.startswith(".")] == []


def test_write_atomic_writes_a_device_or_a_fifo_in_place(tmp_path: Path) -> None:
    """A character device (``--output /dev/null``, bench/fresh.py's; here a terminal of the
    test's own) is written in place: no file is moved over it (run as root, that made
    /dev/null a plain file for every program); a FIFO gets the text and stays a FIFO."""
    import os
    import stat
    import threading

    from formal.base.files import write_atomic
    leader, follower = os.openpty()
    try:
        tty = os.ttyname(follower)
        write_atomic(tty, "a report")
        assert stat.S_ISCHR(os.stat(tty).st_mode)
        assert os.read(leader, 100).replace(b"\r", b"") == b"a report"
    finally:
        os.close(leader)
        os.close(follower)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_atomic(fifo, "through the pipe")
    reader.join(10)
    assert got == [b"through the pipe"] and stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(q.name for q in tmp_path.iterdir()) == ["pipe"]


# ---- class 3: Ctrl-C is exit 130 with one line -----------------------------------------

# a query Z3 needs seconds for (a product of 64-bit words): the interrupt lands inside check()
HARD_QUERY = """
import os, signal, threading, z3
def analyze(*_a, **_k):
    x, y = z3.BitVecs("x y", 64)
    threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()
    for k in range(5):
        s = z3.Solver()
        s.set("timeout", 10000)
        s.add(x * y == 0x1234567890abcdef + 2**63 + 7 + k, x > 1, y > 1,
              x * x * y * y * x == y * 3 + 123457, (x ^ y) * (x + y) == 77777777777)
        print("z3 answered", s.check(), s.reason_unknown(), flush=True)
    print("the interrupt was lost", flush=True)
"""


@pytest.mark.parametrize("how", ["python", "z3"])
def test_an_interrupt_exits_130_with_one_line_and_no_report(how: str) -> None:
    body = ("import os, signal\n"
            "def analyze(*_a, **_k):\n    os.kill(os.getpid(), signal.SIGINT)\n"
            if how == "python" else HARD_QUERY)
    p = _python(body + "import sys, formal.api\nformal.api.analyze = analyze\n"
                "from formal.cli import main\nsys.exit(main(['prove']))")
    assert (p.returncode, p.stderr) == (130, "ptxlayout: interrupted\n"), p.stdout + p.stderr
    assert "lost" not in p.stdout and "unknown" not in p.stdout, p.stdout


def test_ctrl_c_during_a_real_catalog_run(tmp_path: Path) -> None:
    # The catalog with a document of 60,000 distinct prose lines: each line is read by
    # grammar/lines.lark (no cache), some ten seconds of CPU on any machine, so the signal
    # sent two seconds in finds the run reading or proving, however fast or loaded the
    # machine (the catalog alone now ends within a few seconds).
    words = ("operand", "register", "vector", "warp", "lane", "shared", "state", "value")
    big = tmp_path / "prose.txt"
    big.write_text("\n".join(f"The {words[k % 8]} {k} of the {words[k * 7 % 8]} holds "
                             f"{k * 7919 % 100003} bits." for k in range(60_000)),
                   encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "formal", "prove", "--no-cache", str(big)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    import time
    time.sleep(2)
    proc.send_signal(__import__("signal").SIGINT)
    out, err = proc.communicate(timeout=120)
    assert (proc.returncode, err, out) == (130, "ptxlayout: interrupted\n", "")


# ---- class 4: memory bounded by the input, whatever its lines -----------------------------


def _peak_over_baseline(data: bytes, suffix: str, tmp: Path, *argv: str) -> tuple[int, int]:
    """(exit status, peak resident bytes of ``ptxlayout ARGV FILE`` less that of the same
    command on a one-line file), each child its own process (``VmHWM``)."""
    def peak(content: bytes, name: str) -> tuple[int, int]:
        path = tmp / name
        path.write_bytes(content)
        hwm = tmp / f"{name}.hwm"
        probe = ("import atexit, runpy, sys\n"
                 "def _hwm():\n"
                 "    for line in open('/proc/self/status'):\n"
                 "        if line.startswith('VmHWM:'):\n"
                 f"            open({str(hwm)!r}, 'w').write(line.split()[1])\n"
                 "atexit.register(_hwm)\n"
                 "sys.argv = ['ptxlayout', *sys.argv[1:]]\n"
                 "runpy.run_module('formal', run_name='__main__')\n")
        code = subprocess.run([sys.executable, "-c", probe, *argv, str(path)], cwd=ROOT,
                              capture_output=True, timeout=600).returncode
        return code, int(hwm.read_text()) * 1024
    _c, base = peak(b"x\n", f"small{suffix}")
    code, big = peak(data, f"big{suffix}")
    return code, big - base


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
@pytest.mark.parametrize("kind", ["txt", "html"])
def test_one_4_mb_line_peaks_under_20_times_its_size(kind: str, tmp_path: Path) -> None:
    line = b"x" * 4_000_000  # was 3.1 GB: one Lark token a character
    data = line + b"\n" if kind == "txt" else b"<html><body><section><h1>x</h1><p>" + line \
        + b"</p></section></body></html>\n"
    code, over = _peak_over_baseline(data, f".{kind}", tmp_path, "prove", "--no-catalog")
    assert code == 1 and over < 20 * len(data), (code, over)


def test_a_long_line_is_named_as_unread(tmp_path: Path, seeds: dict[str, Path],
                                        capsys: pytest.CaptureFixture[str]) -> None:
    doc = tmp_path / "long.txt"
    text = seeds["000"].read_text(encoding="utf-8")
    doc.write_text(text + "\n" + "row = " * 4000 + "\n", encoding="utf-8")
    code, out, _err = run(capsys, "prove", "--no-catalog", str(doc))
    n = len(text.split("\n")) + 1
    assert f"{doc}:{n}:1: warning: limit: this line has more than 16384 characters: not read, " \
           "so nothing on it was checked" in out
    assert code == 1  # the seed's own erratum; its other layouts are all read and proved
    assert "✓ A        .u8/.s8" in out


def test_a_header_over_4_mib_is_refused_unread(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    big = tmp_path / "big_traits_sm80.hpp"
    big.write_bytes(b"namespace cute {\n" + b"using X = int;\n" * 300_000 + b"}\n")
    code, _out, err = run(capsys, "audit", "cute", str(big))
    assert code == 2
    assert f"{big}:0:0: warning: header: cannot read: it is {big.stat().st_size} bytes; the " \
           "limit is 4194304" in err


# ---- class 5: exit codes that say what happened ----------------------------------------------


def test_ptx_for_an_architecture_no_kernel_is_for_is_a_usage_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "ptx", "--arch", "sm_10", "--out", str(tmp_path / "k"))
    assert code == 2 and out == "" and not (tmp_path / "k").exists()
    assert one_line(err) == "ptxlayout: no kernel is for sm_10: nothing to write"


def test_a_target_ptxas_no_longer_knows_is_not_a_failure_of_the_compile_only_run(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from formal.execute import ptx
    monkeypatch.setattr(ptx, "ptxas_path", lambda: "/usr/bin/ptxas")
    monkeypatch.setattr(ptx, "assemble", lambda _text, target: (
        (False, "ptxas fatal   : Value 'sm_70' is not defined for option 'gpu-name'")
        if target == "sm_70" else (True, "")))
    code, out, err = run(capsys, "gpu", "--allow-no-device", "--device", "cuda:99",
                         "--only", "mma.m8n8k4")
    assert code == 0, out + err
    assert "mma m8n8k4         9  1 compiled-only, 8 not-executed" in out


def test_allow_unknown_makes_the_report_and_the_exit_agree(
        seeds: dict[str, Path], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import replace

    import formal.api
    from formal.base.source import Finding, Span
    real = formal.api.analyze

    def undecided(*a: object, **k: object) -> formal.api.Analysis:
        got = real(*a, **k)  # type: ignore[arg-type]
        lost = Finding("error", "unknown", Span(str(seeds["001"]), 1, 1), "Z3 timed out")
        return replace(got, proof=replace(got.proof, findings=(*got.proof.findings, lost)))

    monkeypatch.setattr(formal.api, "analyze", undecided)
    code, out, _err = run(capsys, "prove", "--no-catalog", str(seeds["001"]))
    assert code == 1 and "; 1 errors, " in out
    code, out, _err = run(capsys, "prove", "--no-catalog", "--allow-unknown", str(seeds["001"]))
    assert code == 0 and "; 0 errors, 2 warnings" in out, out[-300:]


def test_diff_no_catalog_resolves_nothing_against_the_catalog(
        seeds: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    argv = ("diff", str(seeds["003"]), str(seeds["004"]))
    _c, with_catalog, _e = run(capsys, *argv)
    code, without, _e = run(capsys, *argv, "--no-catalog")
    assert code == 1 and with_catalog != without
    assert "the layout has no cell table (the document gives it only as a figure)" in without


# ---- class 6: ids -------------------------------------------------------------------------


def test_a_segment_that_names_nothing_matches_nothing() -> None:
    from formal.api import find, model_of
    layouts = model_of([]).layouts
    assert find(layouts, "mma.m16n8k16.zzz.s8") == []  # matched both A and B
    assert [lay.id for lay in find(layouts, "mma.m16n8k16.A.S8")] == \
        ["catalog:mma.m16n8k16.A.u8-s8"]
    assert [lay.id for lay in find(layouts, "catalog:mma.m16n8k16.A.s8")] == \
        ["catalog:mma.m16n8k16.A.u8-s8"]
    assert find(layouts, "other:mma.m16n8k16.A.s8") == []  # the prefix is kept, not dropped
    assert find(layouts, "mma.m16n8k16.A.s8.extra") == []


def test_an_id_with_a_typo_gets_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "show", "mma.m16n8k16.A.s9")
    assert code == 2
    assert one_line(err) == ("ptxlayout: no layout matches 'mma.m16n8k16.A.s9'; did you mean "
                             "mma.m16n8k16.A.u8-s8 or mma.m16n8k16.A.f64 or "
                             "mma.m16n8k64.A.s4-u4?")
    code, _out, err = run(capsys, "show", "nothing.at.all")
    assert code == 2
    assert one_line(err) == "ptxlayout: no layout matches 'nothing.at.all' (see 'ptxlayout list')"


def test_list_prints_ids_one_a_line(capsys: pytest.CaptureFixture[str]) -> None:
    from formal.writers.report import summary

    from .conftest import proven_catalog
    code, out, err = run(capsys, "list")
    ids = out.splitlines()
    # as many as the report's layouts (tests/test_cards.py: the very same ids)
    n = summary(proven_catalog().proof)["layouts"]
    assert code == 0 and err == "" and len(ids) == n and len(set(ids)) == n
    assert "catalog:mma.m16n8k16.A.u8-s8" in ids and all(" " not in i for i in ids)
    code, out, _err = run(capsys, "list", "ldmatrix.m8n8.x4", "m16n8k16.A.u8")
    assert code == 0 and out.splitlines() == [
        "catalog:mma.m16n8k16.A.u8-s8", "catalog:ldmatrix.m8n8.x4.b16",
        "catalog:ldmatrix.m8n8.x4.trans.b16"]
    code, out, err = run(capsys, "list", "nothing.at.all")
    assert code == 2 and out == "" and "no layout matches 'nothing.at.all'" in err


# ---- class 8: SARIF fit for code scanning -------------------------------------------------


def test_sarif_has_relative_uris_fingerprints_and_rule_help(
        tmp_path: Path, seeds: dict[str, Path], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    import json
    monkeypatch.chdir(tmp_path)
    text = seeds["003"].read_text(encoding="utf-8")
    for folder, head in (("spec", ""), ("next", "\n\n\n")):  # next: the same, 3 lines down
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "s.txt").write_text(head + text, encoding="utf-8")

    def sarif(name: str) -> dict:
        code, out, _err = run(capsys, "prove", "--no-catalog", "--format", "sarif", name)
        assert code == 1
        return json.loads(out)["runs"][0]

    a, b = sarif("spec/s.txt"), sarif("next/s.txt")
    loc = a["results"][0]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "spec/s.txt", "uriBaseId": "SRCROOT"}
    for r in a["tool"]["driver"]["rules"]:
        assert r["fullDescription"]["text"].startswith(r["shortDescription"]["text"])
        assert r["helpUri"].endswith(f"/docs/obligations.md#kind-{r['id']}")
    for res in a["results"]:
        assert a["tool"]["driver"]["rules"][res["ruleIndex"]]["id"] == res["ruleId"]
    # the alerts keep their identity when the lines move (three lines added above)
    prints = [r["partialFingerprints"]["ptxlayout/v1"] for r in a["results"]]
    lines = [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in a["results"]]
    assert len(set(prints)) == len(prints)
    moved = {r["partialFingerprints"]["ptxlayout/v1"]:
             r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in b["results"]}
    assert {p: moved[p] - 3 for p in prints} == dict(zip(prints, lines))


# ---- class 7: --help says what the exit status means -----------------------------------------


@pytest.mark.parametrize("argv", [[], ["prove"], ["extract"], ["list"], ["show"], ["draw"],
                                  ["export"], ["diff"], ["ptx"], ["gpu"], ["evidence"],
                                  ["audit", "cute"]])
def test_every_help_names_the_exit_codes(argv: list[str],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run(capsys, *argv, "--help")
    assert code == 0
    flat = " ".join(out.split())
    if not argv:  # the front page: what 1 means for any command
        assert flat.endswith("exit status: 0 nothing wrong found; 1 findings (an error "
                             "finding, a differing map or atom, stale evidence, a failed "
                             "kernel); 2 a usage error, an input that cannot be read or "
                             "nothing checked (one line on stderr); 130 interrupted"), out
        return
    # each command: what 1 means for it (base/options.EXIT_ONE)
    assert re.search(r"exit status: 0 done, nothing wrong found; 1 (is not used|[^;]+); 2 a "
                     r"usage error, an input that cannot be read or nothing checked \(one line "
                     r"on stderr, no traceback\); 130 interrupted \(Ctrl-C\)$", flat), out
    assert ("1 is not used" in flat) == (argv[0] in ("list", "draw"))
