"""The parse stage's Transformers hand a token on as it is (``grammars.RuleTransformer``:
``visit_tokens=False``), which is what Lark's token visit does only where no method of the
Transformer is named after the token's terminal: every one of them is held to that here, over
every terminal of every grammar the parse stage reads with."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
from lark import Token, Transformer, Tree

import formal.parse
from formal.parse import block_scale, moves, smem, tc_copy, tc_meta, tc_sparse, tmem
from formal.parse.grammars import RuleTransformer, fragment_parser, pseudo_parser


def _transformers() -> list[type]:
    found = []
    for m in pkgutil.iter_modules(formal.parse.__path__, "formal.parse."):
        mod = importlib.import_module(m.name)
        for _, c in inspect.getmembers(mod, inspect.isclass):
            if issubclass(c, Transformer) and c.__module__ == mod.__name__:
                found.append(c)
    return found


def _parsers() -> list:
    return [pseudo_parser(), fragment_parser(), moves.moves_parser(), tmem.tmem_parser(),
            smem._layout_parser(), smem._cell_parser(), smem._line_parser(),
            block_scale._parser(), tc_copy._parser(), tc_meta._parser(), tc_sparse._parser()]


def test_every_transformer_of_the_parse_stage_is_a_rule_transformer():
    names = {c.__name__ for c in _transformers()}
    assert {"PseudoTransformer", "ProseTransformer", "MovesTransformer", "TmemTransformer",
            "_Cells", "_LineFacts", "_ToValues", "_ToCopy", "_ToMeta", "_ToFacts"} <= names
    for c in _transformers():
        assert issubclass(c, RuleTransformer), c
        assert c.__default_token__ is Transformer.__default_token__, c


def test_no_transformer_has_a_method_named_after_a_terminal():
    terminals = {t.name for p in _parsers() for t in p.terminals}
    assert {"NAME", "INT", "NUMBER", "FILL"} <= terminals  # the grammars were read
    for c in _transformers():
        assert not [t for t in terminals if hasattr(c, t)], c


@pytest.mark.parametrize("make", [lambda: smem._LineFacts(), lambda: block_scale._ToValues(),
                                  lambda: tc_meta._ToMeta(), lambda: tc_copy._ToCopy(),
                                  lambda: tc_sparse._ToFacts()])
def test_a_rule_transformer_hands_tokens_on_unvisited(make):
    t = make()
    assert t.__visit_tokens__ is False
    tok = Token("NAME", "laneid", start_pos=3)
    got = t.transform(Tree("no_such_rule", [tok]))
    assert got == Tree("no_such_rule", [tok]) and got.children[0] is tok


def test_the_catalog_smem_lines_read_alike_with_tokens_visited():
    """A line's facts with Lark's token visit (the default) equal those without."""
    from formal import catalog
    text = (catalog.CATALOG_DIR / "smem" / "layouts.md").read_text(encoding="utf-8")
    seen = 0
    for raw in text.splitlines():
        blank = smem._blank_markup(raw)
        if not smem._may_open()(blank):
            continue
        tree = smem._line_parser().parse(blank)
        visited = smem._LineFacts()
        Transformer.__init__(visited, visit_tokens=True)
        assert visited.transform(tree) == smem._LineFacts().transform(tree)
        seen += 1
    assert seen > 20
