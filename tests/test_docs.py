"""README.md and docs/ tell the truth: their commands parse (and the cheap ones run), the files
and links they name exist, every option of the command line is in docs/cli.md, and every
number in a marked block is what ``tools/docs_numbers.py`` computes now.

A marked block is ``<!-- numbers:catalog -->`` ... ``<!-- /numbers -->``; when the catalog
gains a layout, the block that says "163 layouts" no longer matches and this file says which
block to regenerate (``python tools/docs_numbers.py``).
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import shlex
import subprocess
import sys
import types
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from formal.cli import main, parser

from .conftest import ROOT, SEEDS, collected_as_the_docs_count

DOCS = ROOT / "docs"


def _numbers() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_numbers", ROOT / "tools" /
                                                  "docs_numbers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["docs_numbers"] = module
    spec.loader.exec_module(module)
    return module


numbers = _numbers()


def pages() -> list[Path]:
    return numbers.documents()  # type: ignore[no-any-return]


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def commands(path: Path) -> list[list[str]]:
    """Every `ptxlayout ...` line inside a code fence of PATH, comment stripped, as argv."""
    found, fenced = [], False
    for line in text(path).splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif fenced and line.startswith("ptxlayout "):
            found.append(shlex.split(line.split("  #")[0].split(" # ")[0])[1:])
    return found


# ---- the front page -----------------------------------------------------------------------------


def test_the_readme_is_a_front_page() -> None:
    readme = text(ROOT / "README.md").splitlines()
    assert len(readme) <= 150
    head = "\n".join(readme[:40])
    assert "ptxlayout prove" in head  # CI greps for it
    first = head.split("```sh\n")[1].split("```")[0].splitlines()
    assert first[0].startswith("pip install -e . && ptxlayout prove")
    assert first[1].startswith("pip install -e '.[test]' && pytest -n auto")


def test_ci_runs_the_readme_test_command() -> None:
    line = next(x for x in text(ROOT / "README.md").splitlines()
                if x.startswith("pip install -e '.[test]'"))
    command = line.split("#")[0].strip()
    assert "-n " in command  # pytest-xdist: the suite runs on every core
    assert command in text(ROOT / ".ci" / "run")


def test_the_manual_is_in_docs() -> None:
    names = {p.name for p in DOCS.glob("*.md")}
    assert {"architecture.md", "pseudocode.md", "obligations.md", "gpu.md", "audit.md",
            "caches.md", "cli.md", "benchmarks.md"} <= names
    readme = text(ROOT / "README.md")
    for name in names:
        assert f"docs/{name}" in readme, f"README does not link docs/{name}"


def test_no_page_speaks_of_issues_or_sessions() -> None:
    for path in pages():
        for n, line in enumerate(text(path).splitlines(), 1):
            assert not re.search(r"\bissues? \d|\bsessions?\b", line, re.I), (path, n, line)


# ---- what the pages name exists -----------------------------------------------------------------


def test_every_link_resolves() -> None:
    for path in pages():
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text(path)):
            if "://" in target:
                continue
            assert (path.parent / target).exists(), f"{path.name} links {target}, not there"


def test_the_pages_name_only_files_in_the_repository() -> None:
    named: set[str] = set()
    for path in pages():
        named |= set(re.findall(r"(?<![\w./])((?:formal|tests|tools|bench|proofs|grammar|docs|"
                                r"\.ci)/[\w./*-]*[\w*])", text(path)))
    assert {"formal/catalog/errata.json", "bench/scaling.png", "tools/docs_numbers.py",
            "docs/schema/prove.schema.json", "grammar/pseudocode.lark"} <= named
    for name in sorted(named):
        assert list(ROOT.glob(name)), f"the docs name {name}, which is not in the repository"
    readme = text(ROOT / "README.md")
    assert "DESIGN.md" not in readme  # the design notes live outside the repository
    assert "pip install ptxlayout\n" not in readme  # no index has it
    assert (ROOT / "LICENSE").exists() and (ROOT / "formal" / "py.typed").exists()


# ---- the commands they give ---------------------------------------------------------------------


def test_every_command_in_the_pages_parses(monkeypatch: pytest.MonkeyPatch) -> None:
    ap = parser()
    seen = 0
    for path in pages():
        for argv in commands(path):
            try:
                ap.parse_args(argv)
            except SystemExit:
                pytest.fail(f"{path.name}: 'ptxlayout {shlex.join(argv)}' does not parse")
            seen += 1
    assert seen >= 30


def test_the_examples_name_one_layout_each(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)  # the examples write m.svg and the like here
    runs = [argv for path in (ROOT / "README.md", DOCS / "cli.md") for argv in commands(path)
            if argv[0] in ("show", "draw", "export") and not any(
                a.endswith((".txt", ".md", ".html")) for a in argv)]
    assert ["draw", "mma.sp.m16n8k16.meta.tf32", "--svg", "m.svg"] in runs and len(runs) >= 4
    for argv in runs:
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 0, (argv, err)
        assert "matches" not in err


def _options(ap: argparse.ArgumentParser, prefix: str = "") -> list[tuple[str, str]]:
    found = []
    for action in ap._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append((prefix, name))
                found += _options(sub, f"{prefix} {name}".strip())
        else:
            found += [(prefix, s) for s in action.option_strings if s.startswith("--")]
    return found


def test_cli_md_names_every_subcommand_and_option() -> None:
    cli = text(DOCS / "cli.md")
    missing = [f"{where}: {name}" for where, name in _options(parser())
               if f"`{name}" not in cli and f"{name}`" not in cli]
    assert not missing, missing


# ---- the numbers --------------------------------------------------------------------------------


def _stale(names: set[str]) -> list[str]:
    done, skipped = numbers.compute(names)
    assert done or skipped
    stale = []
    for path in pages():
        for name, body in numbers.blocks_in(text(path)):
            if name in done and body != done[name]:
                stale.append(f"{path.relative_to(ROOT)}: {name}")
    return stale


def test_every_block_is_known_and_none_is_empty() -> None:
    used = [name for path in pages() for name, body in numbers.blocks_in(text(path))
            if body.strip()]
    every = [name for path in pages() for name, _ in numbers.blocks_in(text(path))]
    assert set(every) <= set(numbers.BLOCKS) | numbers.ELSEWHERE
    assert sorted(used) == sorted(every), "a block is empty: run python tools/docs_numbers.py"
    assert {"catalog", "seeds", "seed-errors", "audit", "tests", "bench"} <= set(every)


def test_the_catalog_numbers_are_current() -> None:
    stale = _stale({"catalog", "catalog-errata"})
    assert not stale, f"run python tools/docs_numbers.py: {stale}"


def test_the_seed_numbers_are_current() -> None:
    if not SEEDS.is_dir():
        pytest.skip(f"the seed folder {SEEDS} is missing")
    stale = _stale({"seeds", "seed-errors"})
    assert not stale, f"run python tools/docs_numbers.py: {stale}"


@pytest.mark.slow
def test_the_audit_and_test_counts_are_current(whole_audit: dict[str, Any],
                                               request: pytest.FixtureRequest,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # the block is made from the report docs_numbers.py would make itself: the session's
    # one run of `ptxlayout audit cute --format json` (conftest's whole_audit)
    numbers._cache["audit"] = whole_audit["report"]
    # and the test counts from this session's own collection, where it collected what
    # docs_numbers.py's `pytest --collect-only -q` would (its line, read by its own code)
    counts = collected_as_the_docs_count(request.config)
    if counts is not None:
        run, fuzz = counts
        line = f"{run}/{run + fuzz} tests collected ({fuzz} deselected) in 0.00s\n"
        said = subprocess.CompletedProcess([], 0, stdout=line, stderr="")
        monkeypatch.setattr(numbers, "subprocess",
                            types.SimpleNamespace(run=lambda *a, **k: said))
    stale = _stale({"audit", "tests"})
    assert not stale, f"run python tools/docs_numbers.py: {stale}"


def test_a_stale_block_is_rewritten(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("x\n<!-- numbers:catalog -->\n163 layouts\n<!-- /numbers -->\ny\n",
                    encoding="utf-8")
    assert numbers.write_block(page, "catalog", "164 layouts\n")
    assert text(page) == "x\n<!-- numbers:catalog -->\n164 layouts\n<!-- /numbers -->\ny\n"
    assert not numbers.write_block(page, "catalog", "164 layouts\n")
    assert numbers.blocks_in(text(page)) == [("catalog", "164 layouts\n")]


def test_the_benchmark_is_dated_by_its_script() -> None:
    ((name, body),) = [b for b in numbers.blocks_in(text(DOCS / "benchmarks.md"))
                       if b[0] == "bench"]
    assert re.search(r"Measured \d{4}-\d\d-\d\d \d\d:\d\d UTC by `python bench/run.py", body)
