"""Shared fixtures: the seed documents live in ../shared/seeds beside the repository.

Tests read the seeds from there (the project never copies their text).  When CI=true a
missing seeds folder is a failure, not a skip.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

# the tests never read or write the user's own caches: a private folder for this session
# (a test that wants another sets PTXLAYOUT_CACHE_DIR itself).  pytest-xdist's workers start
# from the controller's environment and share its folder: the grammar tables are built and
# each Z3 answer found once a session, not once a worker (entries are written atomically, and
# a hit skips only Z3, never the enumeration: formal/prove/cache.py)
if not os.environ.get("PTXLAYOUT_TEST_SESSION_CACHE"):
    os.environ["PTXLAYOUT_TEST_SESSION_CACHE"] = tempfile.mkdtemp(prefix="ptxlayout-test-cache-")
os.environ["PTXLAYOUT_CACHE_DIR"] = os.environ["PTXLAYOUT_TEST_SESSION_CACHE"]

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT.parent / "shared" / "seeds"


def seed_path(prefix: str) -> Path:
    if not SEEDS.is_dir():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"the seed folder {SEEDS} is missing (CI=true)")
        pytest.skip(f"the seed folder {SEEDS} is missing")
    hits = sorted(SEEDS.glob(f"{prefix}*"))
    if not hits:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"seed {prefix}* is missing from {SEEDS}")
        pytest.skip(f"seed {prefix}* is missing")
    return hits[0]


@pytest.fixture(scope="session")
def seeds() -> dict[str, Path]:
    return {p: seed_path(p) for p in ("000", "001", "002", "003", "004")}


def proven_catalog(corrections: bool = False) -> Any:
    """The embedded catalog proven once a process (``api.analyze([], Options())``, what
    ``ptxlayout prove`` runs; ``--corrections`` with ``corrections``).  The result is shared:
    read it, never change it.  Tests that prove the catalog with other options, or that are
    about one run's own behaviour (a planted fault, a cache, an interrupt), prove it
    themselves.  ``proven_catalog()`` and ``proven_catalog(False)`` are one proof."""
    return _proven(bool(corrections))


@cache
def _proven(corrections: bool) -> Any:
    from formal.api import analyze
    from formal.prove.verdicts import Options
    return analyze([], Options(), corrections=corrections)


@pytest.fixture(scope="session")
def catalog_run() -> Any:
    """``proven_catalog()`` as a fixture: the tests that only read the result share it."""
    return proven_catalog()


@dataclass(frozen=True)
class CliRun:
    """What ``ptxlayout ARGS`` did, run in this process: exit status, stdout, stderr."""

    code: int
    out: str
    err: str


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliRun]:
    """``cli("prove", "--format", "json")``: ``formal.cli.main`` called in this process (no
    new interpreter, no second import of z3/sympy/lark: a subprocess costs a second or more
    on a busy 2-core runner), with what it printed.  Start a real process only where the
    process itself is what the test is about (exit by signal, the console script, imports,
    environment)."""
    from formal.cli import main

    def run(*argv: str | Path) -> CliRun:
        code = main([str(a) for a in argv])
        cap = capsys.readouterr()
        return CliRun(code, cap.out, cap.err)
    return run


# ---- one computation a session, shared by pytest-xdist's workers -------------------------------
#
# A session fixture is built once a worker; a few results (the whole CuTe audit's report) cost
# tens of seconds and are read by tests that may run on either worker.  ``shared_json`` computes
# such a value once a session: the first worker to ask takes a lock in the session's private
# folder, computes and writes it; the other waits on the lock and reads the file.  The value is
# JSON, the report the command prints: what a test reads is exactly what a user gets.


def shared_json(name: str, compute: Callable[[], Any]) -> Any:
    """``compute()`` once a test session, across pytest-xdist's workers (JSON values only)."""
    import fcntl
    import json
    folder = Path(os.environ["PTXLAYOUT_TEST_SESSION_CACHE"]) / "shared"
    folder.mkdir(mode=0o700, exist_ok=True)
    with open(folder / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        done = folder / f"{name}.json"
        if done.is_file():
            return json.loads(done.read_text(encoding="utf-8"))
        value = compute()
        tmp = folder / f"{name}.json.tmp"
        tmp.write_text(json.dumps(value), encoding="utf-8")
        tmp.replace(done)
        return json.loads(done.read_text(encoding="utf-8"))  # as the other workers read it


# the Audit the whole audit's run made in this process (``formal.audit.audit_cute``'s value,
# kept as the command returns it): the header group's worker makes it once
_WHOLE_AUDIT: list[Any] = []


@cache
def _whole_audit() -> dict[str, Any]:
    import contextlib
    import io
    import json

    import formal.audit
    from formal.cli import main
    real = formal.audit.audit_cute

    def keep(*args: Any, **kwargs: Any) -> Any:
        audit = real(*args, **kwargs)
        _WHOLE_AUDIT.append(audit)
        return audit

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
            pytest.MonkeyPatch.context() as mp:
        mp.setattr(formal.audit, "audit_cute", keep)  # the command asks the package for it
        code = main(["audit", "cute", "--format", "json"])
    assert code in (0, 1), err.getvalue()[-2000:]
    assert len(_WHOLE_AUDIT) == 1
    return {"exit": code, "report": json.loads(out.getvalue())}


def whole_audit_of(*headers: str) -> Any:
    """The atoms of the whole audit (``ptxlayout audit cute``'s run, once a process) whose
    header is one of ``headers`` (file names under cute/atom, the ``_ext`` headers they
    include named too), as an ``Audit`` of those results alone: what ``audit_cute`` of those
    headers gives (test_audit_gmma checks its counts), without auditing them a second time."""
    from formal.audit import Audit

    from .wheel import cutlass_include
    cutlass_include()  # skipped without the wheel, a failure on CI
    _whole_audit()
    results = tuple(r for r in _WHOLE_AUDIT[0].results if Path(r.atom.file).name in headers)
    return Audit(results, (), (), (), ())


@pytest.fixture(scope="session")
def whole_audit() -> dict[str, Any]:
    """``ptxlayout audit cute --format json`` over the installed nvidia-cutlass wheel (every
    default header), once a session: ``{"exit": status, "report": the JSON it printed}``.  The
    one whole-library audit of the suite; a test about one behaviour audits one header."""
    from .wheel import cutlass_include
    cutlass_include()  # skipped without the wheel, a failure on CI
    return shared_json("whole-audit", _whole_audit)  # type: ignore[no-any-return]


# ---- ptxas: each module assembled once a session -------------------------------------------------
#
# Several tests assemble the same kernel for the same architecture (every variant's module in
# test_every_variant_assembles_for_its_target, again in `ptx --check` and `ptx --out`, the
# tcgen05 modules in each family's test).  ptxas is deterministic: what it said of one text
# for one architecture it says again.  ``formal.execute.ptx.assemble`` (every caller reaches it
# as the module's attribute) is kept for the session: a text that ptxas ACCEPTED is keyed by
# the SHA-256 of (ptxas's path, modification time and size, the architecture, the text) in the
# session's folder, shared by the workers; a hit answers (True, the messages ptxas printed).  A
# refusal, a time-out or a missing ptxas is never kept: every failure is ptxas's own, this
# run.  A test that replaces ``assemble`` or ``ptxas_path`` itself (a fake ptxas) still does.


def _kept_assembly(real: Callable[..., tuple[bool, str]]) -> Callable[..., tuple[bool, str]]:
    import hashlib
    import json
    folder = Path(os.environ["PTXLAYOUT_TEST_SESSION_CACHE"]) / "ptxas"
    folder.mkdir(mode=0o700, exist_ok=True)

    def assemble(text: str, arch: str, ptxas: str | None = None, timeout: float = 60.0) \
            -> tuple[bool, str]:
        from formal.execute import ptx
        exe = ptxas or ptx.ptxas_path()
        try:
            st = os.stat(exe) if exe else None
        except OSError:
            st = None
        if st is None:
            return real(text, arch, ptxas, timeout)
        what = "\0".join((os.path.realpath(str(exe)), str(st.st_mtime_ns), str(st.st_size),
                          arch, text))
        file = folder / f"{hashlib.sha256(what.encode('utf-8')).hexdigest()}.json"
        try:
            return True, str(json.loads(file.read_text(encoding="utf-8"))["accepted"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
        ok, msg = real(text, arch, ptxas, timeout)
        if ok:
            tmp = file.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"accepted": msg}), encoding="utf-8")
            tmp.replace(file)
        return ok, msg
    return assemble


@pytest.fixture(scope="session", autouse=True)
def _ptxas_once_a_session() -> Any:
    from formal.execute import ptx
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ptx, "assemble", _kept_assembly(ptx.assemble))
        yield


@pytest.fixture(scope="session")
def sm100_copy_audit() -> Any:
    """``audit_cute`` of the wheel's ``cute/atom/copy_traits_sm100.hpp`` (the TMEM load/store
    and UTCCP atoms) with the wheel's include folder: the whole audit's atoms of that header
    (``whole_audit_of``: the same 173 results, no findings, no scale comparisons), which the
    module fixture of test_audit_sm100 and the UTCCP and UMMA tests read (all three are of
    the header group, the worker that makes the whole audit).  Shared: read it, never change
    it."""
    return whole_audit_of("copy_traits_sm100.hpp")


# ---- the slow set's budget --------------------------------------------------------------------
#
# The slow set (marker 'slow': the short fuzz runs, the mutation sample, ...) runs its case
# counts times PTXLAYOUT_SLOW_SCALE (default 1); .ci/run sets 0.5 to stay well inside its time
# on a shared 2-core machine.  The long fuzz run ('-m fuzz') is not scaled.

SLOW_SCALE = max(0.0, float(os.environ.get("PTXLAYOUT_SLOW_SCALE", "") or 1))


def budget(n: int) -> int:
    """``n`` cases of the slow set at this run's scale (at least one)."""
    return max(1, round(n * SLOW_SCALE))


# ---- markers: 'gpu' tests skip without a CUDA device and CuPy ------------------------------------


def _cuda_device() -> str | None:
    """Why there is no CUDA device to run on (None: there is one)."""
    from formal.execute import devices
    if not devices.has_cupy():
        return "CuPy is not installed"
    try:
        import cupy
        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as exc:  # noqa: BLE001 - no driver, no device
        return f"no CUDA device ({type(exc).__name__})"
    return None if count else "no CUDA device"


# ---- the CuTe headers are read by one worker ------------------------------------------------
#
# Every test that reads the installed wheel's CuTe headers (tests/test_audit_*.py, and the two
# tests of the whole audit's report, ``whole_audit``) is sent to one pytest-xdist worker as one
# unit: that worker parses the 10 MB of headers once (kept in its process, formal.audit.store)
# and makes the whole audit's report, while the other runs the rest -- instead of both parsing
# the same headers at the start, or one waiting on the other's lock.  The controller sees only
# node ids, so the rule is by name; a new test of the whole report names itself here
# (pytest_collection_modifyitems refuses one that does not).  (xdist's own ``--dist loadgroup``
# does not group under pytest 9: it renames ``item._nodeid``, which pytest 9 no longer reads.)

HEADER_GROUP = "cutlass-headers"
WHOLE_AUDIT_READERS = ("test_docs.py::test_the_audit_and_test_counts_are_current",
                       "test_schema.py::test_the_audit_report_keeps_the_contract")


def reads_the_headers(nodeid: str) -> bool:
    """Whether the test ``nodeid`` is one of the header group's."""
    where = nodeid.rsplit("/", 1)[-1]
    return where.startswith("test_audit_") or where.split("[", 1)[0] in WHOLE_AUDIT_READERS


def pytest_xdist_make_scheduler(config: Any, log: Any) -> Any:
    """pytest-xdist's load scheduling, with the header group as one unit of work."""
    if config.getvalue("dist") != "load":
        return None  # another --dist asked for by name: xdist's own
    from xdist.scheduler import LoadScopeScheduling

    class HeaderGroupScheduling(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return HEADER_GROUP if reads_the_headers(nodeid) else nodeid

    return HeaderGroupScheduling(config, log)


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    items.sort(key=lambda item: long_first_rank(item.nodeid))  # stable: the rest keep order
    stray = [item.nodeid for item in items if "whole_audit" in getattr(item, "fixturenames", ())
             and not reads_the_headers(item.nodeid)]
    if stray:
        raise pytest.UsageError("a test of the whole audit's report outside the header group: "
                                "name it in tests/conftest.py's WHOLE_AUDIT_READERS: "
                                + ", ".join(stray))
    gpu = [item for item in items if item.get_closest_marker("gpu")]
    if not gpu:
        return
    why = _cuda_device()
    if why:
        for item in gpu:
            item.add_marker(pytest.mark.skip(reason=f"gpu: {why}"))


# ---- what this session collected: the test counts of docs/testing.md ----------------------
#
# tests/test_docs.py checks the page's test counts, which tools/docs_numbers.py takes from
# ``pytest --collect-only -q`` in a new process (about 10 s: every test module imported
# again).  A session that collected exactly what that command collects (the testpaths, the
# default marker expression, no -k, --deselect, --lf or stepwise) already knows both numbers:
# its items, and the fuzz tests its marker expression deselected.

_COLLECTED: dict[str, int] = {}


def pytest_deselected(items: list[Any]) -> None:
    _COLLECTED["deselected"] = _COLLECTED.get("deselected", 0) + len(items)


def pytest_collection_finish(session: Any) -> None:
    _COLLECTED["items"] = len(session.items)


def collected_as_the_docs_count(config: Any) -> tuple[int, int] | None:
    """(tests run, tests deselected) when this session collected what ``pytest
    --collect-only -q`` in the repository root does, else None."""
    opt = config.option
    default = (config.args_source == pytest.Config.ArgsSource.TESTPATHS
               and opt.markexpr == "not fuzz" and not opt.keyword and not opt.deselect
               and not getattr(opt, "lf", False) and not getattr(opt, "stepwise", False)
               and not getattr(opt, "stepwise_skip", False) and "items" in _COLLECTED)
    return (_COLLECTED["items"], _COLLECTED.get("deselected", 0)) if default else None


# ---- hypothesis: deterministic by default, no database in the repository ----------------------
#
# The default profile derandomizes (the same cases on every run, so CI is reproducible) and
# keeps no example database.  PTXLAYOUT_HYPOTHESIS=explore draws fresh random cases and keeps
# its database in the system's temporary folder, outside the repository.

@pytest.fixture
def kept_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of the test's own, with the cache on (the kept map hashes' and kept
    hardware verdicts' tests)."""
    from formal.base import cache as caches
    where = tmp_path / "cache"
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(where))
    caches.enable()
    return where


@pytest.fixture
def parse_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A cache folder of the test's own with the cache on, and the parse stage's memo of
    readings empty before and after (the kept parses' tests: test_parse_kept,
    test_family_kept)."""
    from formal.base import cache as caches
    from formal.parse.grammars import clear_memo
    where = tmp_path / "cache"
    monkeypatch.setenv("PTXLAYOUT_CACHE_DIR", str(where))
    caches.enable()
    clear_memo()
    yield where
    clear_memo()


from hypothesis import HealthCheck, settings  # noqa: E402
from hypothesis.configuration import set_hypothesis_home_dir  # noqa: E402
from hypothesis.database import DirectoryBasedExampleDatabase  # noqa: E402

_HYPOTHESIS_HOME = os.path.join(os.environ.get("TMPDIR", "/tmp"), "ptxlayout-hypothesis")
set_hypothesis_home_dir(_HYPOTHESIS_HOME)  # its patches and caches too stay outside the repo

_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
          HealthCheck.large_base_example]
settings.register_profile("ci", derandomize=True, database=None, deadline=None,
                          print_blob=False, suppress_health_check=_QUIET)
settings.register_profile(
    "explore", derandomize=False, deadline=None, print_blob=True, suppress_health_check=_QUIET,
    database=DirectoryBasedExampleDatabase(os.path.join(_HYPOTHESIS_HOME, "examples")))
settings.load_profile(os.environ.get("PTXLAYOUT_HYPOTHESIS", "ci"))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    from . import fuzzkit
    if fuzzkit.CASES:
        total = sum(fuzzkit.CASES.values())
        each = ", ".join(f"{k} {v}" for k, v in sorted(fuzzkit.CASES.items()))
        terminalreporter.write_line(f"fuzz cases run: {total} ({each})")


@pytest.fixture(scope="session")
def exported_layouts() -> Path:
    """``ptxlayout export --format json --corrections`` (what ``tools/gpu_check.sh`` feeds a
    device) written once a session, across pytest-xdist's workers (the first to ask writes
    it under the lock, as ``shared_json`` does), alone in its folder (a build folder ``gpu``
    and ``gpu_check.sh`` accept).  Shared: read it, never change it or write beside it."""
    import fcntl

    from formal.cli import main
    shared = Path(os.environ["PTXLAYOUT_TEST_SESSION_CACHE"]) / "shared"
    shared.mkdir(mode=0o700, exist_ok=True)
    out = shared / "export" / "layouts.json"
    with open(shared / "export.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not out.is_file():
            out.parent.mkdir(mode=0o700, exist_ok=True)
            tmp = shared / "export.json.tmp"  # beside the folder, never in it
            assert main(["export", "--format", "json", "--corrections", "-o", str(tmp)]) == 0
            tmp.replace(out)
    return out


# ---- the long tests start first ------------------------------------------------------------
#
# pytest-xdist hands each worker a run of consecutive tests and balances the rest as they end:
# a 40 s test that starts last keeps its worker busy while the other core idles.  The modules
# that hold the longest tests of a run (measured with --durations; in brackets the long part)
# are moved to the front in this order, whole, so that a module fixture is still built once
# (pytest tears one down when the next test is another module's); every other module keeps
# pytest's order.  The list only orders: a module missing from it runs as before, a name here
# that no longer exists is ignored.

LONG_FIRST = (
    # the audit's modules first, together: they are one xdist group (HEADER_GROUP), whose
    # worker parses each CuTe header once (kept in the process, formal.audit.store) and makes
    # the whole audit's report (whole_audit): the GMMA atoms, then the tests of the report
    "test_audit_gmma.py",  # (its fixture: the whole audit, of which it reads the GMMA atoms)
    "test_docs.py",  # (the audit's and the test counts of the pages)
    "test_schema.py",  # (the whole audit's report against its schema)
    "test_audit_sm100.py",  # (its fixture: the TMEM copy atoms audited)
    "test_audit_umma.py",  # (the UMMA atoms)
    "test_audit_cute.py",  # (the CuTe export of the catalog read back)
    "test_figures.py",  # (every catalog layout drawn)
    "test_golden.py",  # (its fixture: every output of the catalog and the seeds)
    "test_errata_hardware.py",  # (staleness against the corrected catalog)
    "test_determinism.py",  # (two processes prove the catalog and the seeds)
    "test_execute.py",  # (the evidence judged, the supervisor's crash, hang and deadline, ptxas)
    "test_execute_matrix.py",  # (the H100 evidence judged)
    "test_hardware_moves_and_wgmma.py",  # (a move's staleness)
    "test_exports.py",  # (CuTe's export of the whole catalog)
    "test_caches.py",  # (fresh processes proving with a planted cache)
)


def long_first_rank(nodeid: str) -> int:
    """The place of ``nodeid``'s module in LONG_FIRST (len(LONG_FIRST): not a long one)."""
    module = nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
    return LONG_FIRST.index(module) if module in LONG_FIRST else len(LONG_FIRST)
