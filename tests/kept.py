"""One analysis per distinct input, for tests that read several reports of the same run.

``ptxlayout prove --format json`` and ``ptxlayout prove --format text`` of the catalog analyse
the same documents with the same options; only the writer differs.  A test that compares
what each format prints (the goldens) needs the catalog analysed once, not once a format::

    with analyses_kept():
        main(["prove", "--format", "json"])   # analysed
        main(["prove", "--format", "text"])   # the same inputs: the kept Analysis
        main(["prove", "--corrections"])      # another input: analysed

Inside the block ``formal.api.analyze`` (which ``cmd_prove`` imports when it runs) keeps its
result by everything it reads: each document's path and the SHA-256 of its bytes, the
options (time-out, cross-check, disk cache, and the evidence files' paths and bytes' hashes),
the size limit, the catalog switch, the corrections and the accepted errata.  A progress
callback is not an input.  The kept results are dropped when the block ends, so a test
outside it (or one that plants a fault in the catalog) always runs its own analysis.

Only for tests that read what a run reports.  A test of what a run *does* -- cache writes,
warnings on stderr, exit codes of a failing read, an interrupt -- runs outside the block.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def _bytes_hash(path: str | Path) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError as exc:  # not readable: the analysis reports it; never kept as equal
        return f"unreadable:{exc.errno}:{id(exc)}"


def _options_key(options: Any) -> Any:
    if options is None:
        return None
    evidence = options.evidence
    files = None if evidence is None else tuple(
        (f.path, _bytes_hash(f.path)) for f in evidence.files)
    return (options.timeout_ms, options.cross_check, options.disk_cache, files)


def analysis_key(paths: Any, options: Any = None, max_bytes: Any = None,
                 use_catalog: bool = True, corrections: bool = False,
                 accept: Any = None) -> str:
    """Everything ``formal.api.analyze`` reads, as one string (``reading`` is not read)."""
    docs = [(str(p), _bytes_hash(p)) for p in paths]
    return json.dumps([docs, repr(_options_key(options)), max_bytes, use_catalog,
                       corrections, accept], sort_keys=True, default=repr)


@contextlib.contextmanager
def analyses_kept() -> Iterator[dict[str, Any]]:
    """``formal.api.analyze`` kept by its inputs for the block (the dict: key -> Analysis)."""
    from formal import api
    real = api.analyze
    kept: dict[str, Any] = {}

    def analyze(paths: Any, options: Any = None, max_bytes: Any = None,
                use_catalog: bool = True, corrections: bool = False,
                accept: Any = None, reading: Any = None) -> Any:
        key = analysis_key(paths, options, max_bytes, use_catalog, corrections, accept)
        if key not in kept:
            kept[key] = real(paths, options, max_bytes, use_catalog, corrections, accept,
                             reading)
        return kept[key]

    api.analyze = analyze  # type: ignore[assignment]
    try:
        yield kept
    finally:
        api.analyze = real  # type: ignore[assignment]
