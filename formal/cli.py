"""``ptxlayout``: the command line.

    ptxlayout prove [DOC ...]      prove every layout (no DOC: the embedded catalog)
    ptxlayout extract [DOC ...]    list the layouts and their formulas
    ptxlayout show ID [DOC ...]    the lane grid of one layout, as the spec's figures draw it
    ptxlayout diff OLD NEW         compare two spec revisions layout by layout
    ptxlayout draw ID              a figure (SVG, PNG or ASCII)
    ptxlayout export [ID ...]      json | c | cute | f2
    ptxlayout ptx                  write (and with --check assemble) the GPU kernels
    ptxlayout gpu                  run the kernels on a CUDA device
    ptxlayout evidence DIR         is the GPU evidence current for the layouts?

Exit status (as pytest, ruff and mypy): 0 no error findings, 1 at least one error finding,
2 a usage or internal error, 130 interrupted (Ctrl-C: one line, no report).  No traceback
reaches the user unless PTXLAYOUT_DEBUG=1.  No command answers 0 when it read, matched or
ran nothing: an unreadable input, an id that matches no layout or several, a missing CUDA
device or CuPy, an unwritable output, ``--timeout -1`` are ``UsageError``s (exit 2).
"""

from __future__ import annotations

import os
import sys

from . import __version__

TYPE_CHECKING = False  # not typing's: --version and --help import neither typing nor argparse
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from pathlib import Path
    from typing import Any

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130  # 130: Ctrl-C
GC_THRESHOLDS = (1_000_000, 20, 100)  # Python's default is (700, 10, 10)


class UsageError(Exception):
    """A problem with what the user asked for: one line on stderr, exit 2, no traceback."""


def _writable(output: str) -> Path:
    """``output``'s path, its folder created when missing; a ``UsageError`` when it cannot be
    written there (a file in the way, no permission, a name too long)."""
    from .base.files import writable_path  # not at load: --version imports nothing else
    try:
        return writable_path(output)
    except ValueError as exc:
        raise UsageError(f"cannot write {output}: {exc}") from exc


# the options that name an output file
OUTPUTS = ("output", "svg", "png")


def _write(text: str | bytes, output: str | None, paint: bool = False) -> None:
    """``text`` to ``output`` (None: stdout); ``paint``: coloured where ``console.colour``."""
    if output:
        from .base.files import write_atomic
        path = _writable(output)
        try:  # all or nothing: a failed write leaves the old file as it was
            write_atomic(path, text)
        except OSError as exc:
            raise UsageError(f"cannot write {output}: {exc.strerror or exc}") from exc
        return
    if isinstance(text, bytes):
        sys.stdout.buffer.write(text)
        return
    from .base.console import colour, painted
    sys.stdout.write(painted(text) if paint and colour(sys.stdout) else text)


def _options(args: argparse.Namespace, bar: Any = None) -> Any:
    from .prove.verdicts import Options
    evidence = None
    where = getattr(args, "evidence", None)
    if where != "none":
        from .prove.evidence import Evidence, default_dir
        path = default_dir() if where in (None, "auto") else where
        if path is not None:
            try:
                evidence = Evidence.load(path)
            except (OSError, ValueError) as exc:
                raise UsageError(f"--evidence: {exc}") from exc
    return Options(timeout_ms=int(args.timeout * 1000),
                   cross_check=args.cross_check != "off", evidence=evidence,
                   disk_cache=not getattr(args, "no_cache", False),
                   progress=bar or _progress())


def _progress() -> Any:
    """The bar on stderr (``base.progress``); ``None`` unless stderr is a terminal, or -q."""
    from .base.progress import progress
    return progress()


def _unread(findings: Sequence[Any]) -> list[str]:
    """The findings that say a document could not be read (missing, empty, binary, too big)."""
    return [f.format() for f in findings if f.kind == "input" and f.severity == "error"]


def _something_to_read(docs: Sequence[str], use_catalog: bool) -> None:
    if not docs and not use_catalog:
        raise UsageError("nothing to read: no documents given, and --no-catalog leaves out "
                         "the embedded catalog")


def _reading(bar: Any, offset: int = 0, total: int | None = None) -> Any:
    """``bar``'s ``reading k/n documents`` (None without a bar), as a share of ``total``."""
    if bar is None:
        return None
    phase = bar.phase("reading", "documents")
    if total is None:
        return phase
    return lambda done, _n, part=0.0: phase(offset + done, total, part)


def _read_model(docs: Sequence[str], max_size: int, use_catalog: bool = True,
                corrections: bool = False, each: bool = False, bar: Any = None) -> Any:
    """The model of ``docs`` (``each``: a list, one model per document); a ``UsageError``
    naming every document that could not be read (a command that read nothing must not
    answer as if it had).  ``bar``: the progress bar (default: a new one, when stderr is a
    terminal)."""
    from .api import model_of
    _something_to_read(docs, use_catalog)
    bar = bar or _progress()
    groups = [[d] for d in docs] if each else [list(docs)]
    models = [model_of(g, max_size, use_catalog, corrections,
                       _reading(bar, k, len(docs)) if each else _reading(bar))
              for k, g in enumerate(groups)]
    _refuse_unread([f for m in models for f in m.findings])
    return models if each else models[0]


def _refuse_unread(findings: Sequence[Any]) -> None:
    """A ``UsageError`` naming every document that could not be read (one line for one)."""
    bad = _unread(findings)
    if len(bad) == 1:
        raise UsageError(f"cannot read the input: {bad[0]}")
    if bad:
        raise UsageError("cannot read the input:\n  " + "\n  ".join(bad))


def cmd_prove(args: argparse.Namespace) -> int:
    from .api import analyze
    from .writers.kinds import allowing_unknown, kept_kinds
    from .writers.ledger import accepts_any, gather_accepts
    from .writers.report import render
    try:
        named, note = gather_accepts(args.accept or (), args.strict, args.config.accept)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    if note:
        print(f"ptxlayout: {note}", file=sys.stderr)
    accept = None if named is None else [e for _p, _k, e in named]
    _something_to_read(args.docs, not args.no_catalog)
    opts = _options(args)
    run = analyze(args.docs, opts, args.max_size, not args.no_catalog,
                  args.corrections, accept, _reading(opts.progress))
    # a document not read at all (missing, empty, binary, too big, a FIFO) is exit 2, not an
    # erratum; one read with nothing to check in it is the report's error finding (exit 1)
    _refuse_unread([f for d in run.model.documents if d.format == "unknown" for f in d.findings])
    proof = allowing_unknown(run.proof) if args.allow_unknown else run.proof
    for path, k, entry in named or ():
        if not accepts_any(entry, proof.findings):
            import json
            print(f"ptxlayout: {path}: entry {k} {json.dumps(entry)} accepts no error "
                  "finding of this run (a value misspelled, or an erratum since fixed)",
                  file=sys.stderr)
            return EXIT_USAGE
    proof = kept_kinds(proof, args.select, args.ignore)  # the report and exit status: these
    grid = figure = None
    if args.format == "markdown":
        from .writers.drawing import svg_for
        from .writers.figures import ascii_for
        grid, figure = ascii_for, svg_for if args.figures else None
    # the lines the pipeline read (the catalog's, with no documents), quoted as they were read
    sources = {d.name: list(d.lines) for d in run.model.documents}
    _write(render(proof, args.format, sources, grid, __version__, args.verbose, figure,
                  args.quiet), args.output, args.format == "text")
    if args.ledger:
        from .writers.ledger import write_ledger
        try:
            write_ledger(args.ledger, run.model, proof)
        except OSError as exc:
            raise UsageError(f"cannot write the ledger to {args.ledger}: "
                             f"{exc.strerror or exc}") from exc
    if args.check_ledger:
        from .writers.ledger import check_ledger
        try:
            drift = check_ledger(args.check_ledger, run.model, proof)
        except OSError as exc:
            raise UsageError(f"cannot read the ledger in {args.check_ledger}: "
                             f"{exc.strerror or exc}") from exc
        except ValueError as exc:
            raise UsageError(f"cannot read the ledger: {exc}") from exc
        for line in drift:
            print(line, file=sys.stderr)
        if drift:
            return EXIT_FINDINGS
    if proof.internal_errors:
        return EXIT_USAGE
    # with a ledger, the accepted findings are known errata: only drift fails the run
    failed = any(f.fails for f in proof.findings) and not args.check_ledger
    return EXIT_FINDINGS if failed else EXIT_OK


def cmd_extract(args: argparse.Namespace) -> int:
    from .writers.report import extract_json, extract_text
    model = _read_model(args.docs, args.max_size, not args.no_catalog)
    text = extract_json(model.layouts) if args.format == "json" else extract_text(model.layouts)
    _write(text, args.output)
    findings = model.findings
    if not args.docs and not args.no_catalog:
        # the catalog's documented errata are accepted, as 'ptxlayout prove' accepts them
        from . import catalog
        from .writers.ledger import accept_findings
        findings = accept_findings(findings, catalog.errata())
    for f in findings:
        print(f.format(), file=sys.stderr)
    return EXIT_FINDINGS if any(f.fails for f in findings) else EXIT_OK


def _one(layouts: Sequence[Any], query: str) -> list[Any]:
    """The layouts ``query`` names; a ``UsageError`` when it names none, or several where one
    was meant (the message lists the candidates' ids)."""
    from .writers.cards import find, near
    hits = find(layouts, query)
    if not hits:
        close = near(layouts, query)
        raise UsageError(f"no layout matches '{query}'" + (
            f"; did you mean {' or '.join(close)}?" if close else " (see 'ptxlayout list')"))
    if len(hits) > 1:
        ids = "\n".join(f"  {h.id}" for h in hits)
        raise UsageError(f"'{query}' matches {len(hits)} layouts; name one of them:\n{ids}")
    return hits


def _pick(args: argparse.Namespace) -> Any:
    """The ``Figure`` of ``args.id``: of the catalog alone, from its views (no model built)."""
    from .writers.figures import figure
    if not args.docs and not args.no_catalog:
        from .api import catalog_entries
        entries = catalog_entries()
        if entries is not None:
            from .writers.views import catalog_figure
            return catalog_figure(_one(entries, args.id)[0])
    model = _read_model(args.docs, args.max_size, not args.no_catalog)
    return figure(_one(model.layouts, args.id)[0])


def cmd_list(args: argparse.Namespace) -> int:
    """The ids ``show`` takes, one a line (``api.listed_ids``): of ``--family``, or those a
    QUERY names or is part of; a QUERY or a family that names none is a usage error."""
    from .api import listed_ids, results_beyond_fragments
    layouts = _read_model(args.docs, args.max_size, not args.no_catalog).layouts
    beyond = results_beyond_fragments(tuple(args.docs), not args.no_catalog, args.max_size)
    try:
        rows = listed_ids(layouts, not args.docs and not args.no_catalog, args.family,
                          args.queries, lambda q: _one(layouts, q), beyond)  # none: near
    except ValueError as exc:  # a family with no id
        raise UsageError(str(exc)) from exc
    _write("".join(f"{i}\n" for _f, i in rows), None)
    return EXIT_OK


def cmd_show(args: argparse.Namespace) -> int:
    from .writers.figures import render_ascii
    try:
        fig = _pick(args)
    except UsageError:  # a block-scaled opcode: its factors; a data path: its blocks; another
        from .api import show_beyond_fragments  # id the report names: its card
        from .writers.smem_figure import is_smem_query, pick_smem
        try:
            got = show_beyond_fragments(args.id, args.docs, not args.no_catalog, args.max_size)
            if got is None and is_smem_query(args.id):
                pick_smem(args.id)  # names no shared-memory result: the nearest layouts
        except ValueError as exc:  # an id that names several, or none of shared memory
            raise UsageError(str(exc)) from exc
        if got is None:
            raise
        for line in got[1]:
            print(f"ptxlayout: {line}", file=sys.stderr)
        _write(got[0], None)
        return EXIT_OK if got[2] else EXIT_FINDINGS
    _write(fig if isinstance(fig, str) else render_ascii(fig), None)
    return EXIT_OK


def cmd_draw(args: argparse.Namespace) -> int:
    from .writers import drawing, figures
    lay = _pick(args)
    if args.svg:
        _write(drawing.svg(lay), args.svg)
    elif args.png:
        try:
            data = drawing.png(lay)
        except ImportError as exc:
            print(f"ptxlayout: PNG output needs Pillow (pip install 'ptxlayout[png]'): {exc}",
                  file=sys.stderr)
            return EXIT_USAGE
        _write(data, args.png)
    else:
        _write(figures.render_ascii(lay), None)
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    from .writers.export_beyond import export_command  # scale, data path, metadata, ...
    done = export_command(args, _write)
    if done is not None:
        return done
    from .api import model_of, smem_export  # smem, scale and data-path layouts: GPU runs
    if not args.docs and not args.no_catalog:
        from .api import catalog_entries
        entries = catalog_entries(args.corrections)
        if entries is not None:  # the catalog's views: no model where they hold the export
            from .writers.views import catalog_export
            picked: list[Any] = []
            for q in args.ids:
                picked.extend(h for h in _one(entries, q) if h not in picked)
            text, problems = catalog_export(picked if args.ids else None, args.format,
                                            args.corrections)
            _write(text, args.output)
            for p in problems:
                print(p, file=sys.stderr)
            return EXIT_FINDINGS if problems and args.ids else EXIT_OK
    from .writers import export
    bar = _progress()
    model = _read_model(args.docs, args.max_size, not args.no_catalog, args.corrections,
                        bar=bar)
    layouts = list(model.layouts)
    if args.ids:
        chosen: list[Any] = []
        for q in args.ids:
            chosen.extend(h for h in _one(layouts, q) if h not in chosen)
        layouts = chosen
    errata = None
    if args.corrections and args.format == "json":
        # the spec's own layouts wherever a correction changes the map: the GPU runs them too
        as_written = model_of(args.docs, args.max_size, not args.no_catalog, False,
                              _reading(bar))
        errata = list(as_written.layouts)
    whole = args.format == "json" and not args.ids and not args.no_catalog
    text, problems = export.export(layouts, args.format, errata, *(
        (smem_export(), export.catalog_device_records()) if whole else (None, None)))
    _write(text, args.output)
    for p in problems:
        print(p, file=sys.stderr)
    return EXIT_FINDINGS if problems and args.ids else EXIT_OK


# the findings of reading a document (not of proving it): diff reports them on stderr
READING_KINDS = ("input", "parse", "limit")


def cmd_diff(args: argparse.Namespace) -> int:
    from .api import with_catalog_tables
    from .writers.diff import diff_models, kept_changes, render_diff
    bar = _progress()
    old, new = _read_model([args.old, args.new], args.max_size, not args.no_catalog, each=True,
                           bar=bar)
    for f in (*old.findings, *new.findings):
        if f.kind in READING_KINDS:
            print(f.format(), file=sys.stderr)
    result = kept_changes(diff_models(old, new, with_catalog_tables(_options(args, bar))),
                          args.select, args.ignore)
    _write(render_diff(result, args.format, args.quiet, __version__), args.output)
    return EXIT_FINDINGS if any(r.kind in DIFF_FAILS for r in result) else EXIT_OK


DIFF_FAILS = ("different-map", "removed", "not-comparable")  # not shown equal, or gone


def cmd_ptx(args: argparse.Namespace) -> int:
    import importlib
    ptx = importlib.import_module("formal.execute.ptx")
    from .api import current_catalog  # sm_100a: the data paths' kernels come from the records
    try:
        return int(ptx.ptx_command(args, lambda: current_catalog()[0]))
    except OSError as exc:
        raise UsageError(f"cannot write the kernels to {args.out}: "
                         f"{exc.strerror or exc}") from exc


def cmd_gpu(args: argparse.Namespace) -> int:
    import importlib
    record = importlib.import_module("formal.execute.record")  # numpy (and CuPy) only
    if args.layouts:  # the GPU machine: numpy and CuPy only, the layouts an export
        return int(record.gpu_command(args, None))
    from .api import current_catalog  # the prover is here: the catalog as an export carries it
    return int(record.gpu_command(args, current_catalog()))


def cmd_evidence(args: argparse.Namespace) -> int:
    from .api import current_catalog
    from .writers.evidence import evidence_command
    return evidence_command(args, current_catalog, None if args.quiet else _progress())


def _common_doc_args(p: argparse.ArgumentParser) -> None:
    from .base.console import positive
    p.add_argument("--max-size", type=positive(int), default=16 * 1024 * 1024, metavar="BYTES",
                   help="refuse documents larger than this (default 16 MiB)")
    p.add_argument("--no-catalog", action="store_true",
                   help="do not resolve references against the embedded catalog")
    p.add_argument("--no-cache", action="store_true",
                   help="neither read nor write the caches (grammar tables, Z3 verdicts) in "
                        "PTXLAYOUT_CACHE_DIR (default ~/.cache/ptxlayout)")


def _proof_args(p: argparse.ArgumentParser) -> None:
    from .base.console import positive
    p.add_argument("--timeout", type=positive(float), metavar="SEC",
                   help="Z3 time limit per query; a query that runs out is 'unknown' "
                        "(default 5, or timeout in [tool.ptxlayout])")
    p.add_argument("--cross-check", choices=("enumerate", "off"), default="enumerate",
                   help="re-check every Z3 verdict by enumeration (default: enumerate)")
    p.add_argument("--evidence", metavar="DIR", default="auto",
                   help="GPU evidence for the 'hardware' obligation (default: the evidence "
                        "shipped with ptxlayout, proofs/evidence; 'none' to leave it out)")


def _configure(args: argparse.Namespace) -> None:
    """``-q``: no progress bar; ``[tool.ptxlayout]`` (``writers.config``)."""
    from .base import progress
    progress.silence(bool(getattr(args, "quiet", False)))
    if args.command in ("prove", "diff", "evidence", "audit"):
        from .writers.config import configure
        try:
            configure(args)
        except ValueError as exc:
            raise UsageError(str(exc)) from exc


def cmd_audit(args: argparse.Namespace) -> int:
    """``audit_command``, its report through ``writers.sarif.audit_output``."""
    from .audit import installed_include
    from .audit.command import audit_command
    from .writers.sarif import audit_output
    fmt, args.format = args.format, "json" if args.format == "sarif" else args.format
    bar = _progress()
    args.bar = bar.phase("auditing", "atoms") if bar is not None else None
    return audit_command(args, lambda text, out: _write(audit_output(
        text, fmt, __version__, args.quiet, installed_include()), out))


def parser() -> argparse.ArgumentParser:
    import argparse

    from .base.console import EXIT_HELP, positive
    from .base.options import add_conventions, document_options
    ap = argparse.ArgumentParser(
        prog="ptxlayout",
        description="Prove the PTX ISA's fragment layouts (mma, mma.sp, ldmatrix / stmatrix / "
                    "movmatrix, wgmma) and the shared-memory layouts of wgmma and tcgen05 "
                    "correct, from the spec's own text.")
    ap.add_argument("--version", action="version", version=f"ptxlayout {__version__}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("prove", help="prove every layout of the documents (default: the "
                                     "embedded catalog)")
    p.add_argument("docs", nargs="*", metavar="DOC",
                   help="spec text: plain text, Markdown or the HTML page")
    p.add_argument("--format", choices=("text", "markdown", "json", "sarif", "junit"),
                   default="text")
    p.add_argument("--output", "-o", metavar="FILE")
    p.add_argument("--allow-unknown", action="store_true",
                   help="do not fail the run on obligations Z3 could not decide")
    p.add_argument("--ledger", metavar="DIR", help="write the proof ledger to DIR")
    p.add_argument("--check-ledger", metavar="DIR",
                   help="exit 1 when anything drifts from the ledger in DIR")
    p.add_argument("--corrections", action="store_true",
                   help="with the catalog: prove the corrected sections instead of the spec's "
                        "errata")
    p.add_argument("--accept", action="append", metavar="FILE",
                   help="a JSON list of known findings to accept, each with a 'reason' "
                        "(repeatable); proving the catalog accepts its documented errata "
                        "unless --strict")
    p.add_argument("--strict", action="store_true",
                   help="accept nothing: every error finding fails the run")
    p.add_argument("--figures", action="store_true",
                   help="markdown: inline each refuted layout's SVG figure (long; by default "
                        "the report names the 'ptxlayout draw' command instead)")
    p.add_argument("--verbose", "-v", action="store_true",
                   help="text: print the formulas; json: add formulas, obligation messages, "
                        "and each finding's layout and acceptance")
    _proof_args(p)
    _common_doc_args(p)
    p.set_defaults(func=cmd_prove)

    p = sub.add_parser("extract", help="list every layout with its formulas")
    p.add_argument("docs", nargs="*", metavar="DOC")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--output", "-o", metavar="FILE")
    _common_doc_args(p)
    p.set_defaults(func=cmd_extract)

    p = sub.add_parser("list", help="the layout ids, one a line (exit 2 when a QUERY names "
                                    "none)")
    p.add_argument("queries", nargs="*", metavar="QUERY",
                   help="only the layouts QUERY names (as 'show' reads an id) or is part of")
    p.add_argument("--doc", dest="docs", action="append", default=[], metavar="DOC",
                   help="list DOC's layouts instead of the catalog's (repeatable)")
    _common_doc_args(p)
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("show", help="print the lane grid of one layout (T<lane>:<element>)")
    p.add_argument("id", metavar="ID", help="a layout id, e.g. mma.m16n8k16.A.s8")
    p.add_argument("docs", nargs="*", metavar="DOC")
    _common_doc_args(p)
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("draw", help="draw one layout as the spec's figures do")
    p.add_argument("id", metavar="ID")
    p.add_argument("docs", nargs="*", metavar="DOC")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--svg", metavar="FILE")
    g.add_argument("--png", metavar="FILE")
    g.add_argument("--ascii", action="store_true")
    _common_doc_args(p)
    p.set_defaults(func=cmd_draw)

    p = sub.add_parser("export", help="export layouts as json, a C header, CuTe or F2 bases")
    p.add_argument("ids", nargs="*", metavar="ID")
    p.add_argument("--format", choices=("json", "c", "cute", "f2"), default="json")
    p.add_argument("--doc", dest="docs", action="append", default=[], metavar="DOC",
                   help="read layouts from DOC instead of the catalog (repeatable)")
    p.add_argument("--output", "-o", metavar="FILE")
    p.add_argument("--corrections", action="store_true",
                   help="export the catalog with the corrections of known errata (the maps "
                        "the GPU must confirm); json also lists the spec's layouts they "
                        "replace under 'errata'")
    _common_doc_args(p)
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("diff", help="compare two spec revisions layout by layout")
    p.add_argument("old", metavar="OLD")
    p.add_argument("new", metavar="NEW")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--output", "-o", metavar="FILE")
    _proof_args(p)
    _common_doc_args(p)
    p.set_defaults(func=cmd_diff)

    p = sub.add_parser("ptx", help="write the PTX kernels; --check assembles them with ptxas")
    p.add_argument("--out", default="build/ptx", metavar="DIR")
    p.add_argument("--arch", default="sm_90,sm_100a,sm_120a",
                   help="comma-separated targets to assemble for (default sm_90,sm_100a,sm_120a)")
    p.add_argument("--check", action="store_true", help="assemble each kernel with ptxas")
    p.add_argument("--only", metavar="SUBSTR",
                   help="only variants whose key contains this (a comma-separated list: any "
                        "part), of any family: mma, mma.sp, the moves, wgmma, wgmma.sp, tcgen05")
    p.set_defaults(func=cmd_ptx)

    p = sub.add_parser("gpu", help="run every variant of every family (mma, mma.sp, ldmatrix, "
                                   "stmatrix, movmatrix, wgmma, wgmma.sp) on a CUDA device "
                                   "(needs numpy and CuPy only, given --layouts)")
    p.add_argument("--layouts", metavar="JSON",
                   help="layouts exported by 'ptxlayout export --format json --corrections' "
                        "(or a folder holding layouts.json); its 'errata' are run too "
                        "(default: the catalog, which needs the prover installed)")
    p.add_argument("--trials", type=positive(int), default=4, help="random trials (warps) per run")
    p.add_argument("--record", metavar="DIR", help="write evidence JSON to DIR")
    p.add_argument("--discover", action="store_true",
                   help="recover every operand's map and the metadata layouts from the "
                        "hardware alone")
    p.add_argument("--only", metavar="SUBSTR",
                   help="only variants whose key contains this (a comma-separated list: any "
                        "of them), e.g. 'mma.m16n8k16,ldmatrix,wgmma.sp.'")
    p.add_argument("--device", default="cuda", help="cuda, cuda:N, or fake (tests)")
    p.add_argument("--timeout", type=positive(float), default=120.0,
                   help="watchdog: seconds one variant may take (default 120)")
    p.add_argument("--deadline", type=positive(float), metavar="SEC",
                   help="the whole run's time limit: past it the rest is not run, and the "
                        "evidence is still written")
    p.add_argument("--allow-no-device", action="store_true",
                   help="without a CUDA device or CuPy, assemble the kernels with ptxas "
                        "(compile-only) and exit 0 instead of 2; no evidence is written")
    p.add_argument("--no-ptxas", action="store_true",
                   help="do not assemble the variants the device cannot run")
    p.add_argument("--no-errata", action="store_true",
                   help="do not run the spec's erratum layouts the export lists")
    p.add_argument("--no-experiments", action="store_true",
                   help="do not run the wgmma descriptor probes' companions: the other "
                        "shared-memory layouts, the negative controls and the planted "
                        "metadata errors")
    p.add_argument("--full-table", action="store_true",
                   help="one line per variant (default: one per instruction and shape)")
    p.set_defaults(func=cmd_gpu)

    p = sub.add_parser("evidence", help="is the GPU evidence current for the layouts? (exit 1 "
                                        "and one line per missing run when it is not)")
    p.add_argument("evidence", metavar="DIR", help="proofs/evidence (a folder or one file)")
    p.add_argument("--layouts", metavar="JSON",
                   help="layouts JSON with its 'errata' (default: the embedded catalog with "
                        "its corrections, and the spec's errata)")
    p.add_argument("--sm", type=int, help="the device class to require (default: the "
                                          "evidence's)")
    p.set_defaults(func=cmd_evidence)

    p = sub.add_parser("audit", help="audit another library's layouts against the spec")
    asub = p.add_subparsers(dest="library", metavar="LIBRARY", required=True)
    p = asub.add_parser("cute", help="CUTLASS CuTe's MMA and copy atoms (default: the "
                                     "installed nvidia-cutlass headers)")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="a CUTLASS include directory or single *_traits_*.hpp headers")
    p.add_argument("--format", choices=("text", "json", "sarif", "junit"), default="text")
    p.add_argument("--output", "-o", metavar="FILE")
    p.add_argument("--verbose", "-v", action="store_true",
                   help="text: list the atoms whose operands are all equal too")
    p.set_defaults(func=cmd_audit)
    p = asub.add_parser("triton", help="Triton's NVIDIA MMA and dot-operand layouts, computed "
                                       "by the installed triton package on the CPU")
    p.add_argument("--format", choices=("text", "json", "sarif", "junit"), default="text")
    p.add_argument("--output", "-o", metavar="FILE")
    p.add_argument("--verbose", "-v", action="store_true",
                   help="text: list the layouts equal to the spec too")
    p.set_defaults(func=cmd_audit)
    for q in (ap, *sub.choices.values(), *asub.choices.values()):
        q.epilog = EXIT_HELP  # what pytest, ruff and mypy users look for in --help
    add_conventions({**sub.choices, **{f"audit {k}": v for k, v in asub.choices.items()}})
    document_options(ap)  # every option's help says its default
    return ap


# the modules every command but 'gpu --layouts' needs (the package's dependencies)
PROVER_MODULES = ("lark", "sympy", "z3", "mpmath")


def main(argv: Sequence[str] | None = None) -> int:
    from .base.console import interrupts_exit
    with interrupts_exit():  # Ctrl-C: one line, exit 130 (base.console)
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    if list(sys.argv[1:] if argv is None else argv) == ["--version"]:
        print(f"ptxlayout {__version__}")  # the one answer that needs no parser
        return EXIT_OK
    import gc

    from .base.console import tolerant_streams
    # A run allocates millions of small objects it keeps to the end (SymPy terms, Lark
    # trees, verdicts); with the default thresholds the collector walks them again and
    # again, about a tenth of a fresh run.  Cycles are still collected, less often: every
    # million allocations of containers, so the catalog's first run makes no pass at all
    # where 50,000 made six (36 ms, and the walks of what they promoted: about 75 ms of a
    # fresh first run, 50 of a warm one), and the 6 MB document's peak memory is unchanged.
    gc.set_threshold(*GC_THRESHOLDS)
    tolerant_streams()
    ap = parser()
    try:
        args = ap.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    if not getattr(args, "command", None):
        ap.print_help(sys.stderr)
        return EXIT_USAGE
    if args.command in ("prove", "diff", "audit"):  # the commands that ask Z3
        import z3
        z3.set_param("ctrl_c", False)  # Ctrl-C is ours (_interrupted), not the query's
    from .base import cache
    if getattr(args, "no_cache", False):
        cache.disable()
    else:
        cache.enable()
    try:
        for where in filter(None, (getattr(args, name, None) for name in OUTPUTS)):
            _writable(where)  # before the work: an unwritable output fails at once
        _configure(args)
        from .writers.smem_figure import smem_command  # show / export of a shared-memory id
        done = smem_command(args, _write)
        return int(args.func(args)) if done is None else done
    except UsageError as exc:
        print(f"ptxlayout: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("ptxlayout: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
    except ModuleNotFoundError as exc:
        if exc.name not in PROVER_MODULES or os.environ.get("PTXLAYOUT_DEBUG"):
            raise
        # 'pip install --no-deps ptxlayout' beside numpy: enough for 'gpu --layouts' only
        print(f"ptxlayout: {args.command} needs the prover's dependencies, and '{exc.name}' "
              "is not installed: pip install ptxlayout (z3-solver, sympy, lark); a numpy-only "
              "install runs 'ptxlayout gpu --layouts FILE' only", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # noqa: BLE001 - the last line of defence: no tracebacks
        if os.environ.get("PTXLAYOUT_DEBUG"):
            raise
        print(f"ptxlayout: internal error: {type(exc).__name__}: {exc} "
              "(set PTXLAYOUT_DEBUG=1 for a traceback)", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
