"""The SM's warp bookkeeping (issue 27; ``hdl/sm/top.py``): over a small SM running arbitrary
control code, no thread of a warp is lost or duplicated across its splits, and a warp whose
threads have all exited retires. Checked by bounded model checking to :data:`DEPTH` cycles
from reset, per policy variant (the SM of :func:`sm_params`).

The SM: one warp slot of W = 2 threads on L = 2 lanes, stacks of 3 entries, split and
reconvergence tables of 2, a scoreboard of 2 entries, an instruction store of 16 words. In the
first cycle it is launched with a grid of one or two blocks of one or two threads (free, then
held) at the store's first word; the load port and the memory port stay idle (the code has no
memory instruction).

The code is free: the sby script removes the instruction store's and the RPC store's initial
contents, so every word and RPC is the solver's choice, the same all run long. Limited by
``Assume`` statements on what the fetch stage hands the issue stage (:data:`CONTROL`): every
word it issues is a branch (any condition, registers and offset), ``jal`` or ``jalr`` (writing
x0 or ra: a call or a plain jump; a write of sp would change the stack-less control's SP, a
register it keeps beside the PC, outside its contract), the exit ``ecall`` or ``bar``, with the
predecode bits the predecoder makes of it; every RPC a real PC, NEVER or RETURN (what the
compiler writes). The register file is a cut point (its read words are free every cycle), so
every outcome the lanes can compute is tried: any branch direction per thread, any ``jalr``
target, an ``ecall`` that exits or faults (a7 not 93). Targets outside the store, misaligned
ones, an overflowing stack or table and a barrier some threads cannot reach end in a fault;
the SM stops with its status, and the rules hold up to there.

Rules (a *live* thread: launched in the warp slot and not yet reported on the exit port):

* ``the_sm_keeps_the_units_contract``: at the warp's divergence block inside the SM, the
  interface contract under which the block's own rules are proven (``hdl/formal/BLOCK.py``,
  where its clauses are ``Assume`` statements) holds, stated with ``Assert``: the SM only
  drives the block the way its proof allows;
* the block's own rules (``hdl/formal/BLOCK.py``: for the split tables
  ``splits_partition_the_live_threads``, for the stacks ``entries_nest``,
  ``bottom_holds_the_live_threads``, ...), asserted on the block inside the SM;
* ``no_live_thread_is_lost``: every live thread is one of the unit's live threads;
* ``an_exited_thread_leaves_its_warp``: a thread the exit port reported is no longer one of
  the unit's live threads within :data:`EXIT_CYCLES` (the exit reaches the unit behind the
  execute and resolve stages);
* ``exposed_splits_are_disjoint``: the splits the unit exposes to the scheduler have pairwise
  disjoint masks within its live threads (no thread issues twice);
* ``a_warp_without_threads_retires``: a warp slot whose threads have all exited is given up
  (the slot is free, the SM done, or the next block dispatched into it) within
  :data:`RETIRE_CYCLES`.

Covers: a divergence (live threads the unit does not expose while it has settled), a thread
that exits while the other runs on, a barrier release, a second block dispatched into the slot
after the first retired, the SM done with every thread exited, a fault.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial, reduce
from operator import or_
from types import ModuleType
from typing import Any

from amaranth.hdl import (
    Assert,
    Assume,
    ClockDomain,
    Cover,
    Fragment,
    Module,
    ResetSignal,
    Signal,
    Value,
)

from reconverge.golden.blocks.divergence import NEVER, RETURN
from reconverge.golden.config import SMConfig
from reconverge.golden.geometry import Geometry
from reconverge.golden.isa import SPEC_BY_NAME
from reconverge.golden.memmap import GLOBAL_BASE, MemoryMap
from reconverge.golden.params import COSIM, PC_WIDTH, SMParams, hardware_config
from reconverge.golden.policies import variant
from reconverge.hdl.formal import dual_path_stack, split_tables, sps_stack, stackless, stacks
from reconverge.hdl.formal.check import COVERS, JOINT, Harness, harness, real_pc
from reconverge.hdl.sm.decode import Predecoder
from reconverge.hdl.sm.divergence import DivergenceUnit
from reconverge.hdl.sm.top import SM

#: The depth of the bounded model check, in cycles from reset.
DEPTH = 20
#: The cycles an exit may take from the exit port to the unit (execute, resolve, update).
EXIT_CYCLES = 4
#: The cycles a warp slot whose threads have all exited may stay given to its warp.
RETIRE_CYCLES = 6
#: The instructions of the free code (module docstring).
CONTROL = ("beq", "bne", "blt", "bge", "bltu", "bgeu", "jal", "jalr", "ecall", "bar")
#: The registers ``jal`` and ``jalr`` may write: x0 (a jump) and ra (a call).
LINK_REGS = (0, 1)
#: The name of the SM in the formal top (the sby script's cut point and store names use it).
NAME = "sm"


def sm_params(name: str) -> SMParams:
    """The SM of the check (module docstring) for the policy variant ``name``."""
    geometry = Geometry(warp_size=2, simd_width=2, warps=1, stack_depth=3, split_table=2,
                        reconv_table=2, scoreboard_entries=2)  # fmt: skip
    v = variant(name)
    config = hardware_config(
        SMConfig(
            policy=v.policy,
            hints=v.hints,
            latencies=COSIM.config.latencies,
            line_bytes=16,
            shared_banks=4,
        )
    )
    memmap = MemoryMap(global_size=16 << 10, shared_size=1 << 10, local_size=1 << 10)
    return SMParams(geometry, config, memmap, 16)


def script() -> list[str]:
    """The yosys commands before ``prep``: the stores' initial contents removed (the code is
    free), the register file a cut point."""
    core = f"top.{NAME}.core"
    return [
        "hierarchy -top top",
        f"delete {core}.fetch/t:$meminit_v2",
        f"cutpoint {core}.regfile",
        "flatten",  # the logic only the register file read (lane results, the divider's) goes
    ]


def in_control_set(word: Value) -> Value:
    """``word`` is one of :data:`CONTROL`, a ``jal``/``jalr`` writing one of :data:`LINK_REGS`."""
    links = reduce(or_, [word[7:12] == r for r in LINK_REGS])
    matches = []
    for name in CONTROL:
        spec = SPEC_BY_NAME[name]
        match = (word & spec.mask) == spec.match
        matches.append(match & links if name in ("jal", "jalr") else match)
    return reduce(or_, matches)


@dataclass(frozen=True)
class UnitRules:
    """What the SM check takes from a block's own formal module: its contract, what its rules
    read (with the cycle before) and its rules."""

    contract: Callable[..., None]
    observe: Callable[[Module, Any, Any], Any]
    properties: Mapping[str, tuple[Callable[[Module, Any], None], str]]


def _stack_rules(module: ModuleType) -> UnitRules:
    return UnitRules(stacks.contract, partial(stacks.observe, seen=module.Seen), module.PROPERTIES)


#: Per divergence block (``Variant.unit``), its rules.
UNIT_RULES: dict[str, UnitRules] = {
    "sps_stack": _stack_rules(sps_stack),
    "dual_path_stack": _stack_rules(dual_path_stack),
    "split_tables": UnitRules(split_tables.contract, split_tables.observe, split_tables.PROPERTIES),
    "stackless": UnitRules(stackless.contract, stackless.observe, stackless.PROPERTIES),
}


@dataclass(frozen=True)
class Seen:
    """What the SM's rules read: the SM, its warp slot's unit, the launched and exited
    threads of the slot's warp, and the signals the rules derive."""

    sm: SM
    unit: DivergenceUnit
    live: Signal  # launched and not reported on the exit port
    exited: Signal
    launches: Signal  # warps dispatched into the slot so far (saturating at 3)


def _observe(m: Module, sm: SM) -> Seen:
    core = sm.core
    unit = core.units[0]
    w = sm.params.geometry.warp_size
    launched, exited = Signal(w, name="ghost_launched"), Signal(w, name="ghost_exited")
    live = Signal(w, name="ghost_live")
    launches = Signal(2, name="ghost_launches")
    with m.If(unit.launch.valid):
        m.d.sync += [launched.eq(unit.launch.mask), exited.eq(0)]
        with m.If(launches != 3):
            m.d.sync += launches.eq(launches + 1)
    with m.Elif(sm.exit.valid):
        m.d.sync += exited.eq(exited | sm.exit.mask)
    m.d.comb += live.eq(launched & ~exited)
    return Seen(sm, unit, live, exited, launches)


def _environment(m: Module, sm: SM, grid: Signal, block: Signal) -> None:
    """The launch, the idle ports and the free code (module docstring)."""
    first = Signal(init=1, name="first_cycle")
    m.d.sync += first.eq(0)
    held = Signal.like(grid, name="held_grid"), Signal.like(block, name="held_block")
    m.d.sync += [held[0].eq(grid), held[1].eq(block)]
    m.d.comb += Assume(~ResetSignal())
    m.d.comb += Assume((grid >= 1) & (grid <= 2) & (block >= 1) & (block <= 2))
    with m.If(~first):
        m.d.comb += Assume((grid == held[0]) & (block == held[1]))
    m.d.comb += [
        sm.launch.start.eq(first),
        sm.launch.grid.eq(grid),
        sm.launch.block.eq(block),
        sm.launch.entry.eq(GLOBAL_BASE),
        sm.load.valid.eq(0),
        sm.mem.req_ready.eq(1),
        sm.mem.resp_valid.eq(0),
    ]
    fetch = sm.core.fetch
    for i in range(fetch.buffers):
        m.submodules[f"predecoder{i}"] = predecoder = Predecoder()
        entry = fetch.buffer[i]
        m.d.comb += predecoder.word.eq(entry.word)
        with m.If(fetch.hit[i]):
            m.d.comb += Assume(in_control_set(entry.word))
            m.d.comb += Assume(entry.pre.as_value() == predecoder.fields.as_value())
    rpc = fetch.rpc
    m.d.comb += Assume(real_pc(rpc, PC_WIDTH) | (rpc == NEVER) | (rpc == RETURN))


def _counter(m: Module, name: str, condition: Value, bound: int) -> Signal:
    """The cycles ``condition`` has held in a row (saturating above ``bound``)."""
    count = Signal(range(bound + 2), name=name)
    with m.If(condition), m.If(count <= bound):
        m.d.sync += count.eq(count + 1)
    with m.Else():
        m.d.sync += count.eq(0)
    return count


def no_live_thread_is_lost(m: Module, s: Seen) -> None:
    with m.If(s.sm.core.active[0]):
        m.d.comb += Assert((s.live & ~s.unit.live) == 0)


def an_exited_thread_leaves_its_warp(m: Module, s: Seen) -> None:
    stale = (s.unit.live & s.exited) != 0
    count = _counter(m, "stale_cycles", s.sm.core.active[0] & stale, EXIT_CYCLES)
    m.d.comb += Assert(count <= EXIT_CYCLES)


def exposed_splits_are_disjoint(m: Module, s: Seen) -> None:
    splits = s.unit.splits
    masks = [Value.cast(splits.mask[k]) & splits.valid[k].replicate(len(s.live))
             for k in range(len(splits.valid))]  # fmt: skip
    for i, a in enumerate(masks):
        m.d.comb += Assert((a & ~s.unit.live) == 0)
        for b in masks[i + 1 :]:
            m.d.comb += Assert((a & b) == 0)


def a_warp_without_threads_retires(m: Module, s: Seen) -> None:
    status = s.sm.status
    empty = s.sm.core.active[0] & (s.live == 0) & ~status.fault & ~status.done
    count = _counter(m, "empty_cycles", empty & ~s.unit.launch.valid, RETIRE_CYCLES)
    m.d.comb += Assert(count <= RETIRE_CYCLES)


PROPERTIES: dict[str, tuple[Callable[[Module, Seen], None], str]] = {
    "no_live_thread_is_lost": (no_live_thread_is_lost, "hdl/sm/top.py"),
    "an_exited_thread_leaves_its_warp": (an_exited_thread_leaves_its_warp, "hdl/sm/top.py"),
    "exposed_splits_are_disjoint": (exposed_splits_are_disjoint, "seed 002 Sec 3.3.1"),
    "a_warp_without_threads_retires": (a_warp_without_threads_retires, "hdl/sm/top.py"),
}


def covers(m: Module, s: Seen) -> None:
    unit, status = s.unit, s.sm.status
    exposed = reduce(or_, [Value.cast(unit.splits.mask[k]) & unit.splits.valid[k].replicate(
        len(s.live)) for k in range(len(unit.splits.valid))])  # fmt: skip
    m.d.comb += Cover(~unit.busy & (unit.waiting == 0) & ((s.live & ~exposed) != 0))
    m.d.comb += Cover((s.exited != 0) & (s.live != 0))
    m.d.comb += Cover(unit.release.lanes != 0)
    m.d.comb += Cover(unit.launch.valid & (s.launches == 1))
    m.d.comb += Cover(status.done & ~status.fault)
    m.d.comb += Cover(status.fault)


@dataclass(frozen=True)
class SMCheckParams:
    """One SM check: the policy variant of the SM of :func:`sm_params`."""

    variant: str

    def describe(self) -> str:
        g = sm_params(self.variant).geometry
        return f"{self.variant}, W={g.warp_size} L={g.simd_width}, {g.warps} warp slot"

    @property
    def unit(self) -> UnitRules:
        return UNIT_RULES[variant(self.variant).unit]

    def sections(self) -> dict[str, str]:
        """Every rule the check asserts and where it comes from, the block's own first."""
        unit = variant(self.variant).unit
        own = {name: section for name, (_, section) in self.unit.properties.items()}
        mine = {name: section for name, (_, section) in PROPERTIES.items()}
        return {CONTRACT: f"hdl/formal/{unit}.py", **own, **mine}


#: The rule that the SM keeps its divergence block's interface contract.
CONTRACT = "the_sm_keeps_the_units_contract"


def harnesses(
    params: SMCheckParams, make_unit: Callable[[SMParams], DivergenceUnit] = DivergenceUnit
) -> dict[str, Callable[[], Harness]]:
    """The SM check of ``params``: every rule at once (:data:`JOINT`, by bmc) and the covers
    (:data:`COVERS`); ``make_unit`` builds the warp slot's divergence unit (a broken one, in
    the tests)."""
    sm_p = sm_params(params.variant)
    unit_rules = params.unit

    def build(rules: bool, m: Module, domain: ClockDomain) -> Sequence[Value]:
        sm = SM(sm_p, divergence_unit=make_unit)
        m.submodules[NAME] = Fragment.get(sm, None)  # elaborated here: the rules read its core
        grid, block = Signal(2, name="grid"), Signal(2, name="block")
        _environment(m, sm, grid, block)
        seen = _observe(m, sm)
        if rules:
            unit = seen.unit
            unit_rules.contract(m, unit.block, unit.unit, Assert)
            block_seen = unit_rules.observe(m, unit.block, unit.unit)
            for rule, _ in unit_rules.properties.values():
                rule(m, block_seen)
            for rule, _ in PROPERTIES.values():
                rule(m, seen)
        else:
            covers(m, seen)
        return [grid, block]

    return {
        JOINT: partial(harness, JOINT, partial(build, True), script()),
        COVERS: partial(harness, COVERS, partial(build, False), script()),
    }
