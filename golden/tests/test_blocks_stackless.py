"""Golden stack-less control twin (seed 000 Sec 3, 4.1, Table 2, Listing 1): the port-level
twin reproduces the functional ``StacklessControl`` the golden SM uses, call for call, on the
SM's own outcomes (random programs included), the seed's worked examples hold on it, and its
port contract refuses what the hardware cannot do."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconverge.golden.blocks import StacklessBlock, StacklessParams, coalesce
from reconverge.golden.blocks.divergence import Executed
from reconverge.golden.blocks.stackless import StacklessControl
from reconverge.golden.isa import NUM_REGS
from reconverge.golden.testing.randprog import programs, render
from reconverge.testbench.lockstep import run_golden
from reconverge.testbench.scenarios import applicable, rng_for
from reconverge.testbench.scenarios import stackless as stimulus


@pytest.mark.parametrize("params", stimulus.PARAM_SETS + stimulus.EXTRA_PARAM_SETS)
def test_scenarios_on_the_twin(params) -> None:
    """Table 2 row by row, Listing 1 both ways, the golden SM's calls replayed, random
    programs: every scenario's own checks hold on the twin."""
    model = params.twin()
    for spec in applicable(params):
        assert run_golden(model, spec.make(model, rng_for(spec.name), 2000)) > 0


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.sampled_from([4, 8]), st.integers(1, 8))
def test_sm_outcomes_replay_on_the_twin(program, warp_size: int, threads: int) -> None:
    """On random programs (calls with caller frames, loops, early exits, barriers) every
    outcome the golden SM gives its stack-less unit satisfies the twin's port contract (in
    particular: a non-control instruction sends its lanes to PC + 4, the local increment) and
    the twin's split equals the SM unit's after every call."""
    model = StacklessParams(warp_size, 32, 32).twin()
    scenario = stimulus.replay(model, render(program), min(threads, warp_size))
    assert run_golden(model, scenario) > 0


def _start(twin: StacklessBlock, mask: int, pc: int, sp: int) -> dict:
    return twin.idle_inputs() | {
        "launch__valid": 1,
        "launch__mask": mask,
        "launch__pc": pc,
        "launch__sp": sp,
    }


def _outcome(twin: StacklessBlock, **ports) -> dict:
    """An outcome (or with ``lanes``, a release) given by the member names."""
    inputs = twin.idle_inputs() | {"outcome__valid": 1}
    for name, value in ports.items():
        inputs["release__lanes" if name == "lanes" else f"outcome__{name}"] = value
    return inputs


def _split(out: dict) -> tuple[int, int]:
    return out["splits__pc"][0], out["splits__mask"][0]


def _update(twin: StacklessBlock, inputs: dict) -> tuple[tuple[int, int], int]:
    """Clock ``inputs`` in, then idle cycles while the control is busy (no split shows in
    them, and the tree is the control's in the first); returns the split and the clocks c."""
    twin.clock(inputs)
    clocks, idle = 1, twin.idle_inputs()
    while (out := twin.outputs(idle))["status__busy"]:
        assert not out["splits__valid"] and out["coalesce__granted"] == (clocks > 1)
        twin.clock(idle)
        clocks += 1
    return _split(out), clocks


def test_local_increment_keeps_the_split_after_an_sp_write() -> None:
    """Sec 4.1: no arbitration after a non-control instruction. When it raises the split's SP
    above the SP of threads waiting elsewhere, the split still continues (the minimum is taken
    over its own threads), and only the next control instruction lets the others run. The
    clocks are the hardware's: an arbitration 2 (the tree from the registers), an SP write 3
    (the tree over the split, then the comparison), a local increment 1."""
    twin = StacklessParams(4, 8, 4).twin()
    twin.clock(_start(twin, 0b1111, 4, 8))
    branch = _outcome(twin, control=1, next_mask=0b1111, next_pc=(8, 8, 20, 20))
    assert _update(twin, branch) == ((8, 0b0011), 2)
    raise_sp = _outcome(
        twin, next_mask=0b0011, next_pc=(12, 12, 0, 0), sp_we=0b0011, sp_wdata=(9, 9, 0, 0)
    )
    assert _update(twin, raise_sp) == ((12, 0b0011), 3)  # (9, 12) > (8, 20): no arbitration
    alu = _outcome(twin, next_mask=0b0011, next_pc=(16, 16, 0, 0))
    assert _update(twin, alu) == ((16, 0b0011), 1)
    jump = _outcome(twin, control=1, next_mask=0b0011, next_pc=(20, 20, 0, 0))
    assert _update(twin, jump) == ((20, 0b1100), 2)


def test_the_idealised_control_updates_in_one_clock() -> None:
    """The seeds' worked examples (``pipelined`` off): every update one clock, as Table 2's
    rows; the hardware's control the clocks above."""
    regs = np.zeros((4, NUM_REGS), np.uint32)
    for pipelined, clocks in ((False, (1, 1, 1, 1)), (True, (2, 3, 1, 2))):
        unit = StacklessControl(4, 0b1111, 4, regs, pipelined=pipelined)
        got = (
            unit.execute(Executed(0, 4, 0b1111, {8: 0b0011, 20: 0b1100}, control=True)),
            unit.execute(Executed(0, 8, 0b0011, {12: 0b0011}, sp_written=True)),
            unit.execute(Executed(0, 12, 0b0011, {16: 0b0011})),
            unit.execute(Executed(0, 16, 0b0011, exited=0b0011)),
        )
        assert got == clocks


def test_twin_is_the_functional_model() -> None:
    """The twin's state is a :class:`StacklessControl`; its outputs are that unit's split."""
    twin = StacklessParams(4, 8, 4).twin()
    twin.clock(_start(twin, 0b0111, 4, 3))
    assert isinstance(twin.unit, StacklessControl)
    out = twin.outputs(twin.idle_inputs())
    assert out == {
        "splits__valid": 1,
        "splits__pc": (4,),
        "splits__mask": (0b0111,),
        "splits__sid": (0,),
        "status__busy": 0,
        "status__overflow": 0,
        "status__live": 0b0111,
        "status__waiting": 0,
        "status__thread_pc": (4, 4, 4, 4),
        "coalesce__granted": 1,  # the tree is free for the LSU, with or without a request
        "coalesce__min_key": 0,
        "coalesce__mask": 0,
    }
    twin.reset()
    assert twin.outputs(twin.idle_inputs())["splits__valid"] == 0


@pytest.mark.parametrize(
    ("ports", "message"),
    [
        ({"next_mask": 0b0011, "next_pc": (12, 12, 0, 0)}, "PC \\+ 4"),
        ({"next_mask": 0b0001, "next_pc": (8, 0, 0, 0)}, "must split the active mask"),
        ({"next_mask": 0b0011, "exited": 0b0001, "next_pc": (8, 8, 0, 0)}, "must split"),
        ({"next_mask": 0b0011, "next_pc": (8, 8, 0, 0), "sp_we": 0b0100}, "outside the"),
        ({"next_mask": 0b0011, "next_pc": (8, 8, 0, 0), "lanes": 1}, "not waiting"),
        ({"next_mask": 0b0011, "next_pc": (8, 8, 0, 0), "slot": 1}, "active in that slot"),
    ],
)
def test_twin_rejects_what_the_hardware_cannot_do(ports, message: str) -> None:
    twin = StacklessParams(4, 8, 4).twin()
    twin.clock(_start(twin, 0b0011, 4, 3))
    with pytest.raises(ValueError, match=message):
        twin.clock(_outcome(twin, **ports))


def test_twin_rejects_bad_parameters_and_inputs() -> None:
    with pytest.raises(ValueError, match="pc_width"):
        StacklessParams(4, 2, 4)
    twin = StacklessParams(4, 8, 4).twin()
    with pytest.raises(ValueError, match="no split is active"):
        twin.clock(_outcome(twin))
    with pytest.raises(ValueError, match="launch with outcome__valid not idle"):
        twin.clock(_outcome(twin) | {"launch__valid": 1})
    twin.clock(_start(twin, 0b11, 8, 0))
    twin.clock(_outcome(twin, barrier=0b01, next_mask=0b10, next_pc=(0, 12), control=1))
    with pytest.raises(ValueError, match="release__lanes while the control is busy"):
        twin.clock(twin.idle_inputs() | {"release__lanes": 1})
    with pytest.raises(ValueError, match="outcome__valid while the control is busy"):
        twin.clock(_outcome(twin, next_mask=0b10, next_pc=(0, 16)))
    twin.clock(_start(twin, 1, 252, 0))
    twin.clock(_outcome(twin, barrier=1))
    twin.clock(twin.idle_inputs())
    with pytest.raises(ValueError, match="overflows pc_width"):
        twin.clock(twin.idle_inputs() | {"release__lanes": 1})


# -- seed 000 Sec 4.3: the tree serves the load/store unit ------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    warp_size=st.integers(1, 8),
    data=st.data(),
)
def test_granted_requests_coalesce_as_the_arbiter_does(warp_size: int, data) -> None:
    """A memory instruction replayed on the ``coalesce`` ports until every lane is served, with
    control outcomes in between (some arbitrate, some are local increments): the passes the
    tree grants are exactly ``coalesce(keys, requesting)`` (seed 000 Sec 4.2), and the cycle
    after an update that arbitrates (the control's tree clock) grants nothing."""
    twin = StacklessParams(warp_size, 16, 4, coalesce_width=6).twin()
    every = (1 << warp_size) - 1
    keys = tuple(data.draw(st.lists(st.integers(0, 63), min_size=warp_size, max_size=warp_size)))
    requesting = data.draw(st.integers(1, every))
    twin.clock(_start(twin, every, 4, 3))
    pending, passes, pc, kind = requesting, [], 4, "idle"
    while pending:
        arbitrated = kind in ("branch", "sp")
        busy = twin.outputs(twin.idle_inputs())["status__busy"]
        kind = "idle" if busy else data.draw(st.sampled_from(["idle", "alu", "branch", "sp"]))
        inputs = twin.idle_inputs() if kind == "idle" else _outcome(twin, next_mask=every)
        if kind != "idle":
            target = pc + 4 if kind != "branch" else data.draw(st.sampled_from([8, 40, 80]))
            inputs["outcome__next_pc"] = (target,) * warp_size
            inputs["outcome__control"] = int(kind == "branch")
            inputs["outcome__sp_we"] = every if kind == "sp" else 0
            inputs["outcome__sp_wdata"] = (3,) * warp_size
            pc = target
        inputs |= {"coalesce__valid": pending, "coalesce__key": keys}
        out = twin.step(inputs)
        assert out["coalesce__granted"] == (not arbitrated)
        assert bool(out["coalesce__mask"]) == bool(out["coalesce__granted"])
        if out["coalesce__granted"]:
            passes.append((out["coalesce__min_key"], out["coalesce__mask"]))
            pending &= ~out["coalesce__mask"]
    assert passes == coalesce(list(keys), requesting)
