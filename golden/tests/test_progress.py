"""The status line of a long run (golden/progress.py): what it shows and that it clears."""

from __future__ import annotations

import io

from reconverge.golden.progress import Progress


def test_the_line_names_the_step_limit_and_is_cleared() -> None:
    stream = io.StringIO()
    progress = Progress("loop.S on the SM", 1, 1_000_000, stream=stream, delay=0.0)
    progress(16_384, 0)
    line = stream.getvalue()
    assert "loop.S on the SM: 16,384 of at most 1,000,000 warp instructions" in line
    assert "0/1 blocks" in line
    progress.close()
    assert stream.getvalue().endswith("\r\x1b[K")


def test_nothing_is_shown_before_the_delay() -> None:
    stream = io.StringIO()
    progress = Progress("x", 1, 10, stream=stream, delay=3600.0)
    progress(5, 0)
    progress.close()
    assert stream.getvalue() == ""
