"""The ``audit`` command: which library, which headers, the report, and the exit code.

``ptxlayout audit cute`` with no PATH reads the installed nvidia-cutlass wheel's atom headers
(``AUDIT_DEFAULT_HEADERS``, following their ``#include``s); ``audit triton`` asks the installed
triton package.  A run that compared no operand says why on stderr and exits 2: an audit that
checked nothing never passes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import __version__
from ..base.options import selection

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def _audit_triton(args: Any, write: Callable[[str, str | None], None]) -> int:
    from .report import render_audit
    from .triton import TritonMissing, audit_triton
    try:
        audit = audit_triton()
    except TritonMissing as e:
        print(f"ptxlayout: audit triton needs Triton's wheel: pip install 'ptxlayout[triton]' "
              f"({e})", file=sys.stderr)
        return EXIT_USAGE
    kept = audit.kept(*selection(args))
    write(render_audit(kept, args.format, args.verbose, __version__), args.output)
    counts = audit.counts()
    if counts["equal"] + counts["differs"] == 0:
        print("ptxlayout: audit triton: no layout could be compared with the spec",
              file=sys.stderr)
        return EXIT_USAGE
    return EXIT_FINDINGS if kept.differs else EXIT_OK


def audit_command(args: Any, write: Callable[[str, str | None], None]) -> int:
    """``ptxlayout audit cute [PATH ...]`` / ``audit triton``: the report written by ``write``
    (of the verdicts ``--select`` / ``--ignore`` keep); 0 every operand kept is equal, 1 one
    differs, 2 nothing could be compared."""
    from . import AUDIT_DEFAULT_HEADERS, audit_cute, installed_include
    from .report import render_audit
    if args.library == "triton":
        return _audit_triton(args, write)
    paths = list(args.paths)
    include = installed_include()
    if not paths:
        if include is None:
            print("ptxlayout: audit cute needs CUTLASS headers: pip install "
                  "'ptxlayout[cutlass]', or give an include directory or headers",
                  file=sys.stderr)
            return EXIT_USAGE
        paths = [str(Path(include) / "cute" / "atom" / h) for h in AUDIT_DEFAULT_HEADERS]
    audit = audit_cute(paths, [Path(include)] if include else [], getattr(args, "bar", None))
    if not audit.results:
        for f in audit.findings:
            print(f.format(), file=sys.stderr)
        print("ptxlayout: audit cute: no MMA_Traits or Copy_Traits atom in "
              + " ".join(args.paths or paths[:1]), file=sys.stderr)
        return EXIT_USAGE
    kept = audit.kept(*selection(args))  # --select / --ignore
    write(render_audit(kept, args.format, args.verbose, __version__), args.output)
    counts = audit.counts()
    if audit.compared == 0:
        # atoms found, but no operand of theirs compared with the spec: nothing was checked
        print(f"ptxlayout: audit cute: no operand of the {len(audit.results)} atom(s) could "
              f"be compared with the spec ({counts['unreadable']} unreadable, "
              f"{counts['not-in-spec']} not in the spec)", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_FINDINGS if kept.differs else EXIT_OK
