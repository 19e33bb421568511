"""The command line run in the test's own process (``formal.cli.main``), for tests whose
subject is a command's output rather than the process: ``run("list", "--family", "wgmma")``
gives (exit code, stdout, stderr); ``cwd(path)`` runs a block in another folder (for
``[tool.ptxlayout]`` found upward from the working directory)."""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator
from pathlib import Path

from formal.cli import main


def run(*argv: str, stdout: io.StringIO | None = None,
        stderr: io.StringIO | None = None) -> tuple[int, str, str]:
    out, err = stdout or io.StringIO(), stderr or io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@contextlib.contextmanager
def cwd(where: Path) -> Iterator[None]:
    old = os.getcwd()
    os.chdir(where)
    try:
        yield
    finally:
        os.chdir(old)
