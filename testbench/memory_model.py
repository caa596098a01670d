"""The testbench's memory behind the SM's data port (docs/sm-hardware.md, "Memory contract").

:class:`MemoryModel` holds what the SM addresses through the port: global memory, initialised
from the program :class:`~reconverge.golden.image.Image` and kept as a golden
:class:`~reconverge.golden.memory.GlobalMemory` (so the final memory compares byte for byte
with golden's and the kernels' outputs read from it as from a golden run), and the physical
local-memory lines below the global window (a sparse store, zero until written). Requests are
whole lines: a load returns the line; a store writes the bytes whose enable is set; an AMO
replaces each word whose four enables are set by ``op(old, operand)`` and returns the old line.
The AMO's operation comes from its funct5 through the ISA table (:data:`reconverge.golden.isa.
SPECS`) and golden's read-modify-write functions (:data:`reconverge.golden.memory.AMO_OPS`).

:class:`MemoryPort` is the port's timing: by default every request is accepted at once and
answered in the next cycle (block RAM; the SM is then cycle-exact with golden); with a
:class:`Backpressure` it drops ``req_ready`` at random and answers late, in order, to test the
SM's stall logic.
"""

from __future__ import annotations

import enum
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np

from reconverge.golden.image import Image
from reconverge.golden.isa import SPECS
from reconverge.golden.memmap import GLOBAL_BASE, MemoryMap
from reconverge.golden.memory import AMO_OPS, GlobalMemory


class MemoryOp(enum.IntEnum):
    """``mem__req_op`` of the SM's data port."""

    LOAD = 0
    STORE = 1
    AMO = 2


class MemoryProtocolError(Exception):
    """A request that breaks the port's contract (misaligned line, unknown operation or AMO,
    partial word enables of an AMO, an address the SM never owns): a hardware bug."""


@cache
def amo_function(funct5: int) -> tuple[str, Callable[[int, int], int]]:
    """(mnemonic, ``op(old, operand)``) of the AMO with this funct5, from the ISA table
    (``lr.w`` and ``sc.w`` reach the port as a load and a store, never as an AMO)."""
    for spec in SPECS:
        if spec.amo_op is not None and spec.funct5 == funct5:
            return spec.name, AMO_OPS[spec.amo_op]
    raise MemoryProtocolError(f"no AMO has funct5 {funct5:#07b}")


@cache
def byte_mask(enables: int, line_bytes: int) -> int:
    """The bit mask of the bytes whose enable is set (byte i at bits 8i+7..8i)."""
    return sum(0xFF << 8 * i for i in range(line_bytes) if enables >> i & 1)


def local_span(memmap: MemoryMap, warp_size: int, warps: int) -> int:
    """Bytes of physical local memory the SM addresses through the port: every warp slot's
    local window, word-interleaved across the W thread positions (docs/sm-hardware.md,
    "Local memory"), from address 0."""
    return warps * memmap.local_size * warp_size


class MemoryModel:
    """Global memory plus the physical local-memory lines, served a line per request."""

    def __init__(self, image: Image, memmap: MemoryMap, line_bytes: int, local_bytes: int) -> None:
        if local_bytes > GLOBAL_BASE:
            raise ValueError(f"physical local memory of {local_bytes:#x} bytes overlaps global")
        self.line_bytes = line_bytes
        self.local_bytes = local_bytes
        self.global_memory = GlobalMemory(memmap)
        self.global_memory.load_image(image)
        self._global = self.global_memory.data[0]
        self.local: dict[int, int] = {}  # line address -> line (int, byte i at bits 8i+7..8i)
        self.counts = dict.fromkeys(MemoryOp, 0)

    def _global_offset(self, addr: int) -> int | None:
        offset = addr - GLOBAL_BASE
        return offset if 0 <= offset <= self.global_memory.size - self.line_bytes else None

    def read_line(self, addr: int) -> int:
        """The line at the line-aligned ``addr`` (byte i at bits 8i+7..8i)."""
        offset = self._global_offset(addr)
        if offset is not None:
            return int.from_bytes(self._global[offset : offset + self.line_bytes], "little")
        if 0 <= addr < self.local_bytes:
            return self.local.get(addr, 0)
        raise MemoryProtocolError(
            f"line {addr:#010x} is neither global memory ({GLOBAL_BASE:#010x}-"
            f"{GLOBAL_BASE + self.global_memory.size - 1:#010x}) nor physical local memory "
            f"(0-{self.local_bytes - 1:#x})"
        )

    def write_line(self, addr: int, line: int) -> None:
        offset = self._global_offset(addr)
        if offset is not None:
            data = np.frombuffer(line.to_bytes(self.line_bytes, "little"), np.uint8)
            self._global[offset : offset + self.line_bytes] = data
        else:
            self.read_line(addr)  # the range check
            self.local[addr] = line

    def access(self, op: int, addr: int, *, amo: int = 0, be: int = 0, wdata: int = 0) -> int:
        """Serve one request; return the response data: the line before the request (load,
        AMO: the old values; a store's response carries the old line too)."""
        if addr % self.line_bytes:
            raise MemoryProtocolError(f"request address {addr:#010x} is not line-aligned")
        try:
            kind = MemoryOp(op)
        except ValueError:
            raise MemoryProtocolError(f"unknown request op {op}") from None
        old = self.read_line(addr)
        self.counts[kind] += 1
        if kind is MemoryOp.STORE:
            mask = byte_mask(be, self.line_bytes)
            self.write_line(addr, (old & ~mask) | (wdata & mask))
        elif kind is MemoryOp.AMO:
            self.write_line(addr, self._amo(addr, old, amo, be, wdata))
        return old

    def _amo(self, addr: int, old: int, funct5: int, be: int, operands: int) -> int:
        _, op = amo_function(funct5)
        new = old
        for word in range(self.line_bytes // 4):
            enables = be >> 4 * word & 0xF
            if enables == 0:
                continue
            if enables != 0xF:
                raise MemoryProtocolError(
                    f"AMO at {addr + 4 * word:#010x} enables bytes {enables:#06b} of a word, "
                    "not all four"
                )
            shift = 32 * word
            value = op(old >> shift & 0xFFFF_FFFF, operands >> shift & 0xFFFF_FFFF)
            new = new & ~(0xFFFF_FFFF << shift) | value << shift
        return new


@dataclass(frozen=True)
class Backpressure:
    """A memory that is not block RAM: ``req_ready`` high with probability ``ready`` in each
    cycle, each response up to ``max_delay`` cycles late (uniformly; still in order, one per
    cycle), drawn from a generator seeded with ``seed``."""

    ready: float = 0.5
    max_delay: int = 3
    seed: int = 0

    def __post_init__(self) -> None:
        if not 0 < self.ready <= 1:
            raise ValueError(f"ready probability {self.ready} must be in (0, 1]")
        if self.max_delay < 0:
            raise ValueError("max_delay must not be negative")


class MemoryPort:
    """The port's cycle behaviour around a :class:`MemoryModel`. Each cycle the testbench
    calls :meth:`drive` (what ``req_ready``, ``resp_valid`` and ``resp_rdata`` are in this
    cycle), then :meth:`accept` if the SM's ``req_valid`` was high while ``req_ready`` was."""

    def __init__(self, model: MemoryModel, backpressure: Backpressure | None = None) -> None:
        self.model = model
        self.backpressure = backpressure
        self._rng = random.Random(backpressure.seed if backpressure else 0)
        self._pending: deque[tuple[int, int]] = deque()  # (cycle due, response data)
        self._last_due = -1
        self.accepted = 0

    def drive(self, cycle: int) -> tuple[bool, int | None]:
        """(``req_ready``, the response data due in ``cycle`` or None)."""
        bp = self.backpressure
        ready = bp is None or bp.ready >= 1 or self._rng.random() < bp.ready
        response = None
        if self._pending and self._pending[0][0] <= cycle:
            response = self._pending.popleft()[1]
        return ready, response

    def accept(self, cycle: int, op: int, addr: int, amo: int, be: int, wdata: int) -> None:
        """A request accepted in ``cycle``: served now, answered from the next cycle on."""
        data = self.model.access(op, addr, amo=amo, be=be, wdata=wdata)
        delay = self._rng.randint(0, self.backpressure.max_delay) if self.backpressure else 0
        due = max(cycle + 1 + delay, self._last_due + 1)
        self._last_due = due
        self._pending.append((due, data))
        self.accepted += 1

    @property
    def outstanding(self) -> int:
        """Accepted requests not yet answered."""
        return len(self._pending)
