"""The port groups every divergence unit shares: the SPS stack (``sps_stack``), the dual-path
stack (``dual_path_stack``), the split and reconvergence tables (``split_tables``) and the
stack-less control (``stackless``). One group name and one member name mean the same thing in
all four, so the SM's per-policy wrapper connects whichever unit the policy chooses through
one interface (docs/hdl.md, "The divergence units' shared ports").

=============  ===============================================================================
group          members (W = warp size, PCW = PC bits, S = split slots)
=============  ===============================================================================
``launch``     in: ``valid`` a warp starts: threads ``mask`` (W) at ``pc``; (stack-less: the
               initial ``sp`` of every thread)
``outcome``    in: ``valid`` the executed instruction of the split in slot ``slot``: up to two
               target groups ``target_pc`` / ``target_mask`` [2] (an empty mask is no group),
               ``exited`` and ``barrier`` lanes (W), its ``rpc`` (all ones: NEVER, all ones -
               1: RETURN; for a call the return address), ``call``, ``ret``, ``control``
               (branch or jump), ``more`` (another update of this instruction follows) and
               ``cont`` (this update continues the previous one); stack-less: per-thread next
               PCs ``next_pc`` [W] for the lanes ``next_mask``, SP writes ``sp_we`` /
               ``sp_wdata`` [W] instead of the groups
``release``    in: ``lanes`` (W) the block's barrier completed for these waiting lanes: they
               continue after it (none when 0)
``splits``     out: the splits that may issue now, one per slot: ``valid`` (S bits), ``pc``,
               ``mask``, ``sid`` [S] (0 when not valid)
``status``     out: ``busy`` (no update this cycle), ``overflow`` (sticky until a launch),
               ``live`` / ``waiting`` (W: threads not exited / waiting at a barrier), and the
               unit's occupancy counters named as its ``occupancy()`` keys (``stack``; ``st``,
               ``rt``)
=============  ===============================================================================

A unit ignores the members it has no use for (the stacks ``control``, the tables ``more``);
a member a unit cannot have is constant (the stacks and the stack-less control are never
``busy``, the stack-less control never overflows).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Self

import numpy as np

from reconverge.golden.blocks.base import BlockParams, Group, Port, check_range
from reconverge.golden.blocks.divergence import NEVER, RETURN, DivergenceUnit
from reconverge.golden.geometry import Geometry, bits_for

#: Target groups an update carries (the width of the update port).
TARGETS = 2


@dataclass(frozen=True)
class UnitWidths:
    """The widths an SM gives its divergence unit: PC and SP bits, and the bits of a cache-line
    number the stack-less unit's tree coalesces (golden's SM: full 32-bit words)."""

    pc: int = 32
    sp: int = 32
    coalesce: int = 32


class DivergenceParams(BlockParams):
    """What the parameters of the four divergence units share: ``warp_size`` W and
    ``pc_width`` (fields of each dataclass), the PC codes, the split slots and sid bits; and
    how an SM makes the unit of a policy variant (:mod:`reconverge.golden.blocks.units`):
    :meth:`of` its parameters at the SM's geometry, :meth:`make_unit` the golden unit of one
    warp."""

    warp_size: int
    pc_width: int
    #: Splits the unit exposes at once (its split slots).
    slots: int

    @classmethod
    def of(cls, geometry: Geometry, widths: UnitWidths, **fixed: object) -> Self:
        """The unit's parameters in an SM of ``geometry`` with ``widths``; ``fixed``: the
        parameters a policy variant fixes (``golden.policies.Variant.unit_params``)."""
        raise NotImplementedError

    def make_unit(
        self, valid: int, entry: int, regs: np.ndarray, *, pipelined: bool = True
    ) -> DivergenceUnit:
        """The golden unit of one warp: threads ``valid`` start at ``entry``; ``regs`` is the
        warp's register file (the stack-less unit reads each thread's SP from it);
        ``pipelined``: as the hardware's block updates (the split tables insert in the cycles
        after an operation), else as the idealised machines of the seeds' worked examples,
        whose tables update at once (``golden.config.Latencies.pipelined``)."""
        raise NotImplementedError

    @property
    def sid_bits(self) -> int:
        """Bits of a split id (``golden.params.SMParams.sid_bits`` for this unit)."""
        raise NotImplementedError

    @property
    def latency(self) -> int:
        """An update shows on the outputs one clock later (the outputs come from registers)."""
        return 1

    @property
    def never(self) -> int:
        """The PC code of NEVER (no reconvergence point): all ones."""
        return (1 << self.pc_width) - 1

    @property
    def return_code(self) -> int:
        """The PC code of RETURN (reconverge when the innermost call returns): all ones - 1."""
        return self.never - 1

    def pc_in(self, code: int) -> int:
        """A PC on a port as the functional classes see it (the codes as NEVER / RETURN)."""
        return {self.never: NEVER, self.return_code: RETURN}.get(code, code)

    def pc_out(self, pc: int) -> int:
        """A PC of the functional classes on a port; ValueError when it does not fit."""
        code = {NEVER: self.never, RETURN: self.return_code}.get(pc, pc)
        if code >= 1 << self.pc_width:
            raise ValueError(f"{self.name}: PC {pc:#x} does not fit {self.pc_width} bits")
        return code

    def check_warp_size(self) -> None:
        check_range("warp_size", self.warp_size, 1, 64, " threads")

    # -- the shared groups -----------------------------------------------------------------------

    def launch_group(self, *extra: Port) -> Group:
        w, pcw = self.warp_size, self.pc_width
        return Group(
            "launch",
            (Port("valid", "in", 1), Port("mask", "in", w), Port("pc", "in", pcw), *extra),
        )

    def outcome_group(self) -> Group:
        """The outcome of the stacks and tables: up to two target groups."""
        w, pcw = self.warp_size, self.pc_width
        return Group(
            "outcome",
            (
                Port("valid", "in", 1),
                Port("slot", "in", bits_for(self.slots)),
                Port("target_pc", "in", pcw, TARGETS),
                Port("target_mask", "in", w, TARGETS),
                Port("exited", "in", w),
                Port("barrier", "in", w),
                Port("rpc", "in", pcw),
                Port("call", "in", 1),
                Port("ret", "in", 1),
                Port("control", "in", 1),
                Port("more", "in", 1),
                Port("cont", "in", 1),
            ),
        )

    def release_group(self) -> Group:
        return Group("release", (Port("lanes", "in", self.warp_size),))

    def splits_group(self) -> Group:
        n, w, pcw = self.slots, self.warp_size, self.pc_width
        return Group(
            "splits",
            (
                Port("valid", "out", n),
                Port("pc", "out", pcw, n),
                Port("mask", "out", w, n),
                Port("sid", "out", self.sid_bits, n),
            ),
        )

    def status_group(self, *counters: Port) -> Group:
        w = self.warp_size
        return Group(
            "status",
            (
                Port("busy", "out", 1),
                Port("overflow", "out", 1),
                Port("live", "out", w),
                Port("waiting", "out", w),
                *counters,
            ),
        )


def splits_values(
    params: DivergenceParams, splits: list[tuple[int, int, int, int]], codes: bool = True
) -> dict[str, int | tuple[int, ...]]:
    """The ``splits`` outputs from (slot, sid, pc, mask) of each split that may issue (pc as
    the functional classes give it: NEVER and RETURN become their codes unless ``codes`` is
    False, for a unit without them)."""
    n = params.slots
    valid, pcs, masks, sids = 0, [0] * n, [0] * n, [0] * n
    for slot, sid, pc, mask in splits:
        valid |= 1 << slot
        pcs[slot], masks[slot], sids[slot] = params.pc_out(pc) if codes else pc, mask, sid
    return {
        "splits__valid": valid,
        "splits__pc": tuple(pcs),
        "splits__mask": tuple(masks),
        "splits__sid": tuple(sids),
    }


def one_of(inputs: dict, name: str) -> None:
    """ValueError unless at most one of a launch, an outcome and a release is presented (the
    protocol of the stacks and the tables: one operation per cycle)."""
    if inputs["launch__valid"] + inputs["outcome__valid"] + bool(inputs["release__lanes"]) > 1:
        raise ValueError(f"{name}: launch, outcome and release in the same cycle")
