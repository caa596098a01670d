"""The model's inventory of each HDL block, from its parameter dataclass alone (the counts
follow the structure each block's docstring in ``hdl/blocks`` describes)."""

from __future__ import annotations

from collections.abc import Callable

from reconverge.golden.blocks import BlockParams
from reconverge.golden.cost.datapath import arbiter, squeezer
from reconverge.golden.cost.divergence import (
    dual_path_stack,
    split_tables,
    sps_stack,
    stackless,
)
from reconverge.golden.cost.inventory import Inventory
from reconverge.golden.cost.scoreboard import masked_scoreboard, scoreboard

#: Every block's inventory by registry name.
INVENTORIES: dict[str, Callable[..., Inventory]] = {
    "arbiter": arbiter,
    "squeezer": squeezer,
    "stackless": stackless,
    "sps_stack": sps_stack,
    "dual_path_stack": dual_path_stack,
    "split_tables": split_tables,
    "scoreboard": scoreboard,
    "masked_scoreboard": masked_scoreboard,
}


def inventory(params: BlockParams) -> Inventory:
    """The model's inventory of the block ``params`` describe."""
    try:
        return INVENTORIES[params.name](params)
    except KeyError:
        raise ValueError(f"no area model of the block {params.name}") from None
