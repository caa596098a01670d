"""Instruction semantics: one decoded instruction executed by a set of lanes of one warp,
vectorised over the lanes with NumPy.

This is the single definition of what every instruction computes; the functional model and the
cycle-level model both call :func:`execute`. All lanes that issue together share the PC of the
warp instruction (every SIMT policy issues one PC per warp instruction; seed 000 Sec 4.1), so
``pc`` is an int, while registers, addresses and next PCs are per lane. The :class:`Outcome`
tells the caller where each lane continues, which lanes exited, whether they wait at a barrier,
and the memory access performed (per-lane addresses, so a cycle model can count coalesced
transactions; seed 000 Sec 4.2).

Registers are a ``(W, 32)`` uint32 array; arithmetic wraps modulo 2**32 as RV32IM specifies,
using int64/uint64 intermediates for the multiply high halves and division.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from reconverge.golden.faults import (
    IllegalInstructionFault,
    MemoryFault,
    SimtFault,
    SyscallFault,
    instruction_text,
)
from reconverge.golden.isa import (
    ILEN_BYTES,
    MASK32,
    REG_A0,
    REG_A7,
    SPEC_BY_NAME,
    SPECS,
    SYSCALL_EXIT,
    Csr,
    Instr,
    csr_is_write,
)
from reconverge.golden.memory import WarpMemory

#: What each SIMT CSR holds, for messages.
CSR_DESCRIPTIONS: dict[int, str] = {
    Csr.TID: "thread index",
    Csr.NTID: "block size",
    Csr.CTAID: "block index",
    Csr.NCTAID: "grid size",
    Csr.LANEID: "lane id",
    Csr.WARPID: "warp id",
    Csr.WARPSIZE: "warp size",
}


@dataclass(frozen=True)
class WarpContext:
    """The identity of one warp's lanes: per-lane values (uint32, length W) of every SIMT CSR."""

    block: int
    csrs: Mapping[int, np.ndarray]

    @classmethod
    def of_warp(
        cls, *, grid: int, block: int, block_size: int, warp: int, warp_size: int
    ) -> WarpContext:
        lane = np.arange(warp_size, dtype=np.uint32)

        def same(value: int) -> np.ndarray:
            return np.full(warp_size, value, np.uint32)

        return cls(
            block,
            {
                Csr.TID: warp * warp_size + lane,
                Csr.NTID: same(block_size),
                Csr.CTAID: same(block),
                Csr.NCTAID: same(grid),
                Csr.LANEID: lane,
                Csr.WARPID: same(warp),
                Csr.WARPSIZE: same(warp_size),
            },
        )

    def thread(self, lane: int) -> int:
        """Thread index in the block of ``lane``."""
        return int(self.csrs[Csr.TID][lane])


@dataclass(slots=True)
class MemAccess:
    """The data access of a load, store or AMO: one address per executed lane."""

    kind: str  # "load", "store", "amo" (an AMO), "lr" (lr.w) or "sc" (sc.w)
    addrs: np.ndarray  # uint32, aligned with Outcome.lanes
    size: int  # bytes per lane


@dataclass(slots=True)
class Outcome:
    """The effect of one warp instruction on control state (registers and memory are updated in
    place). ``next_pc`` is per executed lane; for ``bar`` it is the barrier's own pc (the lanes
    wait there until the block is released), and ``exit_codes`` is set when the lanes exited."""

    lanes: np.ndarray  # indices of the executed lanes, increasing
    next_pcs: np.ndarray | None  # uint32 per executed lane; None: every lane at ``uniform``
    exit_codes: np.ndarray | None = None  # int32 per executed lane
    barrier: bool = False
    access: MemAccess | None = None
    uniform: int | None = None  # the next pc of every lane, when they all continue at one

    @property
    def next_pc(self) -> np.ndarray:
        """The next pc of each executed lane (uint32)."""
        if self.next_pcs is None:
            return np.full(len(self.lanes), self.uniform, np.uint32)
        return self.next_pcs

    def targets(self, mask: int) -> dict[int, int]:
        """The lanes (a bit mask; ``mask`` holds those executed) continuing at each next pc."""
        if self.next_pcs is None:
            assert self.uniform is not None
            return {self.uniform: mask}
        targets: dict[int, int] = {}
        for lane, nxt in zip(self.lanes.tolist(), self.next_pcs.tolist(), strict=True):
            targets[nxt] = targets.get(nxt, 0) | 1 << lane
        return targets


@dataclass(slots=True)
class _Issue:
    """The operands of one warp instruction's execution: its pc and the executing lanes."""

    pc: int
    regs: np.ndarray
    lanes: np.ndarray
    mem: WarpMemory
    ctx: WarpContext
    sel: np.ndarray | slice  # the lanes as an index of ``regs``: a slice when all of them

    def read(self, reg: int) -> np.ndarray:
        return self.regs[self.sel, reg]

    def addresses(self, ins: Instr) -> np.ndarray:
        """The lanes' data addresses, rs1 + imm: a copy, so that writing rd (which may be
        rs1) leaves the access's record as it was."""
        return self.regs[self.sel, ins.rs1] + _imm(ins)

    def write(self, rd: int, values: np.ndarray | int) -> None:
        """Write ``rd``; writes to x0 are discarded, so x0 always reads 0."""
        if rd:
            self.regs[self.sel, rd] = values

    def thread(self, i: int) -> int:
        """Thread index of the ``i``-th executing lane."""
        return self.ctx.thread(int(self.lanes[i]))

    def sequential(self, access: MemAccess | None = None) -> Outcome:
        """Every lane continues at pc + 4."""
        return self.uniform((self.pc + ILEN_BYTES) & MASK32, access)

    def uniform(self, target: int, access: MemAccess | None = None) -> Outcome:
        """Every lane continues at ``target``."""
        return Outcome(self.lanes, None, access=access, uniform=target)


Handler = Callable[[Instr, _Issue], Outcome]
_ALL = slice(None)


def execute(
    ins: Instr,
    pc: int,
    regs: np.ndarray,
    lanes: np.ndarray,
    mem: WarpMemory,
    ctx: WarpContext,
) -> Outcome:
    """Execute ``ins`` (at ``pc``) for ``lanes`` (a boolean mask of length W, or increasing lane
    indices), updating ``regs`` and memory in place. Raises a :class:`SimtFault` located at this
    instruction and the offending thread (the first executing one unless a specific lane caused
    it); a faulting instruction writes no register, and memory only through the lanes before
    the offending one."""
    if lanes.dtype == np.bool_:
        lanes = np.flatnonzero(lanes)
    sel = _ALL if len(lanes) == len(regs) else lanes
    issue = _Issue(pc, regs, lanes, mem, ctx, sel)
    try:
        return _HANDLERS[ins.name](ins, issue)
    except SimtFault as fault:
        raise fault.locate(
            block=ctx.block,
            thread=issue.thread(0),
            pc=pc,
            instr=instruction_text(ins.encode(), pc),
        ) from None


# ----------------------------------------------------------------------------------------------
# Helpers


def _signed(x: np.ndarray) -> np.ndarray:
    return x.view(np.int32)


def _imm(ins: Instr) -> np.ndarray:
    """The immediate as a 0-d uint32 array (two's complement for negative values)."""
    return np.array(ins.imm & MASK32, dtype=np.uint32)


def _check_targets(targets: np.ndarray, s: _Issue) -> None:
    """Jump and taken-branch targets must be 4-byte aligned (no compressed instructions)."""
    bad = (targets & np.uint32(ILEN_BYTES - 1)) != 0
    if bad.any():
        i = int(np.argmax(bad))
        raise MemoryFault(
            f"jump target {int(targets[i]):#010x} is not a multiple of {ILEN_BYTES}",
            kind="misaligned instruction address",
            thread=s.thread(i),
        )


# ----------------------------------------------------------------------------------------------
# Integer arithmetic: (rs1 values, rs2 values or immediate) -> uint32 results.


def _div(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Signed quotient and remainder rounded toward zero, and the division-by-zero mask. The
    overflow case -2**31 / -1 gives 2**31, which wraps to -2**31 (remainder 0) as specified."""
    a64, b64 = _signed(a).astype(np.int64), _signed(b).astype(np.int64)
    zero = b64 == 0
    divisor = np.where(zero, 1, b64)
    rem = np.fmod(a64, divisor)
    return (a64 - rem) // divisor, rem, zero


def _divu(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    zero = b == 0
    divisor = np.where(zero, np.uint32(1), b)
    return a // divisor, a % divisor, zero


def _div_op(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    quot, _, zero = _div(a, b)
    return np.where(zero, -1, quot).astype(np.uint32)


def _rem_op(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    _, rem, zero = _div(a, b)
    return np.where(zero, _signed(a), rem).astype(np.uint32)


def _divu_op(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    quot, _, zero = _divu(a, b)
    return np.where(zero, np.uint32(MASK32), quot)


def _remu_op(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    _, rem, zero = _divu(a, b)
    return np.where(zero, a, rem)


def _shamt(b: np.ndarray) -> np.ndarray:
    """Shift amounts use the low 5 bits of the operand."""
    return b & np.uint32(31)


ALU_OPS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "sll": lambda a, b: a << _shamt(b),
    "srl": lambda a, b: a >> _shamt(b),
    "sra": lambda a, b: (_signed(a) >> _signed(_shamt(b))).view(np.uint32),
    "slt": lambda a, b: (_signed(a) < _signed(b)).astype(np.uint32),
    "sltu": lambda a, b: (a < b).astype(np.uint32),
    "xor": lambda a, b: a ^ b,
    "or": lambda a, b: a | b,
    "and": lambda a, b: a & b,
    "mul": lambda a, b: (a.astype(np.uint64) * b).astype(np.uint32),
    "mulh": lambda a, b: ((_signed(a).astype(np.int64) * _signed(b)) >> 32).astype(np.uint32),
    "mulhsu": lambda a, b: ((_signed(a).astype(np.int64) * b) >> 32).astype(np.uint32),
    "mulhu": lambda a, b: ((a.astype(np.uint64) * b) >> 32).astype(np.uint32),
    "div": _div_op,
    "divu": _divu_op,
    "rem": _rem_op,
    "remu": _remu_op,
}

#: Register-immediate instructions and the operation they share with the register form.
IMM_OPS = {
    "addi": "add",
    "slti": "slt",
    "sltiu": "sltu",
    "xori": "xor",
    "ori": "or",
    "andi": "and",
    "slli": "sll",
    "srli": "srl",
    "srai": "sra",
}

BRANCH_CONDS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "beq": lambda a, b: a == b,
    "bne": lambda a, b: a != b,
    "blt": lambda a, b: _signed(a) < _signed(b),
    "bge": lambda a, b: _signed(a) >= _signed(b),
    "bltu": lambda a, b: a < b,
    "bgeu": lambda a, b: a >= b,
}

#: Loads: (size in bytes, sign-extending); stores: size in bytes.
LOADS = {"lb": (1, True), "lh": (2, True), "lw": (4, True), "lbu": (1, False), "lhu": (2, False)}
STORES = {"sb": 1, "sh": 2, "sw": 4}


# ----------------------------------------------------------------------------------------------
# Handlers, one per kind of instruction.


def _alu(op: Callable[[np.ndarray, np.ndarray], np.ndarray], *, immediate: bool) -> Handler:
    def run(ins: Instr, s: _Issue) -> Outcome:
        s.write(ins.rd, op(s.read(ins.rs1), _imm(ins) if immediate else s.read(ins.rs2)))
        return s.sequential()

    return run


def _upper(*, pc_relative: bool) -> Handler:
    """``lui`` and ``auipc``: the 20-bit immediate in the upper bits (plus the pc)."""

    def run(ins: Instr, s: _Issue) -> Outcome:
        s.write(ins.rd, ((ins.imm << 12) + (s.pc if pc_relative else 0)) & MASK32)
        return s.sequential()

    return run


def _branch(cond: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Handler:
    def run(ins: Instr, s: _Issue) -> Outcome:
        taken = cond(s.read(ins.rs1), s.read(ins.rs2))
        target, fallthrough = (s.pc + ins.imm) & MASK32, (s.pc + ILEN_BYTES) & MASK32
        going = int(np.count_nonzero(taken))
        if going == 0:
            return s.uniform(fallthrough)
        if target % ILEN_BYTES == 0 and going == len(taken):
            return s.uniform(target)
        next_pc = np.where(taken, np.uint32(target), np.uint32(fallthrough))
        _check_targets(next_pc, s)
        return Outcome(s.lanes, next_pc)

    return run


def _jump(ins: Instr, s: _Issue, targets: np.ndarray) -> Outcome:
    """Link pc + 4 in rd and continue at ``targets`` (checked before rd is written)."""
    _check_targets(targets, s)
    s.write(ins.rd, (s.pc + ILEN_BYTES) & MASK32)
    return Outcome(s.lanes, targets)


def _jal(ins: Instr, s: _Issue) -> Outcome:
    target = (s.pc + ins.imm) & MASK32
    out = _jump(ins, s, np.full(len(s.lanes), target, np.uint32))
    out.uniform = target
    return out


def _jalr(ins: Instr, s: _Issue) -> Outcome:
    return _jump(ins, s, (s.read(ins.rs1) + _imm(ins)) & np.uint32(MASK32 - 1))


def _load(size: int, signed: bool) -> Handler:
    def run(ins: Instr, s: _Issue) -> Outcome:
        addrs = s.addresses(ins)
        s.write(ins.rd, s.mem.load(addrs, size, signed, s.lanes))
        return s.sequential(MemAccess("load", addrs, size))

    return run


def _store(size: int) -> Handler:
    def run(ins: Instr, s: _Issue) -> Outcome:
        addrs = s.addresses(ins)
        s.mem.store(addrs, s.read(ins.rs2), size, s.lanes)
        return s.sequential(MemAccess("store", addrs, size))

    return run


def _amo(op: str) -> Handler:
    def run(ins: Instr, s: _Issue) -> Outcome:
        addrs = s.addresses(ins)
        s.write(ins.rd, s.mem.amo(op, addrs, s.read(ins.rs2), s.lanes))
        return s.sequential(MemAccess("amo", addrs, 4))

    return run


def _lr(ins: Instr, s: _Issue) -> Outcome:
    """``lr.w``: load the word and reserve it (docs/isa.md, "LR/SC")."""
    addrs = s.addresses(ins)
    s.write(ins.rd, s.mem.load_reserved(addrs, s.lanes))
    return s.sequential(MemAccess("lr", addrs, 4))


def _sc(ins: Instr, s: _Issue) -> Outcome:
    """``sc.w``: store where the reservation holds; rd = 0 on success, 1 on failure."""
    addrs = s.addresses(ins)
    s.write(ins.rd, s.mem.store_conditional(addrs, s.read(ins.rs2), s.lanes))
    return s.sequential(MemAccess("sc", addrs, 4))


def _csr(ins: Instr, s: _Issue) -> Outcome:
    """Reads of the SIMT identity CSRs; any write, or an unknown CSR, is illegal."""
    if ins.csr not in s.ctx.csrs:
        first, last = min(CSR_DESCRIPTIONS), max(CSR_DESCRIPTIONS)
        raise IllegalInstructionFault(
            f"unknown CSR {ins.csr:#x} (the SIMT CSRs are {first:#x}-{last:#x})"
        )
    if csr_is_write(ins):
        raise IllegalInstructionFault(
            f"writes read-only CSR {ins.csr:#x} ({CSR_DESCRIPTIONS[ins.csr]})"
        )
    s.write(ins.rd, s.ctx.csrs[ins.csr][s.lanes])
    return s.sequential()


def _nop(ins: Instr, s: _Issue) -> Outcome:
    """``fence``, ``fence.i`` (memory is coherent, there is no instruction cache) and ``rhint``
    (a reconvergence hint: it only matters to the policies that read it)."""
    return s.sequential()


def _bar(ins: Instr, s: _Issue) -> Outcome:
    return Outcome(s.lanes, np.full(len(s.lanes), s.pc, np.uint32), barrier=True)


def _ecall(ins: Instr, s: _Issue) -> Outcome:
    """``ecall`` with a7 = 93 ends the thread with exit code a0 (DESIGN.md, ISA)."""
    a7 = _signed(s.read(REG_A7))
    bad = a7 != SYSCALL_EXIT
    if bad.any():
        i = int(np.argmax(bad))
        raise SyscallFault(
            f"ecall with a7 = {int(a7[i])} (only a7 = {SYSCALL_EXIT}, exit, exists)",
            thread=s.thread(i),
        )
    out = s.sequential()
    out.exit_codes = _signed(s.read(REG_A0))
    return out


def _ebreak(ins: Instr, s: _Issue) -> Outcome:
    raise SyscallFault("ebreak with no debugger attached", kind="breakpoint")


_HANDLERS: dict[str, Handler] = {
    **{name: _alu(op, immediate=False) for name, op in ALU_OPS.items()},
    **{name: _alu(ALU_OPS[op], immediate=True) for name, op in IMM_OPS.items()},
    **{name: _branch(cond) for name, cond in BRANCH_CONDS.items()},
    **{name: _load(size, signed) for name, (size, signed) in LOADS.items()},
    **{name: _store(size) for name, size in STORES.items()},
    **{spec.name: _amo(spec.amo_op) for spec in SPECS if spec.amo_op is not None},
    "lr.w": _lr,
    "sc.w": _sc,
    **{name: _csr for name in ("csrrw", "csrrs", "csrrc", "csrrwi", "csrrsi", "csrrci")},
    **{name: _nop for name in ("fence", "fence.i", "rhint")},
    "lui": _upper(pc_relative=False),
    "auipc": _upper(pc_relative=True),
    "jal": _jal,
    "jalr": _jalr,
    "bar": _bar,
    "ecall": _ecall,
    "ebreak": _ebreak,
}

if set(_HANDLERS) != set(SPEC_BY_NAME):
    raise AssertionError(f"semantics missing for {sorted(set(SPEC_BY_NAME) - set(_HANDLERS))}")
