"""The console a command runs in: its streams, its Ctrl-C, its colours.

Three promises a command-line tool keeps whatever the terminal, worked on one run::

    PYTHONIOENCODING=ascii ptxlayout prove   ->  "  \\u2713 A  .u8/.s8"   (an escape, not a
                                                 UnicodeEncodeError)
    Ctrl-C in the middle of a proof          ->  "ptxlayout: interrupted", exit 130, nothing
                                                 on stdout, no traceback
    NO_COLOR=1 / a pipe                      ->  no escape codes; FORCE_COLOR=1 forces them

``tolerant_streams`` sets stdout's and stderr's error handler to ``backslashreplace``.
``interrupts_exit`` installs, for the time of a ``with``, a SIGINT handler that writes the
one line and leaves with ``os._exit(130)``: no report is printed half, and no finalizer runs
(Z3's ``__del__`` printed a traceback at exit).  Z3 must not take the signal itself -- its
own handler ends the running query as 'unknown' and the interrupt is lost -- so
``z3.set_param("ctrl_c", False)`` goes with it where Z3 is used; the signal then waits for the
query, at most its timeout.  ``colour(stream)`` answers whether to colour a stream, and
``painted(text)`` colours a text report: a check mark green, a cross and ``error`` red,
``warning`` yellow, ``accepted`` cyan (``  \u2717 A ...`` -> ``  \x1b[31m\u2717\x1b[0m A ...``).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as every shell reports it
EXIT_HELP = ("exit status: 0 nothing wrong found; 1 findings (an error finding, a differing "
             "map or atom, stale evidence, a failed kernel); 2 a usage error, an input that "
             "cannot be read or nothing checked (one line on stderr); 130 interrupted")


def tolerant_streams() -> None:
    """stdout and stderr print what their encoding lacks as escapes (a check mark on an
    ASCII terminal) instead of ending in UnicodeEncodeError."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # pragma: no cover - a stream already in use
                pass


def _interrupted(_signum: int, _frame: Any) -> None:
    try:
        os.write(2, b"ptxlayout: interrupted\n")
    finally:
        os._exit(EXIT_INTERRUPTED)


@contextmanager
def interrupts_exit() -> Iterator[None]:
    """Ctrl-C exits 130 with one line while the block runs (the main thread only; elsewhere
    an interrupt stays a KeyboardInterrupt).  The previous handler is restored after."""
    import signal
    try:
        previous = signal.signal(signal.SIGINT, _interrupted)
    except ValueError:  # not the main thread
        previous = None
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
        from .progress import silence
        silence(False)  # a -q run's silence ends with it (tests call main again and again)


def colour(stream: TextIO) -> bool:
    """Colour ``stream``?  ``NO_COLOR`` (any value but empty) says no, ``FORCE_COLOR`` yes
    (https://no-color.org, https://force-color.org); else only a terminal, not TERM=dumb."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


_PAINT = {"\u2713": "32", "\u2717": "31", "error": "1;31", "warning": "33", "accepted": "36"}
_MARKS = re.compile(r"^(\s*)([\u2713\u2717]|(?:error|warning|accepted)(?=: ))"
                    r"|(?<=: )(error|warning|accepted)(?=: )", re.M)


def painted(text: str) -> str:
    """``text`` with ANSI colours on its marks and severities (see the module's docstring)."""
    def paint(m: re.Match[str]) -> str:
        word = m.group(2) or m.group(3)
        return f"{m.group(1) or ''}\x1b[{_PAINT[word]}m{word}\x1b[0m"
    return _MARKS.sub(paint, text)


def positive(kind: type) -> Any:
    """An argparse type: a number of ``kind`` greater than zero (``--timeout -1`` is a
    usage error, not a run where every query is 'unknown')."""
    def parse(text: str) -> Any:
        import argparse
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not value > 0 or value != value or value == float("inf"):
            raise argparse.ArgumentTypeError(f"must be a positive finite number: {text!r}")
        return value
    parse.__name__ = f"positive {kind.__name__}"
    return parse
