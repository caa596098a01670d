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

from collections.abc import Mapping

import numpy as np

from reconverge.golden.blocks.arbiter import reduce
from reconverge.golden.blocks.base import Block, Port, PortValue, Values
from reconverge.golden.blocks.divergence import DivergenceUnit, Executed, Split, lanes_of
from reconverge.golden.isa import ILEN_BYTES, NUM_REGS, REG_SP


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


class StacklessBlock(Block):
    """Cycle twin of ``reconverge.hdl.blocks.stackless.Stackless``: one warp's stack-less control,
    a :class:`StacklessControl` (the functional model the golden SM uses) behind ports.

    Ports (W = ``warp_size``, PCW = ``pc_width``, SPW = ``sp_width``):

    - in ``start``, ``start_mask`` (W), ``start_pc``, ``start_sp``: a warp begins (every thread
      of the mask at the entry PC with the initial SP); the other inputs are idle then;
    - in ``ex_valid``, ``ex_control``, ``ex_target`` (W), ``ex_next_pc`` [W] x PCW,
      ``ex_exited`` (W), ``ex_barrier`` (W): the outcome of the instruction issued for the
      current split (:class:`~reconverge.golden.blocks.divergence.Executed`): the lanes that
      continue at their ``ex_next_pc``, exit, or wait at a barrier (together exactly the
      active mask); ``ex_control`` for branches and jumps;
    - in ``sp_we`` (W), ``sp_wdata`` [W] x SPW: the instruction wrote x2 (SP) of these lanes;
    - in ``bar_release`` (W): the block's barrier completed for these waiting lanes (after the
      outcome of the same cycle, as in the golden SM); they continue at PC + 4;
    - out ``valid``, ``pc``, ``active``: the split that may issue (pc 0 when none);
    - out ``live``, ``waiting`` (W): threads not exited / waiting at a barrier (for the SM's
      barrier and completion logic); ``thread_pc`` [W] x PCW: the per-thread PC registers.

    The outputs are registers: an outcome presented in cycle t shows from cycle t + 1. Keys
    are SP:PC (SP in the high bits), the order :meth:`StacklessControl.keys` uses for PCs
    and SPs that fit the widths. After a control instruction, an exit, a barrier or a release
    the arbiter tree takes the minimum over every runnable thread; otherwise (Sec 4.1's local
    increment) the common PC is incremented (every target lane must go to PC + 4), or, when
    the instruction wrote SP, the minimum is taken over the split's threads only; then every
    runnable thread whose SP:PC equals the new common key joins the split.
    """

    name = "stackless"
    latency = 1

    def __init__(self, warp_size: int = 32, pc_width: int = 32, sp_width: int = 32) -> None:
        if not 1 <= warp_size <= 64:
            raise ValueError(f"warp size W={warp_size} must be in 1..64")
        if not 3 <= pc_width <= 32:
            raise ValueError(f"pc_width must be in 3..32, not {pc_width}")
        if not 1 <= sp_width <= 32:
            raise ValueError(f"sp_width must be in 1..32, not {sp_width}")
        self.warp_size, self.pc_width, self.sp_width = warp_size, pc_width, sp_width
        w = warp_size
        self._ports = (
            Port("start", "in", 1),
            Port("start_mask", "in", w),
            Port("start_pc", "in", pc_width),
            Port("start_sp", "in", sp_width),
            Port("ex_valid", "in", 1),
            Port("ex_control", "in", 1),
            Port("ex_target", "in", w),
            Port("ex_next_pc", "in", pc_width, w),
            Port("ex_exited", "in", w),
            Port("ex_barrier", "in", w),
            Port("sp_we", "in", w),
            Port("sp_wdata", "in", sp_width, w),
            Port("bar_release", "in", w),
            Port("valid", "out", 1),
            Port("pc", "out", pc_width),
            Port("active", "out", w),
            Port("live", "out", w),
            Port("waiting", "out", w),
            Port("thread_pc", "out", pc_width, w),
        )
        self.regs = np.zeros((w, NUM_REGS), np.uint32)
        self.unit = StacklessControl(w, 0, 0, self.regs)

    @property
    def ports(self) -> tuple[Port, ...]:
        return self._ports

    def _start(self, mask: int, pc: int, sp: int) -> None:
        self.regs = np.zeros((self.warp_size, NUM_REGS), np.uint32)
        self.regs[:, REG_SP] = sp
        self.unit = StacklessControl(self.warp_size, mask, pc, self.regs)

    def reset(self) -> None:
        self._start(0, 0, 0)

    def outputs(self, inputs: Mapping[str, PortValue]) -> Values:
        unit = self.unit
        split = unit.splits()
        return {
            "valid": int(bool(split)),
            "pc": split[0].pc if split else 0,
            "active": unit.active,
            "live": unit.live,
            "waiting": unit.waiting,
            "thread_pc": tuple(int(pc) for pc in unit.pc),
        }

    def clock(self, inputs: Mapping[str, PortValue]) -> None:
        get = inputs.__getitem__
        if get("start"):
            busy = [name for name in ("ex_valid", "sp_we", "bar_release") if get(name)]
            if busy:
                raise ValueError(f"stackless: start with {', '.join(busy)} not idle")
            self._start(get("start_mask"), get("start_pc"), get("start_sp"))  # type: ignore[arg-type]
            return
        if get("ex_valid"):
            self._execute(inputs)
        release: int = get("bar_release")  # type: ignore[assignment]
        if release:
            if release & ~self.unit.waiting:
                raise ValueError(f"stackless: release of lanes {release:#x} not waiting")
            self.unit.release(release)
            if any(int(pc) >> self.pc_width for pc in self.unit.pc):
                raise ValueError("stackless: a released thread's PC + 4 overflows pc_width")

    def _execute(self, inputs: Mapping[str, PortValue]) -> None:
        unit = self.unit
        active = unit.active
        target, exited, barrier, sp_we = (
            int(inputs[name])  # type: ignore[arg-type]
            for name in ("ex_target", "ex_exited", "ex_barrier", "sp_we")
        )
        next_pc: tuple[int, ...] = inputs["ex_next_pc"]  # type: ignore[assignment]
        sp_wdata: tuple[int, ...] = inputs["sp_wdata"]  # type: ignore[assignment]
        control = bool(inputs["ex_control"])
        if not active:
            raise ValueError("stackless: an outcome while no split is active")
        if target | exited | barrier != active or target & exited or (target | exited) & barrier:
            raise ValueError(
                f"stackless: target {target:#x}, exited {exited:#x} and barrier {barrier:#x} "
                f"must split the active mask {active:#x}"
            )
        if sp_we & ~active:
            raise ValueError(f"stackless: SP written for lanes {sp_we:#x} outside the split")
        pc = self.outputs(inputs)["pc"]
        targets: dict[int, int] = {}
        for lane in lanes_of(target):
            if not control and next_pc[lane] != pc + ILEN_BYTES:
                raise ValueError(
                    f"stackless: lane {lane} goes from {pc:#x} to {next_pc[lane]:#x} without "
                    "a control instruction (the local increment needs PC + 4)"
                )
            targets[next_pc[lane]] = targets.get(next_pc[lane], 0) | 1 << lane
        for lane in lanes_of(sp_we):
            self.regs[lane, REG_SP] = sp_wdata[lane]
        unit.execute(
            Executed(0, pc, active, targets, exited=exited, barrier=barrier, control=control)
        )
