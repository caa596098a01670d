"""Golden twins of the HDL blocks: the reference each Amaranth block is held to under cocotb,
and the building blocks of the golden cycle-level SM model. Pure Python, no HDL imports
(convention in :mod:`reconverge.golden.blocks.base` and docs/hdl.md). Each block is described
by one frozen parameter dataclass (``ArbiterParams``, ...) whose ``twin()`` builds its golden
twin; ``reconverge.hdl.registry`` lists them by name."""

from reconverge.golden.blocks.arbiter import (
    Arbiter,
    ArbiterParams,
    coalesce,
    line_key,
    pc_key,
    reduce,
)
from reconverge.golden.blocks.base import Block, BlockParams, Group, Pipelined, Port
from reconverge.golden.blocks.scoreboard import (
    MaskedScoreboardBlock,
    MaskedScoreboardParams,
    ScoreboardBlock,
    ScoreboardParams,
)
from reconverge.golden.blocks.split_tables import SplitTables, SplitTablesBlock, SplitTablesParams
from reconverge.golden.blocks.squeezer import (
    Squeezed,
    Squeezer,
    SqueezerParams,
    squeeze,
    squeeze_steps,
)
from reconverge.golden.blocks.stack_twins import (
    DualPathStackParams,
    DualPathStackTwin,
    SpsStackParams,
    SpsStackTwin,
)
from reconverge.golden.blocks.stackless import StacklessBlock, StacklessControl, StacklessParams

__all__ = [
    "Arbiter",
    "ArbiterParams",
    "Block",
    "BlockParams",
    "DualPathStackParams",
    "DualPathStackTwin",
    "Group",
    "MaskedScoreboardBlock",
    "MaskedScoreboardParams",
    "Pipelined",
    "Port",
    "ScoreboardBlock",
    "ScoreboardParams",
    "SplitTables",
    "SplitTablesBlock",
    "SplitTablesParams",
    "SpsStackParams",
    "SpsStackTwin",
    "Squeezed",
    "Squeezer",
    "SqueezerParams",
    "StacklessBlock",
    "StacklessControl",
    "StacklessParams",
    "coalesce",
    "line_key",
    "pc_key",
    "reduce",
    "squeeze",
    "squeeze_steps",
]
