"""An output that is a character device (``-o /dev/null``) is written in place: the atomic
write (a temporary file moved over the path) would, run as root, put a regular file where
the device was -- and every later ``> /dev/null`` of the machine would fill a file."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from formal.base.files import write_atomic


def _null_device(where: Path) -> Path:
    dev = where / "null"
    try:
        os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # what /dev/null is on Linux
    except (PermissionError, AttributeError, OSError) as exc:
        pytest.skip(f"cannot make a character device here: {exc}")
    return dev


def test_a_character_device_stays_one(tmp_path: Path) -> None:
    dev = _null_device(tmp_path)
    write_atomic(dev, "a report\n")
    write_atomic(dev, b"\x00\x01")
    assert stat.S_ISCHR(os.stat(dev).st_mode)
    assert os.major(os.stat(dev).st_rdev) == 1 and os.minor(os.stat(dev).st_rdev) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null"]  # no temporary left


def test_the_cli_writes_a_report_to_a_device(tmp_path: Path, cli: Any) -> None:
    dev = _null_device(tmp_path)
    run = cli("export", "--format", "json", "--output", str(dev))
    assert run.code == 0, run.err
    assert stat.S_ISCHR(os.stat(dev).st_mode)


def test_a_regular_file_is_still_replaced_whole(tmp_path: Path) -> None:
    p = tmp_path / "out.json"
    p.write_text("old", encoding="utf-8")
    before = os.stat(p).st_ino
    write_atomic(p, "new")
    assert p.read_text(encoding="utf-8") == "new" and os.stat(p).st_ino != before
