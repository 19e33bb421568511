"""The LALR tables the package ships (``grammar/tables/*.json.gz``), built here from the grammars.

    python tools/ship_tables.py            build every parser's tables and write them
    python tools/ship_tables.py --check    exit 1 and name each shipped file that is not what
                                           Lark builds from the grammars today

Each file is the entry ptxlayout's table cache would hold for one parser (its name, e.g.
``fragment-9f51ce82f57ef30b.json``, is the grammar's name and its key: a hash of the grammar
text, the start symbols and the versions of ptxlayout, Lark and Python), gzipped with no
timestamp.  ``formal.base.grammar_files.build_parser`` looks a parser's key up there before the
cache folder, with the same checks, so a parser whose key has no file (an edited grammar,
another Lark or Python) is built as before.  Lark numbers its tokens and states in an order that
changes from one process to the next (sets of objects), so two builds of one grammar are
compared as ``canonical`` forms: every memo reference resolved, tokens by name, states
renumbered in the order a walk from the start states (sorted by name, actions by token name)
first reaches them, rules as sorted texts.  Two tables with one canonical form parse every text
alike (the same actions on the same tokens in corresponding states, the same lexer).  ``--check``
compares those; writing keeps a file whose canonical form is unchanged, so the bytes in the
repository change only with the grammars.

``BUILDERS`` names every function of the package that builds a parser (each is
``functools.cache``'d; ``__wrapped__`` builds afresh); tests/test_shipped_tables.py holds it
equal to the package's ``build_parser`` calls.
"""

from __future__ import annotations

import argparse
import gzip
import importlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BUILDERS = (
    ("formal.text.lines", "_parser"),
    ("formal.parse.grammars", "pseudo_parser"),
    ("formal.parse.grammars", "fragment_parser"),
    ("formal.parse.smem", "_layout_parser"),
    ("formal.parse.smem", "_cell_parser"),
    ("formal.parse.smem", "_line_parser"),
    ("formal.parse.tc_meta", "_parser"),
    ("formal.parse.moves", "moves_parser"),
    ("formal.parse.tc_sparse", "_parser"),
    ("formal.parse.tc_copy", "_parser"),
    ("formal.parse.block_scale", "_parser"),
    ("formal.parse.tmem", "tmem_parser"),
    ("formal.model.cute", "_text_parser"),
    ("formal.audit.ptx", "_parser"),
    ("formal.audit.header", "_parser"),
    ("formal.audit.header", "_piece_parser"),
)


def _resolved(x: Any, memo: dict[int, Any]) -> Any:
    """``x`` with every ``{"@": n}`` replaced by the memo's object n (itself resolved)."""
    if isinstance(x, dict):
        if set(x) == {"@"}:
            return _resolved(memo[x["@"]], memo)
        return {str(k): _resolved(v, memo) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_resolved(v, memo) for v in x]
    return x


# the largest width Python's regular-expression parser gives an unbounded pattern: 2**32 - 1
# (MAXREPEAT) up to Python 3.11.4 or so, 2**64 (MAXWIDTH) after; Lark keeps it in each
# terminal's ``_width``, and orders terminals by it, where every unbounded one ties alike
_UNBOUNDED = 2**32 - 1


def _widths_unbounded(x: Any) -> Any:
    """``x`` with each terminal's unbounded maximum width written as "unbounded"."""
    if isinstance(x, dict):
        return {k: ([v[0], "unbounded" if v[1] >= _UNBOUNDED else v[1]]
                    if k == "_width" and isinstance(v, list) and len(v) == 2
                    and isinstance(v[1], int) else _widths_unbounded(v))
                for k, v in x.items()}
    if isinstance(x, list):
        return [_widths_unbounded(v) for v in x]
    return x


def canonical(entry_bytes: bytes) -> str:
    """One gzipped entry's tables as a text that does not depend on Lark's numbering, nor on
    which patch release of Python wrote an unbounded pattern's width."""
    from formal.base.grammar_files import _decode_object

    entry = json.loads(gzip.decompress(entry_bytes))
    tables = json.loads(entry["tables"], object_hook=_decode_object)
    data = _widths_unbounded(_resolved(tables["data"], tables["memo"]))
    front = data["parser"]
    table = front.pop("parser")
    tokens = {int(k): v for k, v in table["tokens"].items()}
    states = {int(k): v for k, v in table["states"].items()}
    order: dict[int, int] = {}
    todo = [table["start_states"][name] for name in sorted(table["start_states"])]
    walked = []
    while todo:
        state = todo.pop(0)
        if state in order:
            continue
        order[state] = len(order)
        acts = sorted((tokens[int(t)], a) for t, a in states[state].items())
        walked.append((state, acts))
        todo += [a[1] for _t, a in acts if a[0] == 0]
    lines = [json.dumps(sorted(json.dumps(r, sort_keys=True) for r in data.pop("rules")))]
    front["parser_conf"]["rules"] = sorted(json.dumps(r, sort_keys=True)
                                           for r in front["parser_conf"]["rules"])
    lines.append(json.dumps(data, sort_keys=True))
    for name in ("start_states", "end_states"):
        lines.append(json.dumps({k: order.get(v, -1) for k, v in sorted(table[name].items())}))
    lines.append(json.dumps(len(states)))
    for _state, acts in walked:
        lines.append(json.dumps([[t, a[0], order[a[1]] if a[0] == 0 else a[1]]
                                 for t, a in acts], sort_keys=True))
    return "\n".join(lines)


def built_entries() -> dict[str, bytes]:
    """File name -> gzipped entry, for every parser of ``BUILDERS``, built by Lark now."""
    from formal.base import cache as disk
    from formal.base import grammar_files as gf

    made: dict[str, bytes] = {}
    real_build = gf.build_parser

    def record(name: str, start: Any, positions: bool = False) -> Any:
        from lark import Lark

        text = (gf.grammar_dir() / f"{name}.lark").read_text(encoding="utf-8")
        parser = Lark(text, parser="lalr", start=start, propagate_positions=positions,
                      maybe_placeholders=False)
        key = gf._tables_key(text, [start, positions])
        entry = gf.tables_entry(parser, key, gf._digest(text))
        body = json.dumps(entry, separators=(",", ":"), sort_keys=True).encode("utf-8")
        made[f"{name}-{key[:16]}.json.gz"] = gzip.compress(body, 9, mtime=0)
        return parser

    disk.disable()
    for module, function in BUILDERS:
        mod = importlib.import_module(module)
        mod.build_parser = record  # type: ignore[attr-defined]
        try:
            getattr(mod, function).__wrapped__()
        finally:
            mod.build_parser = real_build  # type: ignore[attr-defined]
    return made


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    from formal.base.grammar_files import shipped_dir

    made = built_entries()
    where = shipped_dir()
    have = {p.name: p.read_bytes() for p in where.glob("*.json.gz")} if where.is_dir() else {}
    if args.check:
        wrong = sorted(n for n in set(made) | set(have) if n not in made or n not in have
                       or canonical(made[n]) != canonical(have[n]))
        for name in wrong:
            why = "missing" if name not in have else "stale" if name not in made else "differs"
            print(f"{where / name}: {why} (python tools/ship_tables.py rewrites them)")
        return 1 if wrong else 0
    where.mkdir(exist_ok=True)
    for name in set(have) - set(made):
        (where / name).unlink()
    for name, body in made.items():
        if name in have and canonical(have[name]) == canonical(body):
            continue
        with tempfile.NamedTemporaryFile(dir=where, delete=False) as tmp:
            tmp.write(body)
        os.chmod(tmp.name, 0o644)
        os.replace(tmp.name, where / name)
    print(f"{len(made)} tables in {where}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
