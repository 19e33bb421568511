"""README's claims, checked by ``tools/check_readme.py``: its commands exist with their
options, every number is computed or confirmed, every path it names exists.

The front page must pass; a page with one planted fault of each kind must fail on exactly
those faults.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from .conftest import ROOT


def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_readme",
                                                  ROOT / "tools" / "check_readme.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_front_page_claims_hold() -> None:
    assert tool().check(ROOT / "README.md") == []


def test_each_kind_of_false_claim_is_caught(tmp_path: Path) -> None:
    page = tmp_path / "README.md"
    import re
    layouts = re.search(r"\*\*(\d+) layouts\*\*", (ROOT / "README.md").read_text("utf-8"))
    assert layouts is not None  # the catalog's count, which the numbers block computes
    page.write_text(
        f"Intro with {layouts.group(1)} layouts and 9999 widgets.\n\n"
        "```sh\n"
        "ptxlayout prove spec.md --format json     # fine\n"
        "ptxlayout prove --frobnicate               # no such option\n"
        "ptxlayout proove                           # no such command\n"
        "ptxlayout audit                            # a library is needed\n"
        "pip install -e '.[test,nope]'              # no extra 'nope'\n"
        "```\n\n"
        "See `docs/cli.md`, `docs/nowhere.md`, [the manual](docs/obligations.md) and "
        "`--strict`, `--no-such-flag`; exit 130.\n", encoding="utf-8")
    problems = tool().check(page)
    assert len(problems) == 7, problems
    text = "\n".join(problems)
    assert "ptxlayout prove has no option --frobnicate" in text
    assert "no command 'proove'" in text
    assert "'ptxlayout audit' needs one of cute, triton" in text
    assert "docs/nowhere.md: no such file" in text
    assert "`--no-such-flag`: no command takes --no-such-flag" in text
    assert "9999: a number neither computed" in text
    assert "no extra 'nope' in pyproject.toml" in text


def test_the_script_exits_1_on_a_false_claim(tmp_path: Path) -> None:
    page = tmp_path / "x.md"
    page.write_text("`ptxlayout show --nope`\n", encoding="utf-8")
    assert tool().main([str(page)]) == 1
    page.write_text("`ptxlayout show --help`\n", encoding="utf-8")
    assert tool().main([str(page)]) == 0
