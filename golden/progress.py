"""What a long run shows while it runs, and what a launch will cost before it starts.

:class:`Progress` is a status line on a terminal's standard error (never in ``--json`` output,
never when standard error is not a terminal): after the first seconds of a run, the warp
instructions done (and the step limit that stops the run), their rate, and the blocks finished,
redrawn a few times a second and cleared at the end. The models call it every :data:`EVERY`
warp instructions.

:func:`launch_bytes` estimates the memory a launch needs; :func:`check_memory` refuses, before
anything is allocated, a launch that needs more than the machine has available.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import TextIO

from reconverge.golden.errors import UserError

#: Warp instructions between two calls of a model's progress callback.
EVERY = 1 << 14

#: ``progress(warp_instructions, blocks_done)``: what the models report.
Callback = Callable[[int, int], None]

#: Bytes per thread of a launch's results: exit code, instruction count, exited flag.
RESULT_BYTES = 4 + 8 + 1
#: Bytes of one thread's registers.
REGISTER_BYTES = 32 * 4


class Progress:
    """A status line for a run of ``grid`` blocks that stops after ``limit`` warp instructions
    (see the module docstring)."""

    def __init__(
        self,
        label: str,
        grid: int,
        limit: int,
        *,
        stream: TextIO | None = None,
        delay: float = 2.0,
    ) -> None:
        self.label = label
        self.grid = grid
        self.limit = limit
        self.stream = stream if stream is not None else sys.stderr
        self.start = time.monotonic()
        self.delay = delay
        self.shown = False
        self.last = 0.0

    def __call__(self, steps: int, blocks_done: int) -> None:
        now = time.monotonic()
        if now - self.start < self.delay or now - self.last < 0.2:
            return
        self.last = now
        rate = steps / (now - self.start)
        line = (
            f"{self.label}: {steps:,} of at most {self.limit:,} warp instructions "
            f"({rate:,.0f}/s), "
            f"{blocks_done}/{self.grid} blocks, {now - self.start:.0f} s"
        )
        self.stream.write(f"\r{line}\x1b[K")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def progress_for(label: str, grid: int, limit: int, quiet: bool) -> Progress | None:
    """A :class:`Progress` when standard error is a terminal and the output is not JSON."""
    if quiet or not sys.stderr.isatty():
        return None
    return Progress(label, grid, limit)


def launch_bytes(
    grid: int, block: int, resident_threads: int, local_bytes: int, shared_bytes: int,
    resident_blocks: int,
) -> int:  # fmt: skip
    """The memory a run needs besides global memory: every thread's results, and the registers
    and local memory of the threads resident at once, the shared memory of the blocks resident
    at once."""
    return (
        grid * block * RESULT_BYTES
        + resident_threads * (REGISTER_BYTES + local_bytes)
        + resident_blocks * shared_bytes
    )


def available_bytes() -> int | None:
    """The memory the machine can give a new allocation (MemAvailable), when known."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return None


def _size(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024
    raise AssertionError


def check_memory(needed: int, what: str) -> None:
    """Refuse a launch that needs more memory than is available, saying how much."""
    free = available_bytes()
    if free is not None and needed > free:
        raise UserError(
            f"{what} needs about {_size(needed)} of memory, more than the {_size(free)} "
            "available: launch fewer or smaller blocks"
        )
