"""Cycle twins of the two reconvergence stacks: the SPS stack (``sps_stack``, seed 002 Sec 2.2,
Fig 3) and the dual-path stack with or without paired-path comparison (``dual_path_stack``,
seed 003 Fig 4/5, seed 002 Sec 7). The functional classes
(:class:`~reconverge.golden.blocks.reconvergence_stack.ReconvergenceStack`,
:class:`~reconverge.golden.blocks.dual_path_stack.DualPathStack`) are their core: every clock
edge with an update calls the class's :meth:`update` with the port values, so the golden SM
(which calls ``execute``, a sequence of such updates) and the HDL cannot disagree.

Ports: the divergence units' shared groups (:mod:`reconverge.golden.blocks.divergence_ports`;
W = ``warp_size``, PCW = ``pc_width``):

======================  ===  =====================================================
port                    dir  meaning
======================  ===  =====================================================
``launch``              in   ``valid``: start a warp, one entry, threads ``mask`` at
                             ``pc``; clears the overflow flag
``outcome``             in   ``valid``: an update (:class:`StackUpdate`), the outcome
                             of an instruction issued from the top entry's path
                             ``slot`` (SPS: 0); ``target_pc`` / ``target_mask`` up
                             to two groups (an empty mask is absent; two present
                             groups in ascending PC order, as the SM's grouping stage
                             delivers them, so the stack needs no comparator);
                             ``exited``, ``barrier`` lanes;
                             ``rpc`` (a branch's reconvergence PC, all ones = NEVER;
                             a call's return address); ``call``, ``ret``; ``more``
                             (another update of the instruction follows, k > 2),
                             ``cont`` (this one continues the previous);
                             ``control`` is not used
``release``             in   ``lanes``: barrier released for these waiting lanes
``splits``              out  the top entry's split (SPS) or paths (dual): ``valid``,
                             ``pc``, ``mask``, ``sid`` per slot (0 when not valid);
                             dual-path slot i is sid 2(entries - 1) + i
``status``              out  ``busy`` (SPS: never; dual-path: in the clocks that pop
                             the finished entries after an update or release, one a
                             clock), ``overflow`` (an update did not fit;
                             sticky until reset or launch), ``live``, ``waiting``,
                             ``stack`` (entries in use: 0 = no warp, or every thread
                             exited), ``in_call`` (some entry is a call entry: a
                             ``ret`` returns from it)
======================  ===  =====================================================

Protocol: at most one of a launch, an outcome and a release per cycle (the SM presents a
barrier release in a cycle of its own), neither an outcome nor a release while ``busy``
(no split shows then); ``exited``, ``barrier``, ``call`` and ``ret`` are 0
unless ``valid`` (the HDL stacks take them as they come, ``hdl/formal/sps_stack.py``).
Updates and releases are ignored while the stack is empty or the overflow flag is set; an
update that would overflow changes nothing but the flag. PC codes all ones and all ones - 1
stand for NEVER and RETURN; real PCs are multiples of 4 below them (and below 2^PCW - 4 where a
barrier release adds 4).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from reconverge.golden.blocks.base import (
    Block,
    Port,
    PortTree,
    PortValue,
    Values,
    check_range,
    param,
)
from reconverge.golden.blocks.divergence import TableOverflow
from reconverge.golden.blocks.divergence_ports import (
    DivergenceParams,
    UnitWidths,
    one_of,
    splits_values,
)
from reconverge.golden.blocks.dual_path_stack import DualPathStack
from reconverge.golden.blocks.reconvergence_stack import ReconvergenceStack
from reconverge.golden.blocks.stack_update import StackUpdate
from reconverge.golden.geometry import Geometry, bits_for
from reconverge.golden.policies import Policy

MAX_DEPTH = 64


class StackParams(DivergenceParams):
    """What the parameters of both stacks share: ``warp_size`` W (the mask width: the stacks
    do not see L), ``stack_depth`` entries, ``pc_width`` (the two top codes are NEVER and
    RETURN)."""

    stack_depth: int

    def validate(self) -> None:
        Geometry(warp_size=self.warp_size, simd_width=1)  # W: one definition
        check_range("stack_depth", self.stack_depth, 1, MAX_DEPTH, " entries")
        check_range("pc_width", self.pc_width, 8, 32, " bits")

    @property
    def ports(self) -> PortTree:
        return (
            self.launch_group(),
            self.outcome_group(),
            self.release_group(),
            self.splits_group(),
            self.status_group(
                Port("stack", "out", self.stack_depth.bit_length()), Port("in_call", "out", 1)
            ),
        )


@dataclass(frozen=True)
class SpsStackParams(StackParams):
    """Parameters of the SPS stack (seed 002 Fig 3): one split slot, sid = entries - 1."""

    name = "sps_stack"
    slots: ClassVar[int] = 1

    warp_size: int = param(32, "threads per warp W (mask width)")
    stack_depth: int = param(16, "stack entries; overflow beyond")
    pc_width: int = param(32, "PC bits (the two top codes are NEVER and RETURN)")

    @classmethod
    def of(cls, geometry: Geometry, widths: UnitWidths, **fixed: object) -> SpsStackParams:
        return cls(geometry.warp_size, geometry.stack_depth, widths.pc)

    def make_unit(
        self, valid: int, entry: int, regs: np.ndarray, *, pipelined: bool = True
    ) -> ReconvergenceStack:
        return ReconvergenceStack(self.warp_size, valid, entry, self.stack_depth)

    @property
    def sid_bits(self) -> int:
        return bits_for(self.stack_depth)

    def twin(self) -> SpsStackTwin:
        return SpsStackTwin(self)


@dataclass(frozen=True)
class DualPathStackParams(StackParams):
    """Parameters of the dual-path stack (seed 003 Fig 4/5): ``policy`` ``dps`` (both paths of
    the top entry issue) or ``ppc`` (the paired-path comparison picks one), ``hints`` for
    ``ppc``: explicit with the RPCs of the hints, implicit without (the comparison after every
    instruction). DPS uses its RPCs either way. Two split slots, sid = 2 (entries - 1) + slot.
    Each mode is its own design point (seed 003 compares them): constant folding drops what a
    mode does not use."""

    name = "dual_path_stack"
    slots: ClassVar[int] = 2

    warp_size: int = param(32, "threads per warp W (mask width)")
    stack_depth: int = param(16, "stack entries; overflow beyond")
    pc_width: int = param(32, "PC bits (the two top codes are NEVER and RETURN)")
    policy: Policy = param(Policy.PPC, "dps (both paths issue) or ppc (paired comparison)")
    hints: bool = param(False, "ppc: explicit with the hints' RPCs (1) or implicit (0)")

    def validate(self) -> None:
        if self.policy not in (Policy.DPS, Policy.PPC):
            raise ValueError(f"policy must be dps or ppc, not {self.policy.value}")
        super().validate()

    @property
    def paired(self) -> bool:
        """The paired-path comparison chooses one path (PPC)."""
        return self.policy is Policy.PPC

    @property
    def implicit(self) -> bool:
        """PPC without hints: no RPCs, the comparison after every instruction."""
        return self.paired and not self.hints

    @classmethod
    def of(cls, geometry: Geometry, widths: UnitWidths, **fixed: object) -> DualPathStackParams:
        return cls(geometry.warp_size, geometry.stack_depth, widths.pc, **fixed)  # type: ignore[arg-type]

    def make_unit(
        self, valid: int, entry: int, regs: np.ndarray, *, pipelined: bool = True
    ) -> DualPathStack:
        return DualPathStack(
            self.warp_size, valid, entry, self.stack_depth,
            paired=self.paired, implicit=self.implicit, pipelined=pipelined,
        )  # fmt: skip

    @property
    def sid_bits(self) -> int:
        return bits_for(2 * self.stack_depth)

    def twin(self) -> DualPathStackTwin:
        return DualPathStackTwin(self)


class StackTwin(Block):
    """What both stack twins share: the protocol, the PC codes, the outputs."""

    params: StackParams

    def __init__(self, params: StackParams) -> None:
        super().__init__(params)
        self.unit: ReconvergenceStack | DualPathStack | None = None
        self.overflow = False

    def make_unit(self, mask: int, pc: int) -> ReconvergenceStack | DualPathStack:
        raise NotImplementedError

    def reset(self) -> None:
        self.unit = None
        self.overflow = False

    # -- the protocol -------------------------------------------------------------------------

    def check_inputs(self, inputs: Mapping[str, PortValue]) -> None:
        super().check_inputs(inputs)
        one_of(dict(inputs), self.name)
        if inputs["outcome__slot"] >= self.params.slots:  # type: ignore[operator]
            raise ValueError(f"{self.name}: no split slot {inputs['outcome__slot']}")
        pcs, masks = inputs["outcome__target_pc"], inputs["outcome__target_mask"]
        if inputs["outcome__valid"] and all(masks) and pcs[0] >= pcs[1]:  # type: ignore[index, arg-type, operator]
            raise ValueError(
                f"{self.name}: two target groups must be in ascending PC order, not "
                f"{pcs[0]:#x} then {pcs[1]:#x}"  # type: ignore[index]
            )

    def update_of(self, inputs: Mapping[str, PortValue]) -> StackUpdate:
        get, pc_in = inputs.__getitem__, self.params.pc_in
        pcs, masks = get("outcome__target_pc"), get("outcome__target_mask")
        return StackUpdate(
            get("outcome__slot"),  # type: ignore[arg-type]
            tuple((pc_in(pc), m) for pc, m in zip(pcs, masks, strict=True) if m),  # type: ignore[arg-type]
            get("outcome__exited"),  # type: ignore[arg-type]
            get("outcome__barrier"),  # type: ignore[arg-type]
            pc_in(get("outcome__rpc")),  # type: ignore[arg-type]
            bool(get("outcome__call")),
            bool(get("outcome__ret")),
            bool(get("outcome__more")),
            bool(get("outcome__cont")),
        )

    def live(self) -> ReconvergenceStack | DualPathStack | None:
        """The functional unit when it takes updates: a warp is on it, no overflow."""
        if self.unit is None or not self.unit.entries or self.overflow:
            return None
        return self.unit

    def busy(self) -> bool:
        """Whether this clock settles an earlier update (never for the SPS stack, which
        settles in the update's clock)."""
        return False

    def settle(self, unit: ReconvergenceStack | DualPathStack) -> None:
        """One busy clock (:meth:`busy`)."""
        raise NotImplementedError

    def apply(
        self, unit: ReconvergenceStack | DualPathStack, inputs: Mapping[str, PortValue]
    ) -> None:
        """The clock of an outcome (``update_of``) or a release."""
        if inputs["outcome__valid"]:
            unit.update(self.update_of(inputs))
        elif inputs["release__lanes"]:
            unit.release(inputs["release__lanes"])  # type: ignore[arg-type]

    def clock(self, inputs: Mapping[str, PortValue]) -> None:
        if inputs["launch__valid"]:
            pc, mask = inputs["launch__pc"], inputs["launch__mask"]
            self.unit = self.make_unit(mask, self.params.pc_in(pc))  # type: ignore[arg-type]
            self.overflow = False
            return
        unit = self.live()
        if unit is None:
            return
        if self.busy():
            come = [name for name in ("outcome__valid", "release__lanes") if inputs[name]]
            if come:
                raise ValueError(f"{self.name}: {', '.join(come)} while the stack settles")
            self.settle(unit)
            return
        try:
            self.apply(unit, inputs)
        except TableOverflow:
            self.overflow = True

    def outputs(self, inputs: Mapping[str, PortValue]) -> Values:
        unit, busy = self.unit, self.busy()
        shown = unit.splits() if unit is not None and not busy else []
        splits = [(self.slot(s.sid), s.sid, s.pc, s.mask) for s in shown]
        return splits_values(self.params, splits) | {
            "status__busy": int(busy),
            "status__overflow": int(self.overflow),
            "status__live": unit.live if unit is not None else 0,
            "status__waiting": unit.waiting if unit is not None else 0,
            "status__stack": len(unit.entries) if unit is not None else 0,
            "status__in_call": int(unit is not None and unit.in_call),
        }

    def slot(self, sid: int) -> int:
        return 0


class SpsStackTwin(StackTwin):
    """Cycle twin of ``reconverge.hdl.blocks.sps_stack.SpsStack``: the SPS reconvergence stack
    (core: :class:`ReconvergenceStack`; ports and parameters: :class:`SpsStackParams`)."""

    params: SpsStackParams

    def make_unit(self, mask: int, pc: int) -> ReconvergenceStack:
        p = self.params
        return ReconvergenceStack(p.warp_size, mask, pc, p.stack_depth)


class DualPathStackTwin(StackTwin):
    """Cycle twin of ``reconverge.hdl.blocks.dual_path_stack.DualPathStack``: the dual-path
    stack, DPS or PPC explicit / implicit (core: :class:`DualPathStack`; ports and
    parameters: :class:`DualPathStackParams`)."""

    params: DualPathStackParams

    def make_unit(self, mask: int, pc: int) -> DualPathStack:
        p = self.params
        return DualPathStack(
            p.warp_size, mask, pc, p.stack_depth, paired=p.paired, implicit=p.implicit
        )

    def busy(self) -> bool:
        """The top entry is finished: this clock pops it (``DualPathStack.pop``)."""
        unit = self.live()
        return isinstance(unit, DualPathStack) and unit.popping

    def settle(self, unit: ReconvergenceStack | DualPathStack) -> None:
        assert isinstance(unit, DualPathStack)
        unit.pop()

    def apply(
        self, unit: ReconvergenceStack | DualPathStack, inputs: Mapping[str, PortValue]
    ) -> None:
        """The first clock only (``DualPathStack.modify``, ``release_paths``): the pops
        follow in clocks of their own."""
        assert isinstance(unit, DualPathStack)
        if inputs["outcome__valid"]:
            unit.modify(self.update_of(inputs))
        elif inputs["release__lanes"]:
            unit.release_paths(inputs["release__lanes"])  # type: ignore[arg-type]

    def slot(self, sid: int) -> int:
        return sid % 2
