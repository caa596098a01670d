"""The energy model of a block driven alone (``golden/cost/block_energy.py``): which inputs are
which event, counted by hand on short input streams, and the pricing arithmetic."""

from __future__ import annotations

import pytest

from reconverge.golden.blocks import SqueezerParams
from reconverge.golden.cost.block_energy import (
    BLOCK_STAGES,
    block_events,
    block_toggles,
    block_transistors,
)
from reconverge.golden.cost.energy import EnergyModel, technology


def _unit(**ports: int) -> dict[str, int]:
    idle = {"launch__valid": 0, "outcome__valid": 0, "outcome__cont": 0, "release__lanes": 0,
            "outcome__control": 0, "outcome__sp_we": 0, "coalesce__valid": 0}  # fmt: skip
    return idle | ports


def test_every_block_of_the_registry_has_a_stage() -> None:
    from reconverge.hdl.registry import BLOCKS

    assert set(BLOCK_STAGES) == set(BLOCKS)
    with pytest.raises(ValueError, match="no energy model of the block nope"):
        block_events("nope", [])


def test_a_stacks_events() -> None:
    """An instruction's update spread over two cycles is one warp instruction and two unit
    updates; a launch and a release are updates, not instructions; a reset is a cycle."""
    cycles = [
        _unit(launch__valid=1),
        _unit(outcome__valid=1),
        _unit(outcome__valid=1, outcome__cont=1),
        _unit(),
        None,
        _unit(release__lanes=0b100),
    ]
    counts = block_events("sps_stack", cycles)
    assert counts["cycles"] == 6
    assert counts["warp_instructions"] == 1
    assert counts["unit_updates"] == 4
    assert counts["arbitrations"] == counts["memory_transactions"] == 0


def test_the_stackless_controls_tree() -> None:
    """The tree evaluates for an outcome with a control or an SP write; the coalescing port's
    cycles with requests are transactions, a request that was not there before an access (a
    reset forgets them)."""
    cycles = [
        _unit(outcome__valid=1),  # a plain instruction: no arbitration
        _unit(outcome__valid=1, outcome__control=1),
        _unit(outcome__valid=1, outcome__sp_we=0b1),
        _unit(outcome__control=1),  # not valid: nothing
        _unit(coalesce__valid=0b0111),
        _unit(coalesce__valid=0b0110),
        _unit(coalesce__valid=0b1110),
        None,
        _unit(coalesce__valid=0b0010),
    ]
    counts = block_events("stackless", cycles)
    assert counts["warp_instructions"] == 3
    assert counts["arbitrations"] == 2
    assert counts["memory_transactions"] == 4
    assert counts["lsu_accesses"] == 3 + 0 + 1 + 1


def test_squeezer_scoreboard_and_arbiter_events() -> None:
    warps = [{"warp__valid": v, "warp__mask": 0xF} for v in (1, 0, 1, 1)]
    assert block_events("squeezer", warps)["squeezes"] == 3
    issues = [{"issue__valid": v} for v in (1, 1, 0)]
    for name in ("scoreboard", "masked_scoreboard"):
        counts = block_events(name, issues)
        assert counts["warp_instructions"] == counts["reservations"] == 2
    requests = [{"valid": v, "key": (0,)} for v in (0b11, 0b01, 0, 0b01)]
    counts = block_events("arbiter", requests)
    assert (counts["memory_transactions"], counts["lsu_accesses"]) == (3, 3)


def test_a_block_is_priced_at_its_stages_rates() -> None:
    """A fixed rate per event, and a rate per event per transistor times the block's
    transistors; events of other stages cost nothing."""
    params = SqueezerParams(16, 4, 0)
    em = EnergyModel(
        toggles={"squeezes": {"squeezer": 10.0}, "alu_ops": {"lane": 99.0}},
        per_transistor={"cycles": {"squeezer": 0.01}},
        technology=technology(),
    )
    counts = {"cycles": 100, "squeezes": 40, "alu_ops": 7}
    t = block_transistors(params)
    assert t > 0
    assert block_toggles(params, counts, em) == pytest.approx(
        {"squeezes": 400.0, "cycles": 100 * 0.01 * t}
    )
