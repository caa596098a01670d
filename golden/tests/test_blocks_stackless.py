"""Golden stack-less control twin (seed 000 Sec 3, 4.1, Table 2, Listing 1): the port-level
twin reproduces the functional ``StacklessControl`` the golden SM uses, call for call, on the
SM's own outcomes (random programs included), the seed's worked examples hold on it, and its
port contract refuses what the hardware cannot do."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconverge.golden.blocks import StacklessBlock
from reconverge.golden.blocks.stackless import StacklessControl
from reconverge.golden.tests.randprog import programs, render
from reconverge.testbench.lockstep import run_golden
from reconverge.testbench.scenarios import applicable, rng_for
from reconverge.testbench.scenarios import stackless as stimulus


@pytest.mark.parametrize("params", stimulus.PARAM_SETS + stimulus.EXTRA_PARAM_SETS)
def test_scenarios_on_the_twin(params) -> None:
    """Table 2 row by row, Listing 1 both ways, the golden SM's calls replayed, random
    programs: every scenario's own checks hold on the twin."""
    model = StacklessBlock(**params)
    for spec in applicable("stackless", model):
        assert run_golden(model, spec.make(model, rng_for(spec.name), 2000)) > 0


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.sampled_from([4, 8]), st.integers(1, 8))
def test_sm_outcomes_replay_on_the_twin(program, warp_size: int, threads: int) -> None:
    """On random programs (calls with caller frames, loops, early exits, barriers) every
    outcome the golden SM gives its stack-less unit satisfies the twin's port contract (in
    particular: a non-control instruction sends its lanes to PC + 4, the local increment) and
    the twin's split equals the SM unit's after every call."""
    model = StacklessBlock(warp_size, 32, 32)
    scenario = stimulus.replay(model, render(program), min(threads, warp_size))
    assert run_golden(model, scenario) > 0


def _outcome(twin: StacklessBlock, **ports) -> dict:
    return dict(twin.idle_inputs(), ex_valid=1, **ports)


def test_local_increment_keeps_the_split_after_an_sp_write() -> None:
    """Sec 4.1: no arbitration after a non-control instruction. When it raises the split's SP
    above the SP of threads waiting elsewhere, the split still continues (the minimum is taken
    over its own threads), and only the next control instruction lets the others run."""
    twin = StacklessBlock(4, 8, 4)
    twin.clock(dict(twin.idle_inputs(), start=1, start_mask=0b1111, start_pc=4, start_sp=8))
    branch = _outcome(twin, ex_control=1, ex_target=0b1111, ex_next_pc=(8, 8, 20, 20))
    twin.clock(branch)
    assert twin.outputs(branch)["active"] == 0b0011
    raise_sp = _outcome(
        twin, ex_target=0b0011, ex_next_pc=(12, 12, 0, 0), sp_we=0b0011, sp_wdata=(9, 9, 0, 0)
    )
    twin.clock(raise_sp)  # (9, 12) > (8, 20), but no arbitration
    assert (twin.outputs(raise_sp)["pc"], twin.outputs(raise_sp)["active"]) == (12, 0b0011)
    jump = _outcome(twin, ex_control=1, ex_target=0b0011, ex_next_pc=(16, 16, 0, 0))
    twin.clock(jump)
    assert (twin.outputs(jump)["pc"], twin.outputs(jump)["active"]) == (20, 0b1100)


def test_twin_is_the_functional_model() -> None:
    """The twin's state is a :class:`StacklessControl`; its outputs are that unit's split."""
    twin = StacklessBlock(4, 8, 4)
    twin.clock(dict(twin.idle_inputs(), start=1, start_mask=0b0111, start_pc=4, start_sp=3))
    assert isinstance(twin.unit, StacklessControl)
    out = twin.outputs(twin.idle_inputs())
    assert out == {
        "valid": 1,
        "pc": 4,
        "active": 0b0111,
        "live": 0b0111,
        "waiting": 0,
        "thread_pc": (4, 4, 4, 4),
    }
    twin.reset()
    assert twin.outputs(twin.idle_inputs())["valid"] == 0


@pytest.mark.parametrize(
    ("ports", "message"),
    [
        ({"ex_target": 0b0011, "ex_next_pc": (12, 12, 0, 0)}, "PC \\+ 4"),
        ({"ex_target": 0b0001, "ex_next_pc": (8, 0, 0, 0)}, "must split the active mask"),
        ({"ex_target": 0b0011, "ex_exited": 0b0001, "ex_next_pc": (8, 8, 0, 0)}, "must split"),
        ({"ex_target": 0b0011, "ex_next_pc": (8, 8, 0, 0), "sp_we": 0b0100}, "outside the"),
        ({"ex_target": 0b0011, "ex_next_pc": (8, 8, 0, 0), "bar_release": 1}, "not waiting"),
    ],
)
def test_twin_rejects_what_the_hardware_cannot_do(ports, message: str) -> None:
    twin = StacklessBlock(4, 8, 4)
    twin.clock(dict(twin.idle_inputs(), start=1, start_mask=0b0011, start_pc=4, start_sp=3))
    with pytest.raises(ValueError, match=message):
        twin.clock(_outcome(twin, **ports))


def test_twin_rejects_bad_parameters_and_inputs() -> None:
    with pytest.raises(ValueError, match="pc_width"):
        StacklessBlock(4, 2, 4)
    twin = StacklessBlock(4, 8, 4)
    with pytest.raises(ValueError, match="no split is active"):
        twin.clock(_outcome(twin))
    with pytest.raises(ValueError, match="start with ex_valid not idle"):
        twin.clock(_outcome(twin, start=1))
    twin.clock(dict(twin.idle_inputs(), start=1, start_mask=1, start_pc=252, start_sp=0))
    twin.clock(_outcome(twin, ex_barrier=1))
    with pytest.raises(ValueError, match="overflows pc_width"):
        twin.clock(dict(twin.idle_inputs(), bar_release=1))
