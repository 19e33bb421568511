"""Issue 16: a guard that admits elements a lane does not hold is judged by one rule, whatever
its form -- a warning, "the condition ... is wider than the element list", naming the first
element past the list it admits.  The m16n8k16 ``.s8`` A block (eight elements a lane, a0..a7)
with its ``col`` or ``row`` guard rewritten in each form; the map stays right, so every
obligation is still proved."""

from __future__ import annotations

from pathlib import Path

import pytest

from formal.api import analyze
from formal.prove.verdicts import Options

from .sections import COL, ROW, a_section

SET = "i = {0,..,7}"
assert SET in COL
ROW_HIGH = "groupID + 8 for ai where i >= 4"
assert ROW_HIGH in ROW


def _guards(tmp_path: Path, text: str) -> tuple[list[str], list[str]]:
    doc = tmp_path / "section.txt"
    doc.write_text(text, encoding="utf-8")
    run = analyze([doc], Options(), use_catalog=False)
    (res,) = run.proof.results
    bad = [v.name for v in res.verdicts if v.status not in ("proved", "not-applicable")]
    return [f.message for f in run.proof.findings if f.kind == "guard"], bad


@pytest.mark.parametrize("guard,bound,element", [
    ("i = {0,..,8}", "i = {0,..,8}", "a8"),     # a set one past the list
    ("i = {0,..,3, 4,..,11}", "i = {4,..,11}", "a11"),  # ranges: the one past the list
    ("i < 9", "i < 9", "a8"),                   # admits 0..8
    ("i < 16", "i < 16", "a15"),
    ("i <= 8", "i <= 8", "a8"),
    ("9 > i", "9 > i", "a8"),                   # the same bound written the other way
], ids=["set", "ranges", "lt", "lt-16", "le", "reversed"])
def test_an_upper_bound_past_the_list_is_a_warning(tmp_path: Path, guard: str, bound: str,
                                                   element: str) -> None:
    found, bad = _guards(tmp_path, a_section(col=COL.replace(SET, guard)))
    assert found == [f"the condition 'for ai where {guard}' of 'col' is wider than the "
                     f"element list: '{bound}' admits {element}, but a lane holds only 8 "
                     "elements (a0..a7)"]
    assert not bad  # the map is right: a warning, not a refutation


@pytest.mark.parametrize("guard,bound,element", [
    ("i >= 4 || i > 8", "i > 8", "a9"),         # its first element is past the list
    ("i >= 4 || i >= 8", "i >= 8", "a8"),
], ids=["gt", "ge"])
def test_a_lower_bound_past_the_list_is_a_warning(tmp_path: Path, guard: str, bound: str,
                                                  element: str) -> None:
    found, bad = _guards(tmp_path, a_section(row=ROW.replace("i >= 4", guard)))
    assert found == [f"the condition 'for ai where {guard}' of 'row' is wider than the "
                     f"element list: '{bound}' admits {element}, but a lane holds only 8 "
                     "elements (a0..a7)"]
    assert not bad


@pytest.mark.parametrize("guard", ["i = {0,..,7}", "i < 8", "i <= 7", "8 > i",
                                   "i >= 0", "i > -1"])
def test_a_guard_within_the_list_is_silent(tmp_path: Path, guard: str) -> None:
    found, bad = _guards(tmp_path, a_section(col=COL.replace(SET, guard)))
    assert found == [] and not bad


@pytest.mark.parametrize("guard", ["i >= 4", "i > 3", "4 <= i", "3 < i"])
def test_a_lower_bound_within_the_list_is_silent(tmp_path: Path, guard: str) -> None:
    # open above, as the spec writes its second cases: 'the rest' is not wider than the list
    found, bad = _guards(tmp_path, a_section(row=ROW.replace("i >= 4", guard)))
    assert found == [] and not bad
