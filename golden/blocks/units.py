"""The divergence unit of a policy variant: the parameters of its block in an SM and the golden
unit of one warp, made from the variant's entry in :mod:`reconverge.golden.policies` (its
``unit``, a block name, and the ``unit_params`` it fixes). Golden's cycle-level SM, the HDL
SM (``hdl/sm/divergence.py``, which builds the block of the same name from the HDL registry)
and the area model all derive their unit here, so a variant is dispatched in one place."""

from __future__ import annotations

import functools

import numpy as np

from reconverge.golden.blocks.divergence import DivergenceUnit
from reconverge.golden.blocks.divergence_ports import DivergenceParams, UnitWidths
from reconverge.golden.blocks.split_tables import SplitTablesParams
from reconverge.golden.blocks.stack_twins import DualPathStackParams, SpsStackParams
from reconverge.golden.blocks.stackless import StacklessParams
from reconverge.golden.geometry import Geometry
from reconverge.golden.params import PC_WIDTH, SP_WIDTH, SMParams
from reconverge.golden.policies import Variant

#: The parameter dataclass of each divergence block, by its name (``Variant.unit``).
UNITS: dict[str, type[DivergenceParams]] = {
    p.name: p for p in (SpsStackParams, StacklessParams, DualPathStackParams, SplitTablesParams)
}


def unit_params(
    variant: Variant, geometry: Geometry, widths: UnitWidths | None = None
) -> DivergenceParams:
    """The parameters of ``variant``'s divergence block in an SM of ``geometry``; ValueError
    for a variant without one (dynamic warp formation has a warp pool instead)."""
    if not variant.hardware:
        raise ValueError(f"{variant.name} has no divergence unit (it is golden's warp pool)")
    return UNITS[variant.unit].of(geometry, widths or UnitWidths(), **variant.unit_params)


def make_unit(
    variant: Variant,
    geometry: Geometry,
    valid: int,
    entry: int,
    regs: np.ndarray,
    *,
    pipelined: bool = True,
) -> DivergenceUnit:
    """The golden divergence unit of one warp of an SM running ``variant`` (``pipelined``:
    :meth:`DivergenceParams.make_unit`)."""
    return unit_params(variant, geometry).make_unit(valid, entry, regs, pipelined=pipelined)


#: Entries of each split slot's instruction buffer in the SM (``hdl.sm.fetch``: the read port's
#: output and a copy of it), each checked against the scoreboard every cycle.
BUFFER_ENTRIES = 2

#: Up to this warp size the SM's grouping stage (``hdl.sm.divergence._Groups``) compares every
#: two threads' next PCs at once, its W(W - 1) / 2 comparisons shared by the three groups;
#: above it, arbiter trees (fewer comparators, one comparator delay per level).
PAIRWISE_GROUPING = 8


def sm_lookups(params: SMParams) -> int:
    """The SM's scoreboard lookup ports: one per instruction-buffer entry of every split slot
    of every warp slot (``hdl.sm.top``: the issue stage checks both entries of a slot in
    parallel with the compare that says which one holds the split's PC)."""
    return BUFFER_ENTRIES * params.geometry.warps * sm_unit(params).slots


@functools.cache
def sm_unit(params: SMParams) -> DivergenceParams:
    """The divergence block of each warp slot of the hardware SM of ``params``: its split slots
    (``slots``) and split-id bits (``sid_bits``) size the SM's fetch, scheduler and ports."""
    widths = UnitWidths(PC_WIDTH, SP_WIDTH, params.line_key_bits)
    return unit_params(params.config.variant, params.geometry, widths)
