"""The installed ``nvidia-cutlass`` wheel's include directory, for the audit's tests: skipped
where the wheel is missing, a failure on CI (which installs it)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from formal.audit import installed_include


def cutlass_include() -> Path:
    inc = installed_include()
    if inc is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI needs the nvidia-cutlass wheel: pip install 'ptxlayout[cutlass]'")
        pytest.skip("nvidia-cutlass is not installed")
    return Path(inc)


def header_block(text: str, head: str, template: bool = True) -> str:
    """One struct of a real header: from the ``template <`` before ``head`` (or from ``head``
    itself) to its closing ``};``."""
    i = text.index(head)
    start = text.rindex("template <", 0, i) if template else i
    return text[start:text.index("\n};", i) + 3]
