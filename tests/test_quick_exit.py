"""The console script and ``python -m formal`` end with ``os._exit`` after flushing
(``formal/__main__.quick_exit``): the same exit status, stdout and stderr as the interpreter's
own exit of ``sys.exit(cli.main())`` on a file and on a pipe read to the end, with stdout
buffered and unbuffered; on a pipe closed before the first byte, where Python's own exit prints
"Exception ignored ... BrokenPipeError" (or a traceback, unbuffered) and exits 120 or 1, the
entry ends quietly with ``main``'s status; ``atexit`` callbacks still run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OLD = "import sys; from formal.cli import main; sys.argv[0] = 'ptxlayout'; sys.exit(main())"
NEW = "import sys, runpy; sys.argv[0] = 'ptxlayout'; runpy.run_module('formal', " \
      "run_name='__main__')"


def _run(code: str, argv: list[str], unbuffered: bool, closed: bool) -> tuple[int, bytes, bytes]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    p = subprocess.Popen([sys.executable, "-c", code, *argv], cwd=ROOT, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout is not None and p.stderr is not None
    if closed:
        p.stdout.close()  # before the child writes its first byte
        out = b""
    else:
        out = p.stdout.read()
    err = p.stderr.read()
    return p.wait(timeout=120), out, err


def _frames(err: bytes) -> bytes:
    """stderr without the traceback's frame lines (the new entry adds a frame of its own)."""
    return b"\n".join(line for line in err.splitlines()
                      if not line.startswith(b"  ") and not line.startswith(b"Traceback"))


@pytest.mark.parametrize("unbuffered", [False, True])
@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["bogus"]])
def test_quick_exit_says_what_the_interpreter_said(argv: list[str], unbuffered: bool) -> None:
    old = _run(OLD, argv, unbuffered, False)
    new = _run(NEW, argv, unbuffered, False)
    assert new[:2] == old[:2] and _frames(new[2]) == _frames(old[2]), (argv, old, new)
    # the statuses themselves, so that both runs failing alike cannot pass
    expected = {"--version": 0, "--help": 0, "bogus": 2}[argv[0]]
    assert new[0] == expected
    # a reader gone before the first byte: main's status, and not a word about the pipe
    closed = _run(NEW, argv, unbuffered, True)
    assert closed[0] == expected and b"BrokenPipe" not in closed[2], (argv, closed)
    assert b"Traceback" not in closed[2] and b"Exception ignored" not in closed[2], closed
    if argv[0] == "bogus":  # its words go to stderr, which is still read
        assert closed[2] == old[2], (closed, old)


def test_a_usage_error_after_the_imports_is_exit_2_as_before(tmp_path: Path) -> None:
    argv = ["prove", str(tmp_path / "missing.txt")]  # the prover imported, nothing to read
    for closed in (False, True):
        old = _run(OLD, argv, False, closed)
        new = _run(NEW, argv, False, closed)
        assert new == old and new[0] == 2 and b"cannot read" in new[2], (closed, old, new)


@pytest.mark.parametrize("unbuffered", [False, True])
def test_python_s_own_exit_on_a_closed_pipe_is_what_the_entry_mends(unbuffered: bool) -> None:
    code, _out, err = _run(OLD, ["--version"], unbuffered, True)
    assert code in (1, 120) and b"BrokenPipeError" in err, (code, err)
    assert _run(NEW, ["--version"], unbuffered, True)[:3:2] == (0, b"")


def test_atexit_callbacks_run_before_the_quick_exit(tmp_path: Path) -> None:
    mark = tmp_path / "ran"
    probe = (f"import atexit; atexit.register(lambda: open({str(mark)!r}, 'w').write('yes'))\n"
             + NEW)
    code, out, _err = _run(probe, ["--version"], False, False)
    assert code == 0 and out.startswith(b"ptxlayout ") and mark.read_text() == "yes"


def test_the_console_script_is_the_quick_entry() -> None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'ptxlayout = "formal.__main__:entry"' in text
