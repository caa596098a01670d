"""What the formal checks of the two reconvergence stacks share (``hdl/formal/sps_stack.py``,
``hdl/formal/dual_path_stack.py``): the interface contract of ``golden.blocks.stack_twins``
(the ``Assume`` statements of :func:`contract`), the rules that read only the ports and the
stack pointer, the covers both reach, and the harnesses' setup.

The contract:

* at most one of a launch, an outcome and a release per cycle; a launch starts a non-empty
  warp at a real PC (an instruction's: aligned, below the two codes, and + 4 still below
  them, where a release adds 4);
* ``exited``, ``barrier``, ``call`` and ``ret`` are 0 unless ``valid`` (the stacks take them
  as they come: a release's clock must not lose the exited lanes);
* an outcome comes from the top entry's split ``outcome.slot`` (the SPS stack's one split, a
  dual-path stack's path) while it may issue, at an instruction's PC (a real PC: the SM faults
  on fetching anywhere else): its target groups, exited and barrier lanes are disjoint and
  together the split's threads (every thread of the split goes to one target, exits or
  waits; at a ``bar``, neither a call nor a return, all of them wait); two groups come in
  ascending PC order; target PCs are aligned (the SM hands a jump's target on before fetching
  it, and faults there when it is no instruction's), the RPC a real PC, NEVER or RETURN (a
  call's: its return address, a real PC). The updates of an indirect jump to more than two PCs
  (``more``, ``cont``) are not driven: they split one outcome over clocks;
* a release names the waiting lanes (the barrier completed for all of them), and comes only
  while the stack is not ``busy``.

The shared rules: ``depth_within_bound`` (the stack never holds more than ``stack_depth``
entries: an update that needs more raises the overflow flag, seed 002 Sec 2.2) and
``overflow_changes_nothing_else`` (the clock that raises the flag leaves the registers an
update changes as they were: the update is refused, not partly applied). The shared covers: an
overflow, a reconvergence back to one entry with every thread after a divergence, a barrier
release.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from amaranth.hdl import Assert, Assume, Cover, Module, Value

from reconverge.golden.blocks.stack_twins import StackParams
from reconverge.hdl.formal.check import Claim, Harness, previous, real_pc
from reconverge.hdl.formal.check import harnesses as block_harnesses


class StackSeen(Protocol):
    """What the shared rules read of a stack's ``Seen``: the stack (``sp``, ``overflow``,
    ``live_threads``, ``waiting`` and its ports), its parameters, the cycle before, and the
    registers an update changes (:meth:`state`)."""

    @property
    def dut(self) -> Any: ...
    @property
    def params(self) -> StackParams: ...
    @property
    def before(self) -> dict[str, Value]: ...
    def state(self) -> dict[str, Value]: ...


Seen = TypeVar("Seen", bound=StackSeen)
P = TypeVar("P", bound=StackParams)


def contract(m: Module, dut: Any, params: StackParams, claim: Claim = Assume) -> None:
    """The interface contract of ``golden.blocks.stack_twins`` (module docstring), each clause
    stated with ``claim``: ``Assume`` for the block's own proof, ``Assert`` where the SM drives
    the block (hdl/formal/sm.py)."""
    launch, out, lanes = dut.launch, dut.outcome, dut.release.lanes
    slot = out.slot if params.slots > 1 else 0
    split_valid, split_pc = dut.splits.valid.bit_select(slot, 1), dut.splits.pc[slot]
    split_mask = dut.splits.mask[slot]
    never, ret = params.never, params.return_code

    def real(pc: Value) -> Value:
        return real_pc(pc, params.pc_width)

    m.d.comb += claim(launch.valid + out.valid + lanes.any() <= 1)
    with m.If(launch.valid):
        m.d.comb += claim((launch.mask != 0) & real(launch.pc))
    groups = outcome_partitions(m, out, split_mask, claim)
    with m.If(out.valid):
        m.d.comb += claim(split_valid & ~out.more & ~out.cont)
        # the SM faults on fetching elsewhere (no store reaches the top of the PC space, where
        # a release past a ``bar`` would wrap)
        m.d.comb += claim(real(split_pc))
        with m.If(groups[0].any() & groups[1].any()):
            m.d.comb += claim(out.target_pc[0] < out.target_pc[1])
        m.d.comb += claim((out.target_pc[0][:2] == 0) & (out.target_pc[1][:2] == 0))
        m.d.comb += claim(real(out.rpc) | (~out.call & ((out.rpc == never) | (out.rpc == ret))))
    m.d.comb += claim((lanes == 0) | (lanes == dut.status.waiting))
    # no release while the stack settles (a dual-path stack's pops; no split shows then, so
    # no outcome comes either)
    m.d.comb += claim(~lanes.any() | ~dut.status.busy)


def outcome_partitions(
    m: Module, out: Any, split_mask: Value, claim: Claim = Assume
) -> list[Value]:
    """The part of a divergence unit's contract about an outcome's threads (every unit's):
    ``exited``, ``barrier``, ``call`` and ``ret`` are 0 unless ``valid``; a valid outcome's
    target groups, exited and barrier lanes are disjoint and together ``split_mask``, and at a
    ``bar`` (neither a call nor a return) all of them wait. Returns the four groups."""
    groups = [out.target_mask[0], out.target_mask[1], out.exited, out.barrier]
    with m.If(~out.valid):
        m.d.comb += claim((out.exited == 0) & (out.barrier == 0) & ~out.call & ~out.ret)
    with m.If(out.valid):
        for i, a in enumerate(groups):
            for b in groups[i + 1 :]:
                m.d.comb += claim((a & b) == 0)
        m.d.comb += claim((groups[0] | groups[1] | groups[2] | groups[3]) == split_mask)
        with m.If(out.barrier.any()):  # a ``bar``: every thread of the split waits at it
            m.d.comb += claim((out.barrier == split_mask) & ~out.call & ~out.ret)
    return groups


def depth_within_bound(m: Module, s: StackSeen) -> None:
    m.d.comb += Assert(s.dut.status.stack <= s.params.stack_depth)


def overflow_changes_nothing_else(m: Module, s: StackSeen) -> None:
    dut, before = s.dut, s.before
    with m.If(dut.overflow & ~before["overflow"] & ~before["launch"]):
        for name, value in s.state().items():
            m.d.comb += Assert(value == before[name])


def stack_covers(m: Module, s: StackSeen) -> None:
    """The covers both stacks reach (module docstring)."""
    dut, before = s.dut, s.before
    m.d.comb += Cover(dut.overflow)
    m.d.comb += Cover((dut.sp == 1) & (before["sp"] > 1) & (dut.live_threads.all()))
    m.d.comb += Cover((before["waiting"] != 0) & (dut.waiting == 0) & (dut.sp != 0))


def observe(
    m: Module, dut: Any, params: P, seen: Callable[[Any, P, dict[str, Value]], Seen]
) -> Seen:
    """What the rules read of the stack ``dut``: ``seen`` of it, with the registers an update
    changes, the overflow flag and the launch as they were the cycle before."""
    watched = {**seen(dut, params, {}).state(), "overflow": dut.overflow,
               "launch": dut.launch.valid}  # fmt: skip
    return seen(dut, params, previous(m, watched))


def stack_harnesses(
    params: P,
    make: Callable[[P], Any],
    seen: Callable[[Any, P, dict[str, Value]], Seen],
    properties: Mapping[str, tuple[Callable[[Module, Seen], None], str]],
    covers: Callable[[Module, Seen], None],
) -> dict[str, Callable[[], Harness]]:
    """Per property, together, and for the covers, what builds a stack's formal top: the
    stack ``make(params)`` under :func:`contract`, what ``seen`` makes of it and of its state
    the cycle before."""

    def setup(m: Module) -> tuple[Seen, Sequence[Value]]:
        m.submodules.dut = dut = make(params)
        contract(m, dut, params)
        ports = [dut.port(p.name) for p in params.flat_ports]
        return observe(m, dut, params, seen), ports

    rules = {name: rule for name, (rule, _) in properties.items()}
    return block_harnesses(setup, rules, covers, joint=True)
