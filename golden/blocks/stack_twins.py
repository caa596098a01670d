"""Cycle twins of the two reconvergence stacks: the SPS stack (``sps_stack``, seed 002 Sec 2.2,
Fig 3) and the dual-path stack with or without paired-path comparison (``dual_path_stack``,
seed 003 Fig 4/5, seed 002 Sec 7). The functional classes
(:class:`~reconverge.golden.blocks.reconvergence_stack.ReconvergenceStack`,
:class:`~reconverge.golden.blocks.dual_path_stack.DualPathStack`) are their core: every clock
edge with an update calls the class's :meth:`update` with the port values, so the golden SM
(which calls ``execute``, a sequence of such updates) and the HDL cannot disagree.

Ports (one vocabulary for both; W = ``warp_size``, PCW = ``pc_width``):

===============  ===  ===========  ==========================================================
port             dir  width        meaning
===============  ===  ===========  ==========================================================
``launch``       in   1            start a warp: one entry, threads ``target_mask[0]`` at
                                   ``target_pc[0]``; clears the overflow flag
``valid``        in   1            an update (:class:`StackUpdate`): the outcome of an
                                   instruction issued from the top entry
``path``         in   1            dual-path stack: the path of the top entry that issued
``target_pc``    in   2 x PCW      up to two target groups; a group with an empty mask is
``target_mask``  in   2 x W        absent; present groups have distinct PCs
``exited``       in   W            lanes that exited
``barrier``      in   W            lanes that reached a barrier and wait
``rpc``          in   PCW          branch: its reconvergence PC (all ones = none, NEVER);
                                   call: the return address
``call``, ``ret``  in 1            a linking jump; a return (``jalr`` x0 through ra or t0)
``more``         in   1            another update of the same instruction follows (k > 2)
``cont``         in   1            this update continues the previous one (k > 2)
``bar_release``  in   W            barrier released: these waiting lanes continue after it
``split_valid``  out  1 / 2        the top entry's split (SPS) or paths (dual) that may issue
``split_pc``     out  PCW / 2xPCW  their PCs (0 when not valid)
``split_mask``   out  W / 2xW      their active masks (0 when not valid)
``depth``        out  log2(D+1)    entries in use (0: no warp, or every thread exited)
``in_call``      out  1            some entry is a call entry (a ``ret`` returns from it)
``overflow``     out  1            an update did not fit; sticky until reset or launch
===============  ===  ===========  ==========================================================

Protocol: at most one of ``launch``, ``valid`` and a non-zero ``bar_release`` per cycle (the SM
presents a barrier release in a cycle of its own). Updates and releases are ignored while the
stack is empty or the overflow flag is set; an update that would overflow changes nothing but
the flag. PC codes all ones and all ones - 1 stand for NEVER and RETURN; real PCs stay below
them (and below 2^PCW - 4 where a barrier release adds 4).
"""

from __future__ import annotations

from collections.abc import Mapping

from reconverge.golden.blocks.base import Block, Port, PortValue, Values
from reconverge.golden.blocks.divergence import (
    NEVER,
    RETURN,
    Split,
    TableOverflow,
)
from reconverge.golden.blocks.dual_path_stack import DualPathStack
from reconverge.golden.blocks.reconvergence_stack import ReconvergenceStack
from reconverge.golden.blocks.stack_update import StackUpdate
from reconverge.golden.geometry import Geometry

MAX_DEPTH = 64

#: ``dual_path_stack`` modes: DPS, PPC with hints (explicit), PPC without hints (implicit).
MODES = ("dps", "ppc-explicit", "ppc-implicit")


class StackTwin(Block):
    """What both stack twins share: parameters, ports, the protocol, PC codes."""

    #: split slots on the outputs (SPS 1, dual-path 2)
    slots: int
    #: An update shows on the outputs one clock later (the outputs come from the registers).
    latency = 1

    def __init__(self, warp_size: int, depth: int, pc_width: int = 32) -> None:
        if not 1 <= depth <= MAX_DEPTH:
            raise ValueError(f"depth must be in 1..{MAX_DEPTH} entries, not {depth}")
        Geometry(warp_size=warp_size, simd_width=1)  # validates W
        if not 8 <= pc_width <= 32:
            raise ValueError(f"pc_width must be in 8..32 bits, not {pc_width}")
        self.warp_size = warp_size
        self.depth = depth
        self.pc_width = pc_width
        self.never = (1 << pc_width) - 1
        self.ret_code = self.never - 1
        w, pcw, n = warp_size, pc_width, self.slots
        count = None if n == 1 else n
        self._ports = (
            Port("launch", "in", 1),
            Port("valid", "in", 1),
            *((Port("path", "in", 1),) if n == 2 else ()),
            Port("target_pc", "in", pcw, 2),
            Port("target_mask", "in", w, 2),
            Port("exited", "in", w),
            Port("barrier", "in", w),
            Port("rpc", "in", pcw),
            Port("call", "in", 1),
            Port("ret", "in", 1),
            Port("more", "in", 1),
            Port("cont", "in", 1),
            Port("bar_release", "in", w),
            Port("split_valid", "out", n),
            Port("split_pc", "out", pcw, count),
            Port("split_mask", "out", w, count),
            Port("depth", "out", depth.bit_length()),
            Port("in_call", "out", 1),
            Port("overflow", "out", 1),
        )
        self.unit: ReconvergenceStack | DualPathStack | None = None
        self.overflow = False

    @property
    def ports(self) -> tuple[Port, ...]:
        return self._ports

    def make_unit(self, mask: int, pc: int) -> ReconvergenceStack | DualPathStack:
        raise NotImplementedError

    def reset(self) -> None:
        self.unit = None
        self.overflow = False

    # -- PC codes -----------------------------------------------------------------------------

    def pc_in(self, code: int) -> int:
        """A PC on an input port as the functional classes see it."""
        return {self.never: NEVER, self.ret_code: RETURN}.get(code, code)

    def pc_out(self, pc: int) -> int:
        code = {NEVER: self.never, RETURN: self.ret_code}.get(pc, pc)
        if code >= 1 << self.pc_width:
            raise ValueError(f"{self.name}: PC {pc:#x} does not fit {self.pc_width} bits")
        return code

    # -- the protocol -------------------------------------------------------------------------

    def check_inputs(self, inputs: Mapping[str, PortValue]) -> None:
        super().check_inputs(inputs)
        if inputs["launch"] + inputs["valid"] + bool(inputs["bar_release"]) > 1:
            raise ValueError(f"{self.name}: launch, valid and release in the same cycle")
        pcs, masks = inputs["target_pc"], inputs["target_mask"]
        if inputs["valid"] and all(masks) and pcs[0] == pcs[1]:  # type: ignore[index]
            raise ValueError(f"{self.name}: two target groups at the same PC {pcs[0]:#x}")  # type: ignore[index]

    def update_of(self, inputs: Mapping[str, PortValue]) -> StackUpdate:
        pcs, masks = inputs["target_pc"], inputs["target_mask"]
        return StackUpdate(
            int(inputs.get("path", 0)),  # type: ignore[arg-type]
            tuple((self.pc_in(pc), m) for pc, m in zip(pcs, masks, strict=True) if m),  # type: ignore[arg-type]
            inputs["exited"],  # type: ignore[arg-type]
            inputs["barrier"],  # type: ignore[arg-type]
            self.pc_in(inputs["rpc"]),  # type: ignore[arg-type]
            bool(inputs["call"]),
            bool(inputs["ret"]),
            bool(inputs["more"]),
            bool(inputs["cont"]),
        )

    def live(self) -> ReconvergenceStack | DualPathStack | None:
        """The functional unit when it takes updates: a warp is on it, no overflow."""
        if self.unit is None or not self.unit.entries or self.overflow:
            return None
        return self.unit

    def clock(self, inputs: Mapping[str, PortValue]) -> None:
        if inputs["launch"]:
            pc, mask = inputs["target_pc"][0], inputs["target_mask"][0]  # type: ignore[index]
            self.unit = self.make_unit(mask, self.pc_in(pc))
            self.overflow = False
            return
        unit = self.live()
        if unit is None:
            return
        if inputs["valid"]:
            try:
                unit.update(self.update_of(inputs))
            except TableOverflow:
                self.overflow = True
        elif inputs["bar_release"]:
            unit.release(inputs["bar_release"])  # type: ignore[arg-type]

    def outputs(self, inputs: Mapping[str, PortValue]) -> Values:
        unit = self.unit
        valid, pcs, masks = [0] * self.slots, [0] * self.slots, [0] * self.slots
        for split in unit.splits() if unit is not None else []:
            i = self.slot(split)
            valid[i], pcs[i], masks[i] = 1, self.pc_out(split.pc), split.mask
        out: Values = {
            "depth": len(unit.entries) if unit is not None else 0,
            "in_call": int(unit is not None and unit.in_call),
            "overflow": int(self.overflow),
        }
        if self.slots == 1:
            return out | {"split_valid": valid[0], "split_pc": pcs[0], "split_mask": masks[0]}
        return out | {
            "split_valid": valid[0] | valid[1] << 1,
            "split_pc": tuple(pcs),
            "split_mask": tuple(masks),
        }

    def slot(self, split: Split) -> int:
        return 0


class SpsStackTwin(StackTwin):
    """Cycle twin of ``reconverge.hdl.blocks.sps_stack.SpsStack``: the SPS reconvergence stack of
    ``depth`` entries (core: :class:`ReconvergenceStack`)."""

    name = "sps_stack"
    slots = 1

    def make_unit(self, mask: int, pc: int) -> ReconvergenceStack:
        return ReconvergenceStack(self.warp_size, mask, pc, self.depth)


class DualPathStackTwin(StackTwin):
    """Cycle twin of ``reconverge.hdl.blocks.dual_path_stack.DualPathStack``: the dual-path stack of
    ``depth`` entries; ``mode`` 0 = DPS (both paths issue), 1 = PPC explicit (with hints),
    2 = PPC implicit (no hints; core: :class:`DualPathStack`)."""

    name = "dual_path_stack"
    slots = 2

    def __init__(self, warp_size: int, depth: int, pc_width: int = 32, mode: int = 2) -> None:
        if mode not in range(len(MODES)):
            raise ValueError(
                f"mode must be 0 (dps), 1 (ppc explicit) or 2 (ppc implicit), not {mode}"
            )
        self.mode = mode
        super().__init__(warp_size, depth, pc_width)

    def make_unit(self, mask: int, pc: int) -> DualPathStack:
        return DualPathStack(
            self.warp_size, mask, pc, self.depth, paired=self.mode > 0, implicit=self.mode == 2
        )

    def slot(self, split: Split) -> int:
        return split.sid % 2
