"""Check the claims of README.md: the commands it shows, the numbers it gives, the paths it names.

    python tools/check_readme.py             exit 0 when every claim holds, 1 naming each that
    python tools/check_readme.py FILE.md     does not (another page of the same kind)

Three kinds of claim, worked on lines of the front page::

    ptxlayout prove spec.md --format json    the command exists and takes --format
    pip install -e '.[test]'                 pyproject.toml defines the extra 'test'
    `--strict` fails on them                 some command takes --strict
    `formal/catalog/errata.json` says why    the file exists in the repository
    2206 atoms, 7665 operand checks          each number stands in a block that
                                             tools/docs_numbers.py computes (README's or a
                                             page's of docs/), or is one of STATED below,
                                             each checked against the code that fixes it

A number inside an identifier (``m16n8k16``, ``sm_90``, ``.f64``), in code or in a link
target is not a claim of this kind.  Paths outside the repository (``../shared/seeds``) and
names a command writes (``m.svg``) are not checked.  ``tests/test_check_readme.py`` runs it.
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BLOCK = re.compile(r"<!-- numbers:[\w-]+ -->\n.*?<!-- /numbers -->", re.DOTALL)
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.DOTALL | re.M)
CODE = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\]\(([^)\s]+)\)")
NUMBER = re.compile(r"(?<![\w.:/<>-])\d+(?:,\d{3})*(?:\.\d+)?(?![\w/%])(?!\.\d)")


def _exit_codes() -> dict[str, bool]:
    from formal import cli
    return {"0": cli.EXIT_OK == 0, "1": cli.EXIT_FINDINGS == 1, "2": cli.EXIT_USAGE == 2,
            "130": cli.EXIT_INTERRUPTED == 130}


def _cutlass_version() -> bool:
    """The audited CUTLASS release is the one docs/audit.md's computed block names."""
    return "nvidia-cutlass 4.2" in _blocks_text()


def _triton_version() -> bool:
    return "3.9.0 audited" in (ROOT / "docs" / "audit.md").read_text(encoding="utf-8")


def _smem_evidence() -> tuple[int, int, int]:
    """From the newest evidence file with wgmma runs on the catalog's shared-memory layouts:
    how many layouts, bit-exact checks and planted edits that mismatched."""
    import json
    for path in sorted((ROOT / "proofs" / "evidence").glob("*.json"), reverse=True):
        runs = [r for r in json.loads(path.read_text("utf-8")).get("runs", ())
                if (r.get("smem_layout") or {}).get("catalog")]
        if runs:
            return (len({r["smem_layout"]["catalog"] for r in runs}),
                    sum(r["mode"] == "check" and r["result"] == "match" for r in runs),
                    sum(r["mode"] == "experiment" and r["result"] == "mismatch" for r in runs))
    return (0, 0, 0)


def _in_test(test: str, words: str) -> Callable[[], bool]:
    """A fact of the spec the front page gives, which the test ``test`` checks (and names
    with ``words``)."""
    return lambda: words in (ROOT / "tests" / test).read_text(encoding="utf-8")


# numbers the front page states outside a computed block, each with what confirms it
STATED: dict[str, Callable[[], bool]] = {
    **{code: (lambda c=code: _exit_codes()[c]) for code in ("0", "1", "2", "130")},
    "4.2": _cutlass_version,
    "3.9": _triton_version,
    "20": lambda: _smem_evidence()[0] == 20,
    "120": lambda: _smem_evidence()[1] == 120,
    "112": lambda: _smem_evidence()[2] == 112,
    "64": _in_test("test_wmma_section.py", "32 elements for a 64-cell tile"),
    "96": _in_test("test_block_scale.py", "K=96"),
    **{b: _in_test("test_smem.py", "the 8-bit field 53-60") for b in ("53", "60")},
}


def _blocks_text() -> str:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return "\n".join(m.group(0) for p in pages for m in BLOCK.finditer(p.read_text("utf-8")))


def _parser() -> argparse.ArgumentParser:
    from formal.cli import parser
    return parser()


def _subparsers(ap: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for a in ap._actions:
        if isinstance(a, argparse._SubParsersAction):
            return dict(a.choices)
    return {}


def _options(ap: argparse.ArgumentParser) -> set[str]:
    return {s for a in ap._actions for s in a.option_strings}


def _all_options(ap: argparse.ArgumentParser) -> set[str]:
    out = set(_options(ap))
    for sub in _subparsers(ap).values():
        out |= _all_options(sub)
    return out


def check_command(line: str, ap: argparse.ArgumentParser) -> list[str]:
    """What is wrong with one ``ptxlayout ...`` command line (empty: nothing)."""
    try:
        words = shlex.split(line.split(" #")[0])
    except ValueError as exc:
        return [f"'{line}': cannot split it ({exc})"]
    words = words[1:]  # 'ptxlayout'
    parser = ap
    while words and not words[0].startswith("-") and _subparsers(parser):
        name = words.pop(0)
        subs = _subparsers(parser)
        if name not in subs:
            return [f"'{line}': no command '{name}' (the commands: {', '.join(subs)})"]
        parser = subs[name]
    if _subparsers(parser):
        return [f"'{line}': '{parser.prog}' needs one of {', '.join(_subparsers(parser))}"]
    known = _options(parser)
    return [f"'{line}': {parser.prog} has no option {w.split('=')[0]}"
            for w in words if w.startswith("-") and w.split("=")[0] not in known]


def _extras() -> set[str]:
    import tomllib
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return set(data["project"].get("optional-dependencies", {}))


def check_install(line: str) -> list[str]:
    """A ``pip install ... '.[extra,...]'`` line names extras pyproject.toml defines."""
    out = []
    for group in re.findall(r"\.\[([\w,-]+)\]", line):
        out += [f"'{line}': no extra '{e}' in pyproject.toml" for e in group.split(",")
                if e not in _extras()]
    return out


def _prose(text: str) -> str:
    """``text`` without its computed blocks, fenced code and link targets."""
    text = BLOCK.sub("", text)
    text = FENCE.sub("", text)
    return LINK.sub("]", text)


def _commands(text: str) -> Iterator[str]:
    for fence in FENCE.finditer(text):
        for line in fence.group(1).splitlines():
            if line.strip().startswith("ptxlayout "):
                yield line.strip()
    for span in CODE.findall(BLOCK.sub("", FENCE.sub("", text))):
        if span.startswith("ptxlayout "):
            yield span


def _paths(text: str) -> Iterator[str]:
    prose = BLOCK.sub("", FENCE.sub("", text))
    for target in LINK.findall(prose):
        if "://" not in target:
            yield target.split("#")[0]
    for span in CODE.findall(prose):
        if re.fullmatch(r"[\w.-]+(/[\w.-]+)+/?|[A-Z]+|[\w-]+\.(md|json|py|toml|lark)", span):
            yield span


def check(page: Path) -> list[str]:
    """Every claim of ``page`` that does not hold, one line each."""
    text = page.read_text(encoding="utf-8")
    problems: list[str] = []
    ap = _parser()
    for line in _commands(text):
        problems += check_command(line, ap)
    for fence in FENCE.finditer(text):
        for line in fence.group(1).splitlines():
            if "pip install" in line:
                problems += check_install(line.split(" #")[0])
    every = _all_options(ap)
    for span in CODE.findall(_prose(text)):
        if span.startswith("--"):
            opt = span.split()[0].split("=")[0]
            if opt not in every:
                problems.append(f"`{span}`: no command takes {opt}")
    for path in _paths(text):
        if path.startswith("../") or not path:
            continue  # beside the repository, not in it
        if not (page.parent / path).exists() and not (ROOT / path).exists():
            problems.append(f"{path}: no such file or folder")
    computed = set(NUMBER.findall(_blocks_text()))
    for number in NUMBER.findall(CODE.sub("", _prose(text))):
        if number in computed:
            continue
        confirm = STATED.get(number)
        if confirm is None:
            problems.append(f"{number}: a number neither computed (tools/docs_numbers.py) nor "
                            "stated in tools/check_readme.py")
        elif not confirm():
            problems.append(f"{number}: what tools/check_readme.py checks it against no "
                            "longer says it")
    return problems


def main(argv: list[str] | None = None) -> int:
    args = (sys.argv[1:] if argv is None else argv) or [str(ROOT / "README.md")]
    problems = [f"{page}: {p}" for page in args for p in check(Path(page))]
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
