"""Issue 14, the progress bar: one line on stderr, only on a terminal, only after a second.

The bar (``formal.base.progress``) is driven with a fake clock and a fake terminal; then the
commands that use it -- reading documents, proving layouts, running GPU variants -- with a
stderr that says it is a terminal, and with one that does not (nothing at all is written).
"""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

import pytest

from formal.base import progress as pg
from formal.cli import main

from .sections import M8N8K4, S8_A

BAR = 30


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def docs(tmp_path: Path) -> list[Path]:
    """Two documents of our own: the m16n8k16 .s8 A section and the m8n8k4 .f16 A section."""
    out = []
    for name, text in (("s8.txt", S8_A), ("m8n8k4.txt", M8N8K4)):
        (tmp_path / name).write_text(text, encoding="utf-8")
        out.append(tmp_path / name)
    return out


def bar_at(now: list[float], stream: io.StringIO, what: str = "proving",
           unit: str = "layouts") -> pg.Progress:
    return pg.Progress(what, unit, stream, clock=lambda: now[0])


def test_nothing_is_drawn_in_the_first_second_then_the_exact_line_then_it_is_wiped() -> None:
    out, now = Tty(), [100.0]
    bar = bar_at(now, out, "running", "variants")
    bar(1, 40)
    now[0] = 100.99
    bar(3, 40)
    assert out.getvalue() == ""  # under a second: nothing
    now[0] = 101.0
    bar(12, 40)  # 12/40 of 30 columns: 9
    line = "running 12/40 variants [" + "#" * 9 + " " * 21 + "]"
    assert out.getvalue() == "\r" + line
    now[0] = 101.05
    bar(13, 40)  # within a tenth of a second of the last draw: not redrawn
    assert out.getvalue() == "\r" + line
    now[0] = 101.2
    bar(40, 40)  # done: the line is wiped, the cursor back at its start
    assert out.getvalue() == "\r" + line + "\r" + " " * len(line) + "\r"
    assert len(line) == len("running 12/40 variants [") + BAR + 1


def test_a_run_done_within_a_second_writes_nothing_at_all() -> None:
    out, now = Tty(), [5.0]
    bar = bar_at(now, out)
    for k in range(1, 110):
        now[0] += 0.005
        bar(k, 109)
    assert out.getvalue() == ""


def test_no_bar_when_stderr_is_not_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    assert pg.progress(stream=io.StringIO()) is None
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert pg.progress() is None
    monkeypatch.setattr(sys, "stderr", Tty())
    assert isinstance(pg.progress(), pg.Progress)


def test_phases_share_the_clock_and_part_fills_the_bar_within_an_item() -> None:
    out, now = Tty(), [0.0]
    bar = bar_at(now, out)
    reading = bar.phase("reading", "documents")
    reading(0, 1, 0.4)
    now[0] = 1.5  # the second counts from the run's start, not the phase's
    reading(0, 1, 0.5)  # one big document, half done: half the bar
    first = "reading 0/1 documents [" + "#" * 15 + " " * 15 + "]"
    assert out.getvalue() == "\r" + first
    reading(1, 1)
    assert out.getvalue().endswith("\r" + " " * len(first) + "\r")
    now[0] = 2.0
    bar(2, 4)  # the bar's own words again
    assert out.getvalue().endswith("\rproving 2/4 layouts [" + "#" * 15 + " " * 15 + "]")
    now[0] = 2.5
    bar(3, 40, what="ok", unit="x")  # a shorter line covers the longer one it replaces
    longer = len("proving 2/4 layouts [") + BAR + 1
    shorter = "ok  3/40 x [" + "##" + " " * 28 + "]"
    assert out.getvalue().endswith("\r" + shorter + " " * (longer - len(shorter)))


def test_model_of_tells_the_reading_of_each_document(docs: list[Path]) -> None:
    from formal.api import model_of
    calls: list[tuple[int, int, float]] = []
    told = model_of(docs, use_catalog=False,
                    progress=lambda d, t, p=0.0: calls.append((d, t, p)))
    assert calls == [(0, 2, 0.5), (1, 2, 0.0), (1, 2, 0.5), (2, 2, 0.0)]
    plain = model_of(docs, use_catalog=False)
    assert told == plain  # the same model, read one document at a time


def _quick(monkeypatch: pytest.MonkeyPatch) -> Tty:
    """stderr a terminal, and the bar at once (no second to wait, no redraw limit)."""
    err = Tty()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(pg, "AFTER", 0.0)
    monkeypatch.setattr(pg, "EVERY", 0.0)
    return err


def _wiped(text: str) -> bool:
    """Every drawn line is wiped again: the text ends with the cursor at an empty line."""
    last = text.rsplit("\r", 2)
    return text.endswith("\r") and last[-2].strip() == ""


def test_prove_on_a_terminal_reads_then_proves(docs: list[Path],
                                              monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    err = _quick(monkeypatch)
    code = main(["prove", *map(str, docs), "--no-catalog",
                 "--evidence", "none", "--format", "json"])
    capsys.readouterr()
    text = err.getvalue()
    assert code in (0, 1)
    assert "\rreading 0/2 documents [" + "#" * 7 + " " * 23 + "]" in text
    assert "\rreading 1/2 documents [" + "#" * 15 + " " * 15 + "]" in text
    assert "\rproving 1/" in text and " layouts [" in text
    assert text.index("reading") < text.index("proving")
    assert _wiped(text)


def test_the_commands_write_nothing_more_when_stderr_is_captured(
        docs: list[Path], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pg, "AFTER", 0.0)
    monkeypatch.setattr(pg, "EVERY", 0.0)
    for argv in (["extract", *map(str, docs), "--no-catalog"],
                 ["diff", *map(str, docs), "--evidence", "none"],
                 ["prove", *map(str, docs), "--no-catalog", "--evidence", "none"]):
        main(argv)
        assert "\r" not in capsys.readouterr().err


def test_a_fake_gpu_run_on_a_terminal_counts_variants(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    err = _quick(monkeypatch)
    code = main(["gpu", "--device", "fake", "--only", "m16n8k8.f32", "--no-ptxas",
                 "--trials", "1", "--no-errata"])
    out = capsys.readouterr().out
    text = err.getvalue()
    assert code == 0, out
    assert "running 0/" in text and " variants [" in text
    assert "\r" not in out and "checks:" in out
    assert _wiped(text)


def test_the_supervisor_takes_the_progress_callback() -> None:
    import inspect

    from formal.execute import supervisor
    param: Any = inspect.signature(supervisor.run_supervised).parameters["progress"]
    assert param.default is None
