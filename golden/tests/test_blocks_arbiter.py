"""Golden arbiter twin (seed 000 Sec 4.1-4.3, Fig 4b, Table 2): its functional core against a
brute-force definition, its cycle behaviour, and the seed's worked example."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reconverge.golden.blocks import ArbiterParams, coalesce, line_key, pc_key, reduce
from reconverge.golden.blocks.arbiter import register_levels
from reconverge.testbench.lockstep import run_golden
from reconverge.testbench.scenarios import arbiter as stimulus
from reconverge.testbench.scenarios import rng_for


@st.composite
def keys_and_valid(draw: st.DrawFn, max_n: int = 64) -> tuple[list[int], int, int]:
    n = draw(st.integers(1, max_n))
    width = draw(st.integers(1, 40))
    # a small pool makes ties common, as in real PCs and cache lines
    pool = draw(st.lists(st.integers(0, (1 << width) - 1), min_size=1, max_size=4))
    keys = draw(
        st.lists(st.sampled_from(pool) | st.integers(0, (1 << width) - 1), min_size=n, max_size=n)
    )
    valid = draw(st.integers(0, (1 << n) - 1))
    return keys, valid, width


@given(keys_and_valid())
def test_reduce_is_min_and_argmin_set(case: tuple[list[int], int, int]) -> None:
    keys, valid, _ = case
    chosen = [k for i, k in enumerate(keys) if valid >> i & 1]
    key, mask, found = reduce(keys, valid)
    assert found == bool(chosen)
    assert key == (min(chosen) if chosen else 0)
    assert mask == sum(1 << i for i, k in enumerate(keys) if valid >> i & 1 and k == key)


@given(keys_and_valid(), st.integers(0, 4))
def test_arbiter_outputs_compute_delayed_by_latency(case, every: int) -> None:
    keys, valid, width = case
    arbiter = ArbiterParams(len(keys), width, every).twin()
    idle = arbiter.outputs(arbiter.idle_inputs())
    inputs = {"valid": valid, "key": tuple(keys)}
    expected = arbiter.compute(inputs)
    seen = [arbiter.step(inputs) for _ in range(arbiter.latency + 1)]
    assert seen[-1] == expected
    assert all(s == {"out_valid": 0, "min_key": 0, "mask": 0} == idle for s in seen[:-1])
    arbiter.reset()
    assert arbiter.outputs(inputs) == (expected if arbiter.latency == 0 else idle)


@given(st.integers(0, 7), st.integers(1, 8))
def test_register_levels(depth: int, every: int) -> None:
    levels = register_levels(depth, every)
    assert levels[-1] == depth  # the root is always registered
    assert len(levels) == max(1, -(-depth // every))
    gaps = [b - a for a, b in zip((0, *levels), levels, strict=False)]
    assert all(g <= every for g in gaps)
    assert register_levels(depth, 0) == ()


@given(keys_and_valid(max_n=32))
def test_coalesce_serves_each_line_once_in_order(case) -> None:
    keys, valid, _ = case
    passes = coalesce(keys, valid)
    lines = [line for line, _ in passes]
    assert lines == sorted({k for i, k in enumerate(keys) if valid >> i & 1})
    served = 0
    for line, mask in passes:
        assert mask & served == 0
        assert all(keys[i] == line for i in range(len(keys)) if mask >> i & 1)
        served |= mask
    assert served == valid


def test_keys() -> None:
    assert pc_key(3, 0x10, 8) == 0x310
    assert line_key(0x1234, 16) == 0x123
    with pytest.raises(ValueError, match="does not fit"):
        pc_key(0, 0x100, 8)
    with pytest.raises(ValueError, match="power of two"):
        line_key(0, 12)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": 0, "key_width": 8}, "1..1024 inputs"),
        ({"n": 4, "key_width": 0}, "key_width"),
        ({"n": 4, "key_width": 8, "pipeline_every": -1}, "pipeline_every"),
    ],
)
def test_bad_parameters(kwargs, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ArbiterParams(**kwargs)


@pytest.mark.parametrize("params", stimulus.PARAM_SETS)
def test_seed000_table2_on_golden(params) -> None:
    """seed 000 Table 2 row by row: common PC = min(SP:PC), active mask, NPCs."""
    model = params.twin()
    cycles = run_golden(model, stimulus.table2(model, rng_for(), 0))
    assert cycles == len(stimulus.TABLE2) * (model.latency + 1)


def test_seed000_listing1_and_coalescing_on_golden() -> None:
    model = ArbiterParams(8, 12, 1).twin()
    run_golden(model, stimulus.listing1_sp(model, rng_for(), 0))
    run_golden(model, stimulus.coalescing(model, rng_for("c"), 500))
