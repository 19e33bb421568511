"""One JUnit ``<testcase>`` line, for every report that writes JUnit XML.

``testcase('classname="a" name="b"', "failure", "lane 5")`` is the line
``    <testcase classname="a" name="b"><failure message="lane 5">lane 5</failure></testcase>``:
a ``failure`` carries its message as the attribute and ``text`` (default: the message) as the
body; an ``error`` or ``skipped`` carries the message only; ``passed`` is the bare element.
``attrs`` is already quoted (``xml.sax.saxutils.quoteattr``).  Standard library only.
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

OUTCOMES = ("passed", "failure", "error", "skipped")


def testcase(attrs: str, outcome: str = "passed", message: str = "",
             text: str | None = None) -> str:
    if outcome == "passed":
        return f"    <testcase {attrs}/>"
    if outcome == "failure":
        body = message if text is None else text
        return (f"    <testcase {attrs}><failure message={quoteattr(message)}>"
                f"{escape(body)}</failure></testcase>")
    if outcome in ("error", "skipped"):
        return f"    <testcase {attrs}><{outcome} message={quoteattr(message)}/></testcase>"
    raise ValueError(f"not a JUnit outcome: {outcome!r} (one of {', '.join(OUTCOMES)})")
