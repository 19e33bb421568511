"""The pipeline's shape, kept by a test: every import points down the stages, and no cycle.

The packages of ``formal/`` are stages, each on a floor (DESIGN.md):

    base (0) <- execute (1) ; text (1) <- catalog (2) <- parse (3) <- model (4) <- prove (5)
    <- writers, audit (6) <- api (7) <- cli (8) <- __main__ (9)

A module may import a module of its own package or of a lower floor, never of a higher one
(``prove`` never imports ``writers``; ``execute`` imports only ``base``), and the modules must not
import each other in a loop.  Imports inside functions count: a lazy import that runs back up
is still a back edge.  The test walks every module with ``ast``; nothing is imported.

One vocabulary: a class name (``Case``) or a public top-level function name (``to_text``) is
defined in one module of ``formal/`` only, so a name means one thing; ``formal/cli.py`` is the
only command line (the one ``argparse.ArgumentParser``), and ``formal/base/grammar_files.py``
the only place that builds a Lark parser (so every cached table passes its checks).  Each
checker is shown to fail on a planted violation.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORMAL = ROOT / "formal"

FLOORS = {"base": 0, "execute": 1, "text": 1, "catalog": 2, "parse": 3, "model": 4,
          "prove": 5, "writers": 6, "audit": 6, "api": 7, "cli": 8, "__main__": 9, "__init__": 0}
MAX_LINES = 700


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path, me: str | None = None) -> set[str]:
    """Every formal module this file imports (a ``from pkg import mod`` names pkg.mod);
    ``me`` is the module's name where the file lies outside the tree."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = me or _module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("formal"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("formal"):
                continue
            for a in node.names:
                sub = f"{target}.{a.name}"
                out.add(sub if _exists(sub) else target)
    out.discard(me)
    return out


def _exists(module: str) -> bool:
    p = ROOT / Path(*module.split("."))
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def _graph() -> dict[str, set[str]]:
    return {_module_name(p): _imports(p) for p in sorted(FORMAL.rglob("*.py"))
            if "grammar" not in p.parts and "evidence_data" not in p.parts}


def test_every_import_points_down_the_pipeline() -> None:
    back = []
    for mod, deps in _graph().items():
        for dep in deps:
            a, b = _stage(mod), _stage(dep)
            if a == b or dep == "formal":  # within a package; the package's version string
                continue
            if FLOORS[b] >= FLOORS[a]:
                back.append(f"{mod} ({a}, floor {FLOORS[a]}) imports {dep} ({b}, floor "
                            f"{FLOORS[b]})")
    assert not back, "imports that run back up the pipeline:\n" + "\n".join(sorted(back))


def test_no_import_cycle() -> None:
    graph = _graph()
    # a package's face (__init__) imports its own modules; those importing the face would loop
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for dep in sorted(graph.get(node, ())):
            if dep not in graph:
                continue
            if state.get(dep) == 1:
                cycles.append(path[path.index(dep):] + [dep] if dep in path else [node, dep])
            elif dep not in state:
                visit(dep, path + [dep])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_every_module_is_short_and_explains_itself() -> None:
    long, silent = [], []
    for p in sorted(FORMAL.rglob("*.py")):
        text = p.read_text(encoding="utf-8")
        n = text.count("\n")
        if n > MAX_LINES:
            long.append(f"{p.relative_to(ROOT)}: {n} lines")
        if not ast.get_docstring(ast.parse(text)):
            silent.append(str(p.relative_to(ROOT)))
    assert not long, f"modules over {MAX_LINES} lines:\n" + "\n".join(long)
    assert not silent, "modules without a docstring:\n" + "\n".join(silent)


def test_the_walk_sees_a_planted_back_edge(tmp_path: Path) -> None:
    # the checker itself must be able to fail: prove importing writers is a back edge (the file
    # is planted outside the tree, read as if it were formal/prove/planted.py)
    planted = tmp_path / "planted.py"
    planted.write_text('"""planted by a test"""\nfrom ..writers import report  # noqa\n')
    deps = _imports(planted, "formal.prove.planted")
    assert deps == {"formal.writers.report"}
    assert FLOORS[_stage("formal.writers.report")] > FLOORS[_stage("formal.prove.planted")]


# ---- one vocabulary ------------------------------------------------------------------------

THE_COMMAND_LINE = "formal/cli.py"
THE_GRAMMAR_LOADER = "formal/base/grammar_files.py"


def _sources() -> list[tuple[str, Path]]:
    return [(str(p.relative_to(ROOT)), p) for p in sorted(FORMAL.rglob("*.py"))]


def _definitions(files: Iterable[tuple[str, Path]]) -> dict[str, list[str]]:
    """Every top-level class name and public top-level function name -> the files that
    define it."""
    out: dict[str, list[str]] = {}
    for name, path in files:
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) or (
                    isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and not node.name.startswith("_")):
                out.setdefault(node.name, []).append(name)
    return out


def _defined_twice(files: Iterable[tuple[str, Path]]) -> dict[str, list[str]]:
    return {k: v for k, v in _definitions(files).items() if len(v) > 1}


def _names(e: ast.expr, wanted: str) -> bool:
    """``e`` is ``wanted`` or ``something.wanted``."""
    return (isinstance(e, ast.Name) and e.id == wanted) or \
        (isinstance(e, ast.Attribute) and e.attr == wanted)


def _calls(files: Iterable[tuple[str, Path]], wanted: str) -> list[str]:
    """``file:line`` of every call of ``wanted`` (``wanted(...)``, ``x.wanted(...)``) or of
    a method on it (``wanted.open(...)``)."""
    out = []
    for name, path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            if _names(f, wanted) or (isinstance(f, ast.Attribute) and _names(f.value, wanted)):
                out.append(f"{name}:{node.lineno}")
    return out


def test_no_name_is_defined_twice() -> None:
    twice = _defined_twice(_sources())
    assert not twice, "names defined in more than one module of formal/:\n" + "\n".join(
        f"{k}: {', '.join(v)}" for k, v in sorted(twice.items()))


def test_one_command_line() -> None:
    found = [c for c in _calls(_sources(), "ArgumentParser")
             if c.rpartition(":")[0] != THE_COMMAND_LINE]
    assert not found, "argument parsers outside formal/cli.py:\n" + "\n".join(found)
    assert _calls([(THE_COMMAND_LINE, ROOT / THE_COMMAND_LINE)], "ArgumentParser")


def test_one_place_builds_lark_parsers() -> None:
    found = [c for c in _calls(_sources(), "Lark") if not c.startswith(THE_GRAMMAR_LOADER + ":")]
    assert not found, "Lark parsers built outside formal/base/grammar_files.py:\n" + \
        "\n".join(found)
    assert _calls([(THE_GRAMMAR_LOADER, ROOT / THE_GRAMMAR_LOADER)], "Lark")


def test_the_checkers_see_planted_violations(tmp_path: Path) -> None:
    # a second Case, a second to_text, a parser and a Lark built beside the one places
    planted = tmp_path / "planted.py"
    planted.write_text('"""planted by a test"""\nimport argparse\n\nimport lark\n\n\n'
                       "class Case:\n    pass\n\n\ndef to_text() -> None:\n"
                       "    argparse.ArgumentParser(prog='x')\n    lark.Lark('start: \"a\"')\n"
                       "    lark.Lark.open('x.lark')\n\n\ndef _private() -> None:\n    pass\n")
    other = tmp_path / "other.py"
    other.write_text('"""planted"""\n\n\nclass Case:\n    pass\n\n\ndef to_text() -> None:\n'
                     "    pass\n\n\ndef _private() -> None:\n    pass\n")
    files = [("formal/parse/planted.py", planted), ("formal/model/other.py", other)]
    assert _defined_twice(files) == {
        "Case": ["formal/parse/planted.py", "formal/model/other.py"],
        "to_text": ["formal/parse/planted.py", "formal/model/other.py"]}  # _private is free
    assert _calls(files, "ArgumentParser") == ["formal/parse/planted.py:12"]
    assert _calls(files, "Lark") == ["formal/parse/planted.py:13", "formal/parse/planted.py:14"]
