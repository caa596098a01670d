"""The reconvergence stacks at block level: the per-clock update (``stack_updates``), the
functional classes' corner cases (overflow before any change, returns to RETURN, at most two
paths per dual-path entry), the cycle twins' protocol and PC codes, the directed scenarios
(seed 002 Fig 3, seed 003 Fig 4/5) and random streams on the twins alone, and a k-way indirect
jump on the SM under every stack policy."""

from __future__ import annotations

import pytest

from reconverge.golden.asm import assemble
from reconverge.golden.blocks import DualPathStackParams, SpsStackParams
from reconverge.golden.blocks.divergence import NEVER, RETURN, Executed, TableOverflow
from reconverge.golden.blocks.divergence_ports import UnitWidths
from reconverge.golden.blocks.dual_path_stack import DualPathStack
from reconverge.golden.blocks.reconvergence_stack import ReconvergenceStack
from reconverge.golden.blocks.stack_update import StackUpdate, stack_updates
from reconverge.golden.blocks.units import unit_params
from reconverge.golden.config import SMConfig
from reconverge.golden.functional import LaunchConfig, run
from reconverge.golden.geometry import Geometry
from reconverge.golden.policies import Policy, variant
from reconverge.golden.sm.run import run_sm
from reconverge.testbench.lockstep import run_golden
from reconverge.testbench.scenarios import applicable, rng_for
from reconverge.testbench.scenarios import dual_path_stack as dual_stimulus
from reconverge.testbench.scenarios import sps_stack as sps_stimulus
from reconverge.testbench.scenarios.stacks import launch, random_stream, update

# -- the update the hardware takes per clock --------------------------------------------------


def test_two_targets_are_one_update() -> None:
    ex = Executed(0, 0x100, 0b1111, {0x200: 0b0011, 0x104: 0b1100}, control=True, rpc=0x300)
    assert stack_updates(ex, 1, in_call=False) == [
        StackUpdate(1, ((0x104, 0b1100), (0x200, 0b0011)), rpc=0x300)
    ]


def test_call_carries_the_return_address_and_no_rpc_is_never() -> None:
    call = Executed(0, 0x100, 0b1, {0x400: 0b1}, control=True, call=True)
    assert stack_updates(call, 0, False)[0].rpc == 0x104
    branch = Executed(0, 0x100, 0b11, {0x104: 0b01, 0x200: 0b10}, control=True)
    assert stack_updates(branch, 0, False)[0].rpc == NEVER


def test_k_targets_take_k_minus_2_more_updates_highest_first() -> None:
    targets = {0x500: 0b10000, 0x100: 0b00001, 0x400: 0b01000, 0x200: 0b00010, 0x300: 0b00100}
    ex = Executed(0, 0x80, 0b11111, targets, control=True, rpc=0x600, exited=0, barrier=0)
    got = stack_updates(ex, 0, in_call=False)
    assert [(u.targets, u.more, u.cont) for u in got] == [
        (((0x500, 0b10000),), True, False),
        (((0x400, 0b01000),), True, True),
        (((0x300, 0b00100),), True, True),
        (((0x100, 0b00001), (0x200, 0b00010)), False, True),
    ]
    assert {u.rpc for u in got} == {0x600}


def test_a_return_inside_a_call_is_one_update() -> None:
    ex = Executed(0, 0x100, 0b111, {0x10: 1, 0x20: 2, 0x30: 4}, control=True, ret=True)
    (u,) = stack_updates(ex, 0, in_call=True)
    assert u.ret and len(u.targets) == 2
    assert not any(u.ret for u in stack_updates(ex, 0, in_call=False))  # a plain jump


def test_update_port_rules() -> None:
    with pytest.raises(ValueError, match="at most two"):
        StackUpdate(0, ((1, 1), (2, 2), (3, 4)))
    with pytest.raises(ValueError, match="distinct PCs"):
        StackUpdate(0, ((8, 1), (8, 2)))


# -- the functional classes ------------------------------------------------------------------


def test_sps_return_entries_each_return_then_the_caller_continues() -> None:
    """A branch of a device function that only reconverges at the return (RPC RETURN) pushes
    return entries; each side returns on its own (the sibling runs next), then the call
    entry, left waiting at RETURN, is popped and the caller continues at the return
    address with every thread. (An assertion used to reject the sibling.)"""
    unit = ReconvergenceStack(4, 0b1111, 0x100, 8)
    unit.execute(Executed(0, 0x100, 0b1111, {0x200: 0b1111}, control=True, call=True))
    unit.execute(Executed(1, 0x200, 0b1111, {0x204: 0b0011, 0x300: 0b1100}, rpc=RETURN))
    assert [(e.pc, e.mask) for e in unit.entries] == [
        (0x104, 0b1111),
        (RETURN, 0b1111),
        (0x300, 0b1100),
        (0x204, 0b0011),
    ]
    unit.execute(Executed(3, 0x204, 0b0011, {0x104: 0b0011}, control=True, ret=True))
    assert [(s.pc, s.mask) for s in unit.splits()] == [(0x300, 0b1100)]
    unit.execute(Executed(2, 0x300, 0b1100, {0x104: 0b1100}, control=True, ret=True))
    assert [(s.pc, s.mask) for s in unit.splits()] == [(0x104, 0b1111)]


@pytest.mark.parametrize("cls", [ReconvergenceStack, DualPathStack])
def test_overflow_changes_nothing_and_names_the_branch(cls) -> None:  # type: ignore[no-untyped-def]
    unit = cls(4, 0b1111, 0x100, 1)
    before = repr(unit.entries)
    ex = Executed(0, 0x100, 0b1111, {0x104: 0b0011, 0x200: 0b1100}, control=True, rpc=0x300)
    with pytest.raises(TableOverflow, match="divergent branch at pc 0x00000100 needs more than 1"):
        unit.execute(ex)
    assert repr(unit.entries) == before and unit.waiting == 0


def test_dual_path_entries_never_hold_more_than_two_paths() -> None:
    """A branch with the entry's own RPC replaces the issuing path only when the groups and
    every other path that stays in the entry (a returned one included) fit in two paths;
    otherwise it pushes an entry (the hardware entry has two path slots)."""
    unit = DualPathStack(4, 0b1111, 0x100, 8)
    unit.execute(Executed(0, 0x100, 0b1111, {0x400: 0b1111}, control=True, call=True))
    unit.execute(Executed(2, 0x400, 0b1111, {0x404: 0b0011, 0x500: 0b1100}, rpc=0x600))
    unit.execute(Executed(5, 0x500, 0b1100, {0x104: 0b1100}, control=True, ret=True))
    assert [p.returned for p in unit.entries[-1].paths] == [False, True]
    unit.execute(Executed(4, 0x404, 0b0011, {0x408: 0b0001, 0x480: 0b0010}, rpc=0x600))
    assert all(len(e.paths) <= 2 for e in unit.entries)
    assert len(unit.entries) == 4


# -- the cycle twins -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"warp_size": 3, "stack_depth": 4}, "power of two"),
        ({"warp_size": 4, "stack_depth": 0}, "stack_depth must be in 1..64"),
        ({"warp_size": 4, "stack_depth": 4, "pc_width": 40}, "pc_width must be in 8..32"),
        ({"warp_size": 4, "stack_depth": 4, "policy": Policy.MP}, "policy must be dps or ppc"),
        ({"warp_size": 4, "stack_depth": 4, "hints": 1}, "hints=1 is not 0 or 1"),
    ],
)
def test_twin_parameters(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        DualPathStackParams(**kwargs)  # type: ignore[arg-type]


def test_params_derive_the_modes_and_the_sm_geometry_gives_them() -> None:
    """``policy`` and ``hints`` name the three designs (seed 003): DPS, PPC explicit, PPC
    implicit; the geometry's stack depth and warp size reach both stacks."""
    modes = {
        (p.paired, p.implicit)
        for p in (
            DualPathStackParams(policy=Policy.DPS, hints=False),
            DualPathStackParams(policy=Policy.DPS, hints=True),
            DualPathStackParams(policy=Policy.PPC, hints=True),
            DualPathStackParams(policy=Policy.PPC, hints=False),
        )
    }
    assert modes == {(False, False), (True, False), (True, True)}
    g = Geometry(warp_size=8, simd_width=4, stack_depth=6)
    assert unit_params(variant("sps"), g, UnitWidths(pc=16)) == SpsStackParams(8, 6, 16)
    assert unit_params(variant("dps"), g) == DualPathStackParams(8, 6, 32, Policy.DPS, True)
    assert unit_params(variant("ppc-implicit"), g).implicit
    assert DualPathStackParams.parse({"policy": "dps", "hints": "1"}).policy is Policy.DPS
    assert (
        SpsStackParams(stack_depth=6).sid_bits,
        DualPathStackParams(stack_depth=6).sid_bits,
    ) == (
        3,
        4,
    )


def test_twin_protocol_one_thing_per_cycle() -> None:
    twin = SpsStackParams(4, 4, 16).twin()
    twin.check_inputs(launch(twin, 0x100, 0b1111))  # type: ignore[arg-type]
    both = launch(twin, 0x100, 0b1111) | {"outcome__valid": 1}
    with pytest.raises(ValueError, match="launch, outcome and release in the same cycle"):
        twin.check_inputs(both)  # type: ignore[arg-type]
    same_pc = update(twin, StackUpdate(0, ((0x104, 1),))) | {
        "outcome__target_pc": (0x104, 0x104),
        "outcome__target_mask": (1, 2),
    }
    with pytest.raises(ValueError, match="ascending PC order, not 0x104 then 0x104"):
        twin.check_inputs(same_pc)  # type: ignore[arg-type]
    descending = same_pc | {"outcome__target_pc": (0x108, 0x104)}
    with pytest.raises(ValueError, match="ascending PC order, not 0x108 then 0x104"):
        twin.check_inputs(descending)  # type: ignore[arg-type]
    ascending = same_pc | {"outcome__target_pc": (0x104, 0x108)}
    twin.check_inputs(ascending)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no split slot 1"):
        twin.check_inputs(update(twin, StackUpdate(1, ((0x104, 1),))))  # type: ignore[arg-type]


def test_dual_path_twin_pops_in_clocks_of_its_own_and_refuses_input_then() -> None:
    """After the update that finishes the top entry the dual-path twin is busy for one clock
    per entry it pops (no split shows, the stack shrinks by one each clock), and refuses an
    outcome or a release in those clocks."""
    twin = DualPathStackParams(4, 4, 16, Policy.DPS, hints=True).twin()
    twin.step(launch(twin, 0x100, 0b1111))  # type: ignore[arg-type]
    twin.step(update(twin, StackUpdate(0, ((0x400, 0b1111),), rpc=0x104, call=True)))  # type: ignore[arg-type]
    branch = StackUpdate(0, ((0x500, 0b0011), (0x600, 0b1100)), rpc=RETURN)
    twin.step(update(twin, branch))  # type: ignore[arg-type]
    for path, mask in ((0, 0b0011), (1, 0b1100)):
        assert twin.outputs(twin.idle_inputs())["status__busy"] == 0
        twin.step(update(twin, StackUpdate(path, ((0x104, mask),), ret=True)))  # type: ignore[arg-type]
    seen = []
    for _ in range(3):
        out = twin.outputs(twin.idle_inputs())
        seen.append((out["status__busy"], out["splits__valid"], out["status__stack"]))
        if out["status__busy"]:
            with pytest.raises(ValueError, match="outcome__valid while the stack settles"):
                twin.step(update(twin, StackUpdate(0, ((0x108, 0b1111),))))  # type: ignore[arg-type]
        twin.step(twin.idle_inputs())
    # the branch's entry (both paths returned), then the call entry (returned on their
    # behalf): the caller's path at the return address
    assert seen == [(1, 0, 3), (1, 0, 2), (0, 0b01, 1)]
    assert twin.outputs(twin.idle_inputs())["splits__pc"][0] == 0x104


def test_twin_pc_codes_and_overflow_flag() -> None:
    """NEVER and RETURN are the two top codes of a PC port; an update that does not fit sets
    the sticky overflow flag and changes nothing; a launch clears it. The live lanes follow
    the exits."""
    params = SpsStackParams(4, 2, 16)
    twin = params.twin()
    assert (params.pc_out(NEVER), params.pc_out(RETURN)) == (0xFFFF, 0xFFFE)
    assert (params.pc_in(0xFFFF), params.pc_in(0xFFFE), params.pc_in(0x120)) == (
        NEVER,
        RETURN,
        0x120,
    )
    twin.step(launch(twin, 0x100, 0b1111))  # type: ignore[arg-type]
    twin.step(update(twin, StackUpdate(0, ((0x104, 0b0111),), exited=0b1000)))  # type: ignore[arg-type]
    assert twin.outputs(twin.idle_inputs())["status__live"] == 0b0111
    branch = StackUpdate(0, ((0x108, 0b0011), (0x200, 0b0100)), rpc=0x300)
    twin.step(update(twin, branch))  # type: ignore[arg-type]
    out = twin.outputs(twin.idle_inputs())
    assert out["status__overflow"] == 1 and out["status__stack"] == 1
    assert out["splits__pc"] == (0x104,) and out["splits__sid"] == (0,)
    twin.step(launch(twin, 0x100, 0b1111))  # type: ignore[arg-type]
    assert twin.outputs(twin.idle_inputs())["status__overflow"] == 0


# -- scenarios on the twins alone ------------------------------------------------------------

DIRECTED = [
    pytest.param(params, spec, id=f"{params.name}-{spec.name}-{params.label()}")
    for module in (sps_stimulus, dual_stimulus)
    for params in module.PARAM_SETS + module.EXTRA_PARAM_SETS
    for spec in applicable(params)
    if spec.name != "random"
]


@pytest.mark.parametrize(("params", "spec"), DIRECTED)
def test_directed_scenarios_on_the_golden_twin(params, spec) -> None:  # type: ignore[no-untyped-def]
    """The seed examples' assertions (seed 002 Fig 3, seed 003 Fig 4 explicit and implicit,
    ...) hold on the golden twin itself."""
    model = params.twin()
    assert run_golden(model, spec.make(model, rng_for(params, spec.name), 100)) > 5


RANDOM = [
    pytest.param(params, id=f"{params.name}-{params.label()}")
    for module in (sps_stimulus, dual_stimulus)
    for params in module.PARAM_SETS + module.EXTRA_PARAM_SETS
]


@pytest.mark.parametrize("params", RANDOM)
def test_random_stream_keeps_the_stack_consistent(params) -> None:  # type: ignore[no-untyped-def]
    """Invariants over a long random stream: the offered splits are disjoint live threads of
    the bottom entry, a dual-path entry has one or two paths, the depth stays in range."""
    block = params.name
    model = params.twin()
    scenario = random_stream(model, rng_for("invariants", params), 4000)
    step = next(scenario)
    while True:
        if isinstance(step, dict):
            out = model.step(step)
        else:
            out = model.outputs(model.idle_inputs())
            model.reset()
        unit = model.unit
        if unit is not None and unit.entries and not model.overflow:
            assert len(unit.entries) <= params.stack_depth
            splits = unit.splits()
            assert len(splits) <= params.slots
            seen = 0
            for s in splits:
                assert s.mask and not s.mask & seen and not s.mask & unit.waiting
                seen |= s.mask
            bottom = unit.entries[0]
            whole = sum(p.mask for p in bottom.paths) if block != "sps_stack" else bottom.mask
            assert seen & ~whole == 0
            if block == "dual_path_stack":
                assert all(1 <= len(e.paths) <= 2 for e in unit.entries)
        try:
            step = scenario.send(out)
        except StopIteration:
            break


# -- a k-way indirect jump on the SM ---------------------------------------------------------

JUMP_TABLE = """
_start:
    csrr t0, tid
    andi t1, t0, 3
    slli t1, t1, 3
    la   t2, CASES
    add  t2, t2, t1
{hint}
    jr   t2
CASES:
    li   a0, 10
    j    JOIN
    li   a0, 20
    j    JOIN
    li   a0, 30
    j    JOIN
    li   a0, 40
    j    JOIN
JOIN:
    add  a0, a0, t0
    li   a7, 93
    ecall
"""


@pytest.mark.parametrize(
    ("policy", "hints", "stack"),
    [(Policy.SPS, True, 5), (Policy.DPS, True, 4), (Policy.PPC, True, 4), (Policy.PPC, False, 4)],
)
def test_four_way_indirect_jump_on_the_sm(policy: Policy, hints: bool, stack: int) -> None:
    """``jr`` through a jump table sends the four threads to four cases: the SPS stack pushes
    four entries, the dual-path stack a chain of three (``stack_updates``); all reconverge at
    JOIN — at the hinted RPC, or where the paths meet in implicit PPC — and JOIN issues once
    for the whole warp."""
    image = assemble(JUMP_TABLE.format(hint="    rhint JOIN" if hints else ""), "jt.S")
    launch_config = LaunchConfig(grid=1, block=4, geometry=Geometry(warp_size=4, simd_width=4))
    reference = run(image, launch_config)
    result = run_sm(image, launch_config, SMConfig(policy=policy, hints=hints), trace=True)
    assert result.fault is None
    assert result.exit_codes.tolist() == reference.exit_codes.tolist() == [[10, 21, 32, 43]]
    assert result.metrics is not None
    assert result.metrics.counters.max_occupancy["stack"] == stack
    join = image.symbols["JOIN"]
    assert [r.mask for r in result.trace if r.pc == join] == [0b1111]
