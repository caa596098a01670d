"""Stack-less SIMT control (seed 000 Sec 3 and 4.1): every thread keeps its own PC, and the SP
of its register file; the common PC is min(SP:PC) over the threads that may run, computed by
the arbiter reduction tree, and the active mask is the set of threads whose SP:PC equals it.

Arbitration only follows control-flow instructions (the local-increment optimisation of Sec
4.1): after any other instruction the common PC is incremented locally and the active mask is
re-formed by comparing every thread's SP:PC with it, which is how threads reconverge when the
running group reaches the PC where others wait (Table 2, cycle 6). Threads at a different call
depth have a different SP and do not merge (Listing 1 is why SP comes first in the key). No
reconvergence PCs are needed: ``rhint`` is a no-op here.
"""

from __future__ import annotations

import numpy as np

from reconverge.golden.blocks.arbiter import reduce
from reconverge.golden.blocks.divergence import DivergenceUnit, Executed, Split
from reconverge.golden.isa import REG_SP


class StacklessControl(DivergenceUnit):
    """Per-thread PC registers with the SP read from the warp's register file ``regs``."""

    occupancy_keys = ()

    def __init__(self, warp_size: int, valid: int, entry: int, regs: np.ndarray) -> None:
        super().__init__(warp_size, valid, entry)
        self.regs = regs
        self.pc = np.full(warp_size, entry, np.uint64)
        self.lanes = np.arange(warp_size)
        self.active = 0
        self._arbitrate()

    def _bits(self, mask: int) -> np.ndarray:
        return ((mask >> self.lanes) & 1).astype(bool)

    def keys(self) -> np.ndarray:
        """SP:PC per thread (SP in the high 32 bits)."""
        return (self.regs[:, REG_SP].astype(np.uint64) << np.uint64(32)) | self.pc

    def _select(self, candidates: int) -> None:
        """Common SP:PC = min over ``candidates`` (the arbiter tree's reduction); active =
        every runnable thread holding it."""
        runnable = self.live & ~self.waiting
        keys = self.keys().tolist()
        least, _, found = reduce(keys, candidates & runnable)
        self.active = sum(
            1 << lane
            for lane, key in enumerate(keys)
            if found and key == least and runnable >> lane & 1
        )

    def _arbitrate(self) -> None:
        self._select(self.live & ~self.waiting)

    def splits(self) -> list[Split]:
        if not self.active:
            return []
        pc = int(self.pc[(self.active & -self.active).bit_length() - 1])
        return [Split(0, pc, self.active)]

    def execute(self, ex: Executed) -> None:
        self._retire(ex)
        for pc, mask in ex.targets.items():
            self.pc[self._bits(mask)] = pc
        if ex.control or ex.barrier or ex.exited:
            self._arbitrate()
        else:
            self._select(self.active & self.live)  # local increment, then compare every thread

    def release(self, lanes: int) -> None:
        self.waiting &= ~lanes
        self.pc[self._bits(lanes)] += 4
        self._arbitrate()
