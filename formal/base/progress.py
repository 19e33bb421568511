"""A one-line progress bar on stderr for the runs that take a while.

    reading  2/3 documents [####################          ]
    proving  57/109 layouts [###############               ]
    running 12/40 variants [#########                     ]

Shown only when stderr is a terminal (``progress()`` answers ``None`` otherwise, so a run whose
stderr is captured -- tests, CI, a pipe -- writes exactly what it wrote without it) and only once
the run has taken ``AFTER`` seconds; the line is wiped when the count reaches its total.  The
stages take the bar as a plain callback ``(done, total)`` (``part``: how far into the next item,
0..1, filling the bar between ``done`` and ``done + 1``), so none of them imports this module
but the command lines that make one.  Standard library only: the GPU runner, which needs only
numpy and CuPy, uses it too.  ``silence(True)`` (``-q``) turns every bar off.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

AFTER = 1.0  # seconds before the bar first shows
EVERY = 0.1  # seconds between two redraws
WIDTH = 30


class Progress:
    """The bar: call it with ``(done, total)`` as the work goes on.  One instance serves the
    phases of a run (``phase`` gives a callback with its own words), so the second counts
    from the run's start, not the phase's."""

    def __init__(self, what: str = "proving", unit: str = "layouts",
                 stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.t0 = self.clock()
        self.what, self.unit = what, unit
        self.stream = stream  # None: sys.stderr, looked up when writing
        self.shown = 0  # the length of the line on the terminal now (0: none)
        self.last = 0.0

    def __call__(self, done: int, total: int, part: float = 0.0, what: str | None = None,
                 unit: str | None = None) -> None:
        now = self.clock()
        if done >= total:
            self.clear()
            return
        if now - self.t0 < AFTER or now - self.last < EVERY:
            return
        self.last = now
        full = min(WIDTH, int(WIDTH * (done + min(max(part, 0.0), 1.0)) / max(1, total)))
        line = f"{what or self.what} {done:>{len(str(total))}}/{total} {unit or self.unit} " \
               f"[{'#' * full}{' ' * (WIDTH - full)}]"
        self._write("\r" + line + " " * (self.shown - len(line)))
        self.shown = len(line)

    def phase(self, what: str, unit: str) -> Callable[..., None]:
        """This bar as a callback ``(done, total, part=0.0)`` that says ``what`` and ``unit``."""
        def call(done: int, total: int, part: float = 0.0) -> None:
            self(done, total, part, what, unit)
        return call

    def clear(self) -> None:
        """Wipe the line, if one is shown (before other output goes to the terminal); the next
        call draws it again."""
        if self.shown:
            self._write("\r" + " " * self.shown + "\r")
            self.shown = 0
            self.last = 0.0

    def _write(self, text: str) -> None:
        out: Any = self.stream if self.stream is not None else sys.stderr
        try:
            out.write(text)
            out.flush()
        except (OSError, ValueError):  # a closed or broken terminal: the bar is not worth a failure
            pass


def is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, OSError, ValueError):
        return False


_SILENT = [False]  # -q: the command line asked for the problems only


def silence(quiet: bool) -> None:
    """``quiet``: no bar at all from here on, terminal or not (``ptxlayout -q``); each run of
    the command line sets it afresh."""
    _SILENT[0] = quiet


def progress(what: str = "proving", unit: str = "layouts",
             stream: TextIO | None = None) -> Progress | None:
    """A bar on ``stream`` (default stderr) when it is a terminal and the run is not quiet;
    ``None`` when it is not."""
    if _SILENT[0]:
        return None
    return Progress(what, unit, stream) if is_terminal(
        stream if stream is not None else sys.stderr) else None
