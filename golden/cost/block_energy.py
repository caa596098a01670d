"""The energy model applied to one HDL block driven alone (issue 11; docs/energy.md, "The
blocks alone"): the events a block's inputs carry, cycle by cycle, named as the SM's events
(:data:`~reconverge.golden.cost.energy.EVENT_STAGES`), priced with the rates of the SM stage
the block is part of.

A block is priced as its stage would be if the stage were only that block: the stage's fixed
rate per event plus its rate per event per transistor times the block's transistors in the area
model. Nothing is fitted to the blocks: their RTL activity (``golden/cost/block_activity.py``)
tests how far the SM's rates carry to a unit driven by a scenario instead of a kernel.

What counts as an event, per block (one cycle's inputs):

* a divergence unit (``sps_stack``, ``dual_path_stack``, ``split_tables``, ``stackless``): an
  outcome that starts an instruction's update (``outcome.valid`` without ``cont``) is a *warp
  instruction*, as the SM sends every issued instruction's outcome to its unit; a launch, an
  outcome or a release is a *unit update* (the unit's state is written); the stack-less
  control's tree evaluates min(SP:PC) for an outcome with a control or an SP write (an
  *arbitration*, seed 000 Sec 4.1), and its ``coalesce`` port is the LSU's (seed 000 Sec 4.3):
  a cycle with requests is a *memory transaction* (the tree picks one line), a request that
  was not there the cycle before a thread's *LSU access*;
* ``squeezer``: a valid warp is a *squeeze* (seed 001);
* ``scoreboard`` / ``masked_scoreboard``: an issue is a *warp instruction* and the
  *reservation* of its destination (seed 002 Sec 4.1);
* ``arbiter`` (the LSU's coalescing tree): as the stack-less control's ``coalesce`` port.

Every cycle is a *cycle* (the stage's clocked switching).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from reconverge.golden.blocks.base import BlockParams
from reconverge.golden.cost.blocks import inventory
from reconverge.golden.cost.energy import EnergyModel, model
from reconverge.golden.cost.model import area

#: The SM stage of each block (:func:`reconverge.golden.cost.sm.stage`'s names): whose rates
#: price it.
BLOCK_STAGES: dict[str, str] = {
    "sps_stack": "unit",
    "dual_path_stack": "unit",
    "split_tables": "unit",
    "stackless": "unit",
    "squeezer": "squeezer",
    "scoreboard": "scoreboard",
    "masked_scoreboard": "scoreboard",
    "arbiter": "unit",  # the grouping trees and the stack-less control's tree
}


def _requests(inputs: Mapping[str, Any], prefix: str, before: int, counts: dict[str, int]) -> int:
    """Count a coalescing tree's cycle (valid bits ``<prefix>valid``); return its requests."""
    valid = int(inputs[f"{prefix}valid"])
    if valid:
        counts["memory_transactions"] += 1
        counts["lsu_accesses"] += (valid & ~before).bit_count()
    return valid


def block_events(name: str, cycles: Iterable[Mapping[str, Any] | None]) -> dict[str, int]:
    """The events of block ``name`` over ``cycles``: each cycle's inputs (golden port names),
    or None for a reset cycle (module docstring)."""
    if name not in BLOCK_STAGES:
        raise ValueError(f"no energy model of the block {name}")
    keys = ("cycles", "warp_instructions", "unit_updates", "arbitrations", "squeezes",
            "reservations", "memory_transactions", "lsu_accesses")  # fmt: skip
    counts = dict.fromkeys(keys, 0)
    requests = 0
    for inputs in cycles:
        counts["cycles"] += 1
        if inputs is None:
            requests = 0
            continue
        if name == "squeezer":
            counts["squeezes"] += int(inputs["warp__valid"])
        elif name.endswith("scoreboard"):
            issue = int(inputs["issue__valid"])
            counts["warp_instructions"] += issue
            counts["reservations"] += issue
        elif name == "arbiter":
            requests = _requests(inputs, "", requests, counts)
        else:
            outcome = int(inputs["outcome__valid"])
            counts["warp_instructions"] += outcome and not inputs.get("outcome__cont", 0)
            written = int(inputs["launch__valid"]) or outcome or int(inputs["release__lanes"])
            counts["unit_updates"] += bool(written)
            if name == "stackless":
                control = inputs["outcome__control"] or inputs["outcome__sp_we"]
                counts["arbitrations"] += bool(outcome and control)
                requests = _requests(inputs, "coalesce__", requests, counts)
    return counts


def block_transistors(params: BlockParams) -> float:
    """The block's transistors in the area model."""
    return area(inventory(params))["total"].transistors


def block_toggles(
    params: BlockParams, counts: Mapping[str, int], energy_model: EnergyModel | None = None
) -> dict[str, float]:
    """The model's cell toggles of the block of ``params`` over a run with event ``counts``
    (:func:`block_events`), by event."""
    em = energy_model or model()
    stage = BLOCK_STAGES[params.name]
    size = block_transistors(params)
    out: dict[str, float] = {}
    for scale, rates in ((1.0, em.toggles), (size, em.per_transistor)):
        for event, per_stage in rates.items():
            if stage in per_stage and counts.get(event):
                out[event] = out.get(event, 0.0) + counts[event] * scale * per_stage[stage]
    return out
