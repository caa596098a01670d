"""Stack-less SIMT control (seed 000 Sec 3 and 4.1): every thread keeps its own PC, and the SP
of its register file; the common PC is min(SP:PC) over the threads that may run, computed by
the arbiter reduction tree, and the active mask is the set of threads whose SP:PC equals it.

Arbitration only follows control-flow instructions (the local-increment optimisation of Sec
4.1): after any other instruction the common PC is incremented locally and the active mask is
re-formed by comparing every thread's SP:PC with it, which is how threads reconverge when the
running group reaches the PC where others wait (Table 2, cycle 6). Threads at a different call
depth have a different SP and do not merge (Listing 1 is why SP comes first in the key). No
reconvergence PCs are needed: ``rhint`` is a no-op here.

The hardware's control (``pipelined``) takes the tree from its registers in the clock after
the update, so an arbitration takes c = 2 clocks, an SP write (the tree over the split's
threads, then the comparison against the key it found) c = 3, a local increment c = 1; the
idealised machine of the seeds' worked examples does each in one (Table 2: one row a cycle).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from reconverge.golden.blocks.arbiter import MAX_KEY_WIDTH, ArbiterParams, reduce
from reconverge.golden.blocks.base import (
    Block,
    Group,
    Port,
    PortTree,
    PortValue,
    Values,
    check_range,
    param,
)
from reconverge.golden.blocks.divergence import DivergenceUnit, Executed, Split, lanes_of
from reconverge.golden.blocks.divergence_ports import DivergenceParams, UnitWidths, splits_values
from reconverge.golden.geometry import Geometry
from reconverge.golden.isa import ILEN_BYTES, NUM_REGS, REG_SP


class StacklessControl(DivergenceUnit):
    """Per-thread PC registers with the SP read from the warp's register file ``regs``;
    ``pipelined``: the hardware's clocks per update (module docstring), else one."""

    occupancy_keys = ()

    def __init__(
        self, warp_size: int, valid: int, entry: int, regs: np.ndarray, *, pipelined: bool = True
    ) -> None:
        super().__init__(warp_size, valid, entry)
        self.regs = regs
        #: clocks of an update that arbitrates and of one that writes SP (a local increment: 1)
        self.arbitration_clocks = 2 if pipelined else 1
        self.sp_write_clocks = 3 if pipelined else 1
        #: the clock of an update's tree, counted from the update
        self.tree_clock = self.arbitration_clocks - 1
        self.pc = np.full(warp_size, entry, np.uint64)
        self.lanes = np.arange(warp_size, dtype=np.uint64)
        self.active = 0
        self._arbitrate()

    def _bits(self, mask: int) -> np.ndarray:
        """The lanes of ``mask`` as booleans (unsigned: lane 63 of a 64-thread warp too)."""
        return ((np.uint64(mask) >> self.lanes) & np.uint64(1)).astype(bool)

    def keys(self) -> np.ndarray:
        """SP:PC per thread (SP in the high 32 bits)."""
        return (self.regs[:, REG_SP].astype(np.uint64) << np.uint64(32)) | self.pc

    def _select(self, candidates: int) -> None:
        """Common SP:PC = min over the runnable ``candidates`` (the arbiter tree's reduction,
        :func:`~reconverge.golden.blocks.arbiter.reduce`, over all lanes at once); active =
        every runnable thread holding it."""
        runnable = self.live & ~self.waiting
        if not candidates & runnable:
            self.active = 0
            return
        keys = self.keys()
        least = keys[self._bits(candidates & runnable)].min()
        self.active = sum(
            1 << lane for lane in np.flatnonzero(keys == least).tolist() if runnable >> lane & 1
        )

    def _arbitrate(self) -> None:
        self._select(self.live & ~self.waiting)

    def splits(self) -> list[Split]:
        if not self.active:
            return []
        pc = int(self.pc[(self.active & -self.active).bit_length() - 1])
        return [Split(0, pc, self.active)]

    def execute(self, ex: Executed) -> int:
        """The targets' PCs, then arbitration, the tree over the split after an SP write, or
        the local increment (then every thread is compared); returns the clocks."""
        self._retire(ex)
        for pc, mask in ex.targets.items():
            self.pc[self._bits(mask)] = pc
        if ex.control or ex.barrier or ex.exited:
            self._arbitrate()
            return self.arbitration_clocks
        self._select(self.active & self.live)
        return self.sp_write_clocks if ex.sp_written else 1

    def release(self, lanes: int) -> int:
        """The released threads continue after the barrier; arbitration. Returns the clocks."""
        self.waiting &= ~lanes
        self.pc[self._bits(lanes)] += 4
        self._arbitrate()
        return self.arbitration_clocks


@dataclass(frozen=True)
class StacklessParams(DivergenceParams):
    """Parameters of one warp's stack-less control: ``warp_size`` W, ``pc_width`` PCW,
    ``sp_width`` SPW (the key is SP:PC, SP in the high bits).

    Ports: the divergence units' shared groups
    (:mod:`reconverge.golden.blocks.divergence_ports`), one split slot (sid 0):

    - ``launch`` in: ``valid``, ``mask``, ``pc``, ``sp``: a warp begins (every thread of the
      mask at the entry PC with the initial SP); the outcome and release are idle then;
    - ``outcome`` in: ``valid``, ``slot`` (0), ``control``, ``next_mask`` (W), ``next_pc`` [W],
      ``exited``, ``barrier`` (W), ``sp_we`` (W), ``sp_wdata`` [W]: the outcome of the
      instruction issued for the split (:class:`~reconverge.golden.blocks.divergence.Executed`):
      the lanes that continue at their ``next_pc``, exit, or wait at a barrier (together
      exactly the active mask), ``control`` for branches and jumps; the instruction wrote x2
      (SP) of the lanes ``sp_we``;
    - ``release`` in: ``lanes``: the block's barrier completed for these waiting lanes (after
      the outcome of the same cycle, as in the golden SM); they continue at PC + 4;
    - ``splits`` out: ``valid``, ``pc``, ``mask``, ``sid`` (0): the split that may issue;
    - ``status`` out: ``busy`` (the update's tree or comparison clock: no split shows, no
      outcome or release may come), ``overflow`` (never), ``live``, ``waiting``, and
      ``thread_pc`` [W]: the per-thread PC registers (Table 2's PC_i);
    - ``coalesce``: the load/store unit's use of the control's arbiter tree (seed 000 Sec 4.3,
      Fig 4a: one tree serves PC arbitration and memory coalescing), in: ``valid`` (W: lanes
      requesting memory), ``key`` [W] x ``coalesce_width`` (their cache-line numbers); out:
      ``granted`` (the tree is the LSU's this cycle, with or without a request), ``min_key``
      (the lowest requested line, 0 when none) and ``mask`` (the lanes requesting it, served in
      this pass). Combinational. In the cycle after an update that arbitrates the PC (a
      control instruction, an exit, a barrier arrival, a release, an SP write:
      :attr:`StacklessBlock.uses_tree`) the tree is the control's: ``granted`` = 0 (with
      ``min_key``, ``mask`` 0) and the LSU waits."""

    name = "stackless"
    slots: ClassVar[int] = 1

    warp_size: int = param(32, "threads per warp W")
    pc_width: int = param(32, "PC bits")
    sp_width: int = param(32, "SP bits (the key is SP:PC)")
    coalesce_width: int = param(32, "key bits of a coalescing request (a cache-line number)")

    @classmethod
    def of(cls, geometry: Geometry, widths: UnitWidths, **fixed: object) -> StacklessParams:
        """One warp's control, whose tree also coalesces the warp's memory requests
        (``widths.coalesce``: bits of a cache-line number)."""
        return cls(geometry.warp_size, widths.pc, widths.sp, widths.coalesce)

    def make_unit(
        self, valid: int, entry: int, regs: np.ndarray, *, pipelined: bool = True
    ) -> StacklessControl:
        return StacklessControl(self.warp_size, valid, entry, regs, pipelined=pipelined)

    def validate(self) -> None:
        self.check_warp_size()
        check_range("pc_width", self.pc_width, 3, 32, " bits")
        check_range("sp_width", self.sp_width, 1, 32, " bits")
        check_range("coalesce_width", self.coalesce_width, 1, MAX_KEY_WIDTH, " bits")

    @property
    def tree(self) -> ArbiterParams:
        """The one arbiter tree (combinational): W inputs, keys wide enough for SP:PC and for
        a coalescing request."""
        key_width = max(self.pc_width + self.sp_width, self.coalesce_width)
        return ArbiterParams(self.warp_size, key_width)

    @property
    def sid_bits(self) -> int:
        return 1

    @property
    def ports(self) -> PortTree:
        w, pcw, spw = self.warp_size, self.pc_width, self.sp_width
        outcome = (
            Port("valid", "in", 1),
            Port("slot", "in", 1),
            Port("control", "in", 1),
            Port("next_mask", "in", w),
            Port("next_pc", "in", pcw, w),
            Port("exited", "in", w),
            Port("barrier", "in", w),
            Port("sp_we", "in", w),
            Port("sp_wdata", "in", spw, w),
        )
        coalesce = (
            Port("valid", "in", w),
            Port("key", "in", self.coalesce_width, w),
            Port("granted", "out", 1),
            Port("min_key", "out", self.coalesce_width),
            Port("mask", "out", w),
        )
        return (
            self.launch_group(Port("sp", "in", spw)),
            Group("outcome", outcome),
            self.release_group(),
            self.splits_group(),
            self.status_group(Port("thread_pc", "out", pcw, w)),
            Group("coalesce", coalesce),
        )

    def twin(self) -> StacklessBlock:
        return StacklessBlock(self)


class StacklessBlock(Block):
    """Cycle twin of ``reconverge.hdl.blocks.stackless.Stackless``: one warp's stack-less
    control, a :class:`StacklessControl` (the functional model the golden SM uses, pipelined)
    behind the ports of :class:`StacklessParams`.

    The outputs are registers (but the ``coalesce`` group's, combinational: the tree serves the
    load/store unit in the cycles the control leaves it free). Keys are SP:PC (SP in the high
    bits), the order :meth:`StacklessControl.keys` uses for PCs and SPs that fit the widths.
    An outcome or release presented in cycle t updates the thread PCs, SPs, live and waiting
    masks from cycle t + 1 and the split from t + c: after Sec 4.1's local increment (the
    common PC incremented; every target lane must go to PC + 4) c = 1; after a control
    instruction, an exit, a barrier or a release the tree takes the minimum over every
    runnable thread in cycle t + 1 (c = 2); after an SP write, over the split's threads in
    t + 1 and the comparison in t + 2 (c = 3); every runnable thread at the new common key
    joins the split. In the cycles t + 1 .. t + c - 1 the control is busy: no split shows, no
    outcome or release may come, and in t + 1 the tree is the control's, not the LSU's.
    """

    params: StacklessParams

    def __init__(self, params: StacklessParams) -> None:
        super().__init__(params)
        self.regs = np.zeros((params.warp_size, NUM_REGS), np.uint32)
        self.unit = StacklessControl(params.warp_size, 0, 0, self.regs)
        #: the busy clocks still to come: "tree" (the control's tree clock), "compare"
        self.stages: list[str] = []

    def _start(self, mask: int, pc: int, sp: int) -> None:
        w = self.params.warp_size
        self.regs = np.zeros((w, NUM_REGS), np.uint32)
        self.regs[:, REG_SP] = sp
        self.unit = StacklessControl(w, mask, pc, self.regs)
        self.stages = []

    def reset(self) -> None:
        self._start(0, 0, 0)

    @property
    def uses_tree(self) -> bool:
        """Whether the control uses the arbiter tree this cycle (seed 000 Sec 4.1): the clock
        after an update that arbitrates or writes SP."""
        return self.stages[:1] == ["tree"]

    def outputs(self, inputs: Mapping[str, PortValue]) -> Values:
        unit = self.unit
        busy = bool(self.stages)
        splits = [] if busy else [(0, s.sid, s.pc, s.mask) for s in unit.splits()]
        keys: tuple[int, ...] = inputs["coalesce__key"]  # type: ignore[assignment]
        line, lanes, _ = reduce(keys, inputs["coalesce__valid"])  # type: ignore[arg-type]
        granted = not self.uses_tree
        return splits_values(self.params, splits, codes=False) | {
            "status__busy": int(busy),
            "status__overflow": 0,
            "status__live": unit.live,
            "status__waiting": unit.waiting,
            "status__thread_pc": tuple(int(pc) for pc in unit.pc),
            "coalesce__granted": int(granted),
            "coalesce__min_key": line if granted else 0,
            "coalesce__mask": lanes if granted else 0,
        }

    def clock(self, inputs: Mapping[str, PortValue]) -> None:
        get = inputs.__getitem__
        come = [name for name in ("outcome__valid", "release__lanes") if get(name)]
        if get("launch__valid"):
            if come:
                raise ValueError(f"stackless: launch with {', '.join(come)} not idle")
            self._start(get("launch__mask"), get("launch__pc"), get("launch__sp"))  # type: ignore[arg-type]
            return
        if self.stages:
            if come:
                raise ValueError(f"stackless: {', '.join(come)} while the control is busy")
            self.stages.pop(0)
            return
        clocks = self._execute(inputs) if get("outcome__valid") else 1
        release: int = get("release__lanes")  # type: ignore[assignment]
        if release:
            if release & ~self.unit.waiting:
                raise ValueError(f"stackless: release of lanes {release:#x} not waiting")
            clocks = self.unit.release(release)
            if any(int(pc) >> self.params.pc_width for pc in self.unit.pc):
                raise ValueError("stackless: a released thread's PC + 4 overflows pc_width")
        self.stages = ["tree", "compare"][: clocks - 1]

    def _execute(self, inputs: Mapping[str, PortValue]) -> int:
        unit = self.unit
        active = unit.active
        target, exited, barrier, sp_we, slot = (
            int(inputs[f"outcome__{name}"])  # type: ignore[arg-type]
            for name in ("next_mask", "exited", "barrier", "sp_we", "slot")
        )
        next_pc: tuple[int, ...] = inputs["outcome__next_pc"]  # type: ignore[assignment]
        sp_wdata: tuple[int, ...] = inputs["outcome__sp_wdata"]  # type: ignore[assignment]
        control = bool(inputs["outcome__control"])
        if not active or slot:
            raise ValueError("stackless: an outcome while no split is active in that slot")
        if target | exited | barrier != active or target & exited or (target | exited) & barrier:
            raise ValueError(
                f"stackless: next {target:#x}, exited {exited:#x} and barrier {barrier:#x} "
                f"must split the active mask {active:#x}"
            )
        if sp_we & ~active:
            raise ValueError(f"stackless: SP written for lanes {sp_we:#x} outside the split")
        pc = unit.splits()[0].pc
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
        ex = Executed(
            0, pc, active, targets, exited=exited, barrier=barrier, control=control,
            sp_written=bool(sp_we),
        )  # fmt: skip
        return unit.execute(ex)
