"""Faults of simulated programs: what the golden models report instead of a Python traceback
when a kernel does something wrong (DESIGN.md, "What done means": a clear error naming the
cause). Every fault is one :class:`SimtFault` with a one-line message such as::

    illegal instruction at pc 0x80000010 (block 0, thread 5): csrrw a0, 0xcc0, a1 — writes
    read-only CSR 0xcc0 (thread index)

The layer that detects a fault fills in what it knows; the layers above add the rest with
:meth:`SimtFault.locate` (memory knows the thread, the instruction executor the pc and text).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence


class SimtFault(Exception):
    """A fault of the simulated program. ``thread`` is the index in the block, or None when the
    fault concerns the whole block (barrier deadlock, step limit)."""

    kind = "fault"

    def __init__(
        self,
        detail: str,
        *,
        kind: str | None = None,
        block: int | None = None,
        thread: int | None = None,
        pc: int | None = None,
        instr: str | None = None,
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        if kind is not None:
            self.kind = kind
        self.block = block
        self.thread = thread
        self.pc = pc
        self.instr = instr

    def locate(
        self,
        *,
        block: int | None = None,
        thread: int | None = None,
        pc: int | None = None,
        instr: str | None = None,
    ) -> SimtFault:
        """Fill in the location fields that are still unknown; return ``self``."""
        for name, value in (("block", block), ("thread", thread), ("pc", pc), ("instr", instr)):
            if getattr(self, name) is None:
                setattr(self, name, value)
        return self

    def __str__(self) -> str:
        where = ", ".join(
            f"{name} {value}"
            for name, value in (("block", self.block), ("thread", self.thread))
            if value is not None
        )
        text = self.kind
        if self.pc is not None:
            text += f" at pc {self.pc:#010x}"
        if where:
            text += f" ({where})"
        text += ": "
        if self.instr is not None:
            text += f"{self.instr} — "
        return text + self.detail


class IllegalInstructionFault(SimtFault):
    """An undecodable word, a CSR write, or a read of an unknown CSR."""

    kind = "illegal instruction"


class MemoryFault(SimtFault):
    """A misaligned or unmapped data access, a misaligned jump target, or an instruction fetch
    outside global memory."""

    kind = "memory fault"


class BarrierFault(SimtFault):
    """A ``bar`` that can never complete: threads of the block wait at different barriers, or
    some threads exited and can never arrive."""

    kind = "barrier deadlock"


class TableOverflowFault(SimtFault):
    """A divergence unit ran out of entries (SPS/dual-path stack, reconvergence table)."""

    kind = "table overflow"


class DeadlockFault(SimtFault):
    """No warp can ever issue again although threads have not exited."""

    kind = "deadlock"


class StepLimitFault(SimtFault):
    """The program did not complete within the configured number of warp instructions."""

    kind = "step limit"


class SyscallFault(SimtFault):
    """An ``ecall`` other than exit (a7 = 93), or an ``ebreak``."""

    kind = "unsupported syscall"


def instruction_text(word: int, pc: int) -> str:
    """The disassembly of ``word`` at ``pc`` for a fault message (the hex word if no
    disassembler is available)."""
    try:
        from reconverge.golden.disasm import disassemble
    except ImportError:
        return f".word {word:#010x}"
    return disassemble(word, pc)


def format_threads(threads: Iterable[int]) -> str:
    """``thread 5`` / ``threads 0-3, 6, 8-9``: a set of thread indices, runs folded."""
    ordered = sorted(set(threads))
    runs: list[list[int]] = []
    for t in ordered:
        if runs and runs[-1][1] == t - 1:
            runs[-1][1] = t
        else:
            runs.append([t, t])
    text = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
    return f"{'thread' if len(ordered) == 1 else 'threads'} {text}"


def barrier_fault(
    block: int,
    waiters: Mapping[int, Sequence[int]],
    exited: Sequence[int],
    block_size: int,
    held: Sequence[int] = (),
    holder: str = "",
) -> BarrierFault | None:
    """The block's threads that can run have all stopped, some at ``bar``: None when the
    barrier completes (every thread of the block waits at the same ``bar``), else the fault
    naming who waits where, who exited, and (``held``) the threads a divergence unit
    (``holder``) keeps from ever arriving."""
    waiting = sum(map(len, waiters.values()))
    if not held and len(waiters) == 1 and waiting == block_size:
        return None
    parts = [
        f"{format_threads(tids)} wait at bar {pc:#010x}" for pc, tids in sorted(waiters.items())
    ]
    if exited:
        parts.append(f"{format_threads(exited)} exited and can never arrive")
    if held:
        parts.append(
            f"{format_threads(held)} are held back by the {holder} divergence unit and can "
            "never arrive (a barrier reached while the warp is diverged, seed 002 Sec 3.3.3)"
        )
    if len(waiters) > 1:
        parts.append("all threads of a block must meet at the same bar")
    pc = next(iter(waiters)) if len(waiters) == 1 else None
    return BarrierFault("; ".join(parts), block=block, pc=pc)


class FaultCode(enum.IntEnum):
    """The fault codes of the HDL SM's status port (4 bits), each the ``kind`` of the golden
    fault it corresponds to (:attr:`kind`), so the co-simulation compares like with like.
    ``INTERNAL`` is a consistency check of the hardware that golden never raises."""

    NONE = 0
    ILLEGAL = 1
    MISALIGNED_LOAD = 2
    MISALIGNED_STORE = 3
    MISALIGNED_AMO = 4
    UNMAPPED_LOAD = 5
    UNMAPPED_STORE = 6
    UNMAPPED_AMO = 7
    MISALIGNED_JUMP = 8
    FETCH = 9
    SYSCALL = 10
    BREAKPOINT = 11
    TABLE_OVERFLOW = 12
    BARRIER = 13
    DEADLOCK = 14
    INTERNAL = 15

    @property
    def kind(self) -> str:
        """The ``kind`` of the golden :class:`SimtFault` this code reports."""
        return _FAULT_KINDS[self]

    @classmethod
    def of(cls, fault: SimtFault) -> FaultCode | None:
        """The code that reports ``fault`` (None for golden's own: step limit, watchdog)."""
        return next((code for code, kind in _FAULT_KINDS.items() if kind == fault.kind), None)

    @property
    def at_issue(self) -> bool:
        """Found when the instruction issues (the rest in its passes, at the LSU or after)."""
        return self in (FaultCode.FETCH, FaultCode.ILLEGAL, FaultCode.BREAKPOINT)


_FAULT_KINDS: dict[FaultCode, str] = {
    FaultCode.NONE: "",
    FaultCode.ILLEGAL: IllegalInstructionFault.kind,
    FaultCode.MISALIGNED_LOAD: "misaligned load",
    FaultCode.MISALIGNED_STORE: "misaligned store",
    FaultCode.MISALIGNED_AMO: "misaligned amo",
    FaultCode.UNMAPPED_LOAD: "unmapped load",
    FaultCode.UNMAPPED_STORE: "unmapped store",
    FaultCode.UNMAPPED_AMO: "unmapped amo",
    FaultCode.MISALIGNED_JUMP: "misaligned instruction address",
    FaultCode.FETCH: "instruction fetch fault",
    FaultCode.SYSCALL: SyscallFault.kind,
    FaultCode.BREAKPOINT: "breakpoint",
    FaultCode.TABLE_OVERFLOW: TableOverflowFault.kind,
    FaultCode.BARRIER: BarrierFault.kind,
    FaultCode.DEADLOCK: DeadlockFault.kind,
    FaultCode.INTERNAL: "internal error",
}
