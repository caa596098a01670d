"""Golden twins of the HDL blocks: the reference each Amaranth block is held to under cocotb,
and the building blocks of the golden cycle-level SM model. Pure Python, no HDL imports
(convention in :mod:`reconverge.golden.blocks.base` and docs/hdl.md)."""

from reconverge.golden.blocks.arbiter import Arbiter, coalesce, line_key, pc_key, reduce
from reconverge.golden.blocks.base import Block, Pipelined, Port
from reconverge.golden.blocks.scoreboard import MaskedScoreboardBlock, ScoreboardBlock
from reconverge.golden.blocks.split_tables import SplitTables, SplitTablesBlock
from reconverge.golden.blocks.squeezer import Squeezed, Squeezer, squeeze, squeeze_steps
from reconverge.golden.blocks.stack_twins import DualPathStackTwin, SpsStackTwin
from reconverge.golden.blocks.stackless import StacklessBlock, StacklessControl

#: Every golden twin by the block name the CLI and the HDL registry use.
TWINS: dict[str, type[Block]] = {
    "arbiter": Arbiter,
    "squeezer": Squeezer,
    "split_tables": SplitTablesBlock,
    "sps_stack": SpsStackTwin,
    "dual_path_stack": DualPathStackTwin,
    "scoreboard": ScoreboardBlock,
    "masked_scoreboard": MaskedScoreboardBlock,
    "stackless": StacklessBlock,
}

__all__ = [
    "TWINS",
    "Arbiter",
    "Block",
    "DualPathStackTwin",
    "MaskedScoreboardBlock",
    "Pipelined",
    "Port",
    "ScoreboardBlock",
    "SplitTables",
    "SplitTablesBlock",
    "SpsStackTwin",
    "Squeezed",
    "Squeezer",
    "StacklessBlock",
    "StacklessControl",
    "coalesce",
    "line_key",
    "pc_key",
    "reduce",
    "squeeze",
    "squeeze_steps",
]
