"""The Python side of the compiled inner loop: the decoded-instruction table it fetches from,
and one block's state handed to ``run_block`` (the structures of ``block.c``, field by field).

The arrays are the functional model's own (registers, pcs, thread status, memories), shared
with the C code by pointer: no copy in or out, so the Python reference can execute any
instruction between two calls on the same state."""

from __future__ import annotations

import ctypes
from typing import Protocol

import numpy as np

from reconverge.golden.isa import Fmt, IllegalInstruction, csr_is_write, decode
from reconverge.golden.memory import GlobalMemory, WarpMemory
from reconverge.golden.native.build import OP_CSR_READ, OP_PYTHON, OPS, STOPS, load
from reconverge.golden.semantics import CSR_DESCRIPTIONS, WarpContext

#: The rows of a warp's CSR table (``warp_t.csrs``): the SIMT CSRs in their numbering order.
CSR_ROWS: tuple[int, ...] = tuple(sorted(CSR_DESCRIPTIONS))

#: ``entry_t``: one decoded word (16 bytes).
ENTRY = np.dtype(
    {
        "names": ["word", "imm", "op", "rd", "rs1", "rs2", "valid"],
        "formats": ["<u4", "<i4", "u1", "u1", "u1", "u1", "u1"],
        "offsets": [0, 4, 8, 9, 10, 11, 12],
        "itemsize": 16,
    }
)

_P = ctypes.c_void_p


class _WarpT(ctypes.Structure):
    _fields_ = [
        ("regs", _P), ("pc", _P), ("runnable", _P), ("waiting", _P), ("exited", _P),
        ("exit_codes", _P), ("instructions", _P), ("local", _P), ("csrs", _P),
        ("n_runnable", ctypes.c_int64),
    ]  # fmt: skip


class _BlockT(ctypes.Structure):
    _fields_ = [
        ("global_", _P), ("code", _P), ("shared", _P),
        ("global_base", ctypes.c_uint32), ("global_size", ctypes.c_uint32),
        ("shared_base", ctypes.c_uint32), ("shared_size", ctypes.c_uint32),
        ("local_base", ctypes.c_uint32), ("local_size", ctypes.c_uint32),
        ("width", ctypes.c_int32), ("nwarps", ctypes.c_int32),
        ("reservations", ctypes.c_int32), ("turn", ctypes.c_int32),
        ("budget", ctypes.c_int64), ("steps", ctypes.c_int64),
        ("stop_pc", ctypes.c_uint32), ("reason", ctypes.c_int32),
    ]  # fmt: skip


class WarpState(Protocol):
    """What the kernel reads and writes of a functional-model warp (``functional._Warp``)."""

    ctx: WarpContext
    mem: WarpMemory
    regs: np.ndarray
    pc: np.ndarray
    runnable: np.ndarray
    waiting: np.ndarray
    exited: np.ndarray
    exit_codes: np.ndarray
    instructions: np.ndarray
    n_runnable: int

    def flush(self) -> None: ...


class CodeTable:
    """The decoded instruction at every word of global memory (zeroed pages cost nothing until
    a pc on them is executed). An entry holds the word it was decoded from, so a store into
    code makes it stale and the next fetch decodes again."""

    def __init__(self, memory: GlobalMemory) -> None:
        self.memory = memory
        self.entries = np.zeros(memory.size // 4, ENTRY)

    def fill(self, pc: int) -> None:
        """Decode the word at ``pc`` (inside global memory, aligned) into its entry."""
        word = self.memory.fetch(pc)
        entry = self.entries[(pc - self.memory.base) >> 2]
        entry["word"], entry["valid"] = word, 1
        try:
            ins = decode(word)
        except IllegalInstruction:
            entry["op"] = OP_PYTHON  # the reference raises the fault
            return
        op, imm = OPS[ins.name], ins.imm
        if ins.spec.fmt in (Fmt.CSR, Fmt.CSRI):
            legal = ins.csr in CSR_DESCRIPTIONS and not csr_is_write(ins)
            op, imm = (OP_CSR_READ, CSR_ROWS.index(ins.csr)) if legal else (OP_PYTHON, 0)
        entry["op"], entry["imm"] = op, imm
        entry["rd"], entry["rs1"], entry["rs2"] = ins.rd, ins.rs1, ins.rs2


def _pointer(array: np.ndarray) -> int:
    assert array.flags.c_contiguous
    return array.ctypes.data


def _warp_state(warp: WarpState, csrs: np.ndarray) -> _WarpT:
    """``warp_t`` of ``warp`` (its local memory: the third bank of its memory)."""
    arrays = (warp.regs, warp.pc, warp.runnable, warp.waiting, warp.exited, warp.exit_codes,
              warp.instructions, warp.mem.banks[2].data, csrs)  # fmt: skip
    return _WarpT(*map(_pointer, arrays), 0)


class BlockKernel:
    """One block's warps under the compiled loop."""

    def __init__(self, code: CodeTable, warps: list[WarpState]) -> None:
        self.code = code
        self.warps = warps
        self.library = load()
        memory = code.memory
        first = warps[0].mem
        _, shared, local = first.banks
        self.csrs = [
            np.stack([warp.ctx.csrs[csr] for csr in CSR_ROWS]).astype(np.uint32) for warp in warps
        ]
        self.block = _BlockT(
            global_=_pointer(memory.data), code=_pointer(code.entries),
            shared=_pointer(shared.data),
            global_base=memory.base, global_size=memory.size,
            shared_base=shared.base, shared_size=shared.size,
            local_base=local.base, local_size=local.size,
            width=len(warps[0].pc), nwarps=len(warps),
        )  # fmt: skip
        self.states = (_WarpT * len(warps))(*map(_warp_state, warps, self.csrs))
        self._args = (ctypes.byref(self.block), self.states)

    def run(self, turn: int, budget: int, reservations: bool) -> tuple[int, int]:
        """Issue up to ``budget`` warp instructions round robin from warp ``turn`` (stores and
        AMOs stop while LR ``reservations`` are held). Returns the warp it stopped at, the next
        to issue, and the warp instructions run. It stops when the budget is spent, when no warp
        can issue, or before an instruction it leaves to the reference (a missing decoded entry
        it fills and goes on)."""
        block, steps = self.block, 0
        for warp, state in zip(self.warps, self.states, strict=True):
            warp.flush()
            state.n_runnable = warp.n_runnable
        block.reservations = reservations
        while True:
            block.turn, block.budget = turn, budget - steps
            self.library.run_block(*self._args)
            steps += block.steps
            turn = block.turn
            if block.reason != STOPS["MISS"]:
                break
            self.code.fill(block.stop_pc)
        for warp, state in zip(self.warps, self.states, strict=True):
            warp.n_runnable = state.n_runnable
        return turn, steps
