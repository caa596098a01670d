"""A block's RTL activity driven alone (``golden/cost/block_activity.py``): the measurement is
reproducible (the shipped row of a block is what a new measurement gives), its events are the
scenario's, and docs/energy.md's block section prices the shipped rows."""

from __future__ import annotations

import json

import pytest

from reconverge.golden.cost.block_activity import (
    CYCLES,
    PREFIX,
    SCENARIO,
    block_activity,
    scenario_inputs,
)
from reconverge.golden.cost.block_energy import block_events, block_toggles
from reconverge.golden.cost.energy import ENERGY, model
from reconverge.golden.cost.power import BLOCK_ACTIVITY, block_section
from reconverge.hdl.registry import lookup


def _shipped(block: str, values: dict[str, object]) -> dict[str, object]:
    rows = json.loads(BLOCK_ACTIVITY.read_text())["rows"]
    return next(r for r in rows if r["block"] == block and r["params"] == values)


@pytest.mark.rtl
@pytest.mark.synth
def test_a_shipped_row_is_what_a_measurement_gives() -> None:
    """The squeezer at its first area parameter set, measured again: the same toggles, bits,
    cells and events as golden/cost/block_activity.json (Verilator's counts are exact)."""
    spec = lookup("squeezer")
    params = spec.make(spec.area_sets[0])
    activity, events = block_activity(params)
    row = _shipped("squeezer", params.values())
    assert activity.json() == row["activity"]
    assert events == row["events"]
    assert activity.toggles > activity.bits  # it switched, beyond the first evaluation's rises
    # the events are those of the scenario's inputs after the prefix
    inputs = scenario_inputs(params, SCENARIO, CYCLES)
    assert events == block_events("squeezer", inputs[PREFIX:])
    assert events["squeezes"] == sum(1 for i in inputs[PREFIX:] if i and i["warp__valid"])


def test_every_block_is_measured_at_its_area_parameter_sets() -> None:
    from reconverge.hdl.registry import BLOCKS

    document = json.loads(BLOCK_ACTIVITY.read_text())
    measured = {(r["block"], json.dumps(r["params"], sort_keys=True)) for r in document["rows"]}
    expected = {
        (name, json.dumps(spec.make(values).values(), sort_keys=True))
        for name, spec in BLOCKS.items()
        for values in spec.area_sets
    }
    assert measured == expected


def test_the_block_section_prices_the_shipped_rows() -> None:
    document = json.loads(BLOCK_ACTIVITY.read_text())
    text = "\n".join(block_section(document, model()))
    row = document["rows"][0]
    params = lookup(row["block"]).make(row["params"])
    ratio = (
        sum(block_toggles(params, row["events"], model()).values()) / row["activity"]["weighted"]
    )
    assert f"| {ratio:.2f} |" in text
    assert ENERGY.exists()


def test_first_cycles_is_a_prefix_that_passes_the_outputs_on() -> None:
    from reconverge.testbench.lockstep import first_cycles

    seen: list[object] = []

    def scenario(model: object, n: int):  # type: ignore[no-untyped-def]
        for i in range(n):
            seen.append((yield {"i": i}))

    short = first_cycles(scenario(None, 5), 3)
    assert next(short) == {"i": 0}
    assert short.send({"o": 0}) == {"i": 1}
    assert short.send({"o": 1}) == {"i": 2}
    with pytest.raises(StopIteration):
        short.send({"o": 2})
    assert seen == [{"o": 0}, {"o": 1}]  # the scenario never ran its fourth cycle
    assert list(first_cycles(scenario(None, 2), 5)) == [{"i": 0}, {"i": 1}]
