"""The HDL blocks by name: what ``reconverge verilog`` / ``synth``, ``make area`` and the
testbenches look up. Adding a block = one :class:`BlockSpec` here, naming its parameter
dataclass (golden, next to its twin: it validates itself, derives the widths, declares the
ports and builds the twin) and its Amaranth component.

Importing this module does not import Amaranth (the CLI lists the blocks cheaply); the
component class is imported when a block is built."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from reconverge.golden.blocks import (
    ArbiterParams,
    BlockParams,
    DualPathStackParams,
    MaskedScoreboardParams,
    ScoreboardParams,
    SplitTablesParams,
    SpsStackParams,
    SqueezerParams,
    StacklessParams,
)
from reconverge.golden.errors import UserError
from reconverge.golden.policies import Policy

if TYPE_CHECKING:
    from reconverge.hdl.blocks.ports import BlockComponent


@dataclass(frozen=True)
class BlockSpec:
    name: str
    help: str
    #: The parameter dataclass: its fields are the block's parameters (defaults, help).
    params: type[BlockParams]
    #: "module:Class" of the Amaranth component, imported on first use.
    component_path: str
    #: The three parameter sets of docs/area.md (values as :meth:`BlockParams.parse` reads).
    area_sets: tuple[Mapping[str, object], ...]
    #: docs/area.md compares this block's area with ``baseline`` (a block with the same
    #: parameters) and with the ratio the seed reports (``seed_ratio``: text, source).
    baseline: str = ""
    seed_ratio: tuple[str, str] = ("", "")
    ratio_note: str = ""
    #: The testbench's stimulus module (``reconverge.testbench.scenarios.<stimulus>``), when
    #: the block shares another block's ports and scenarios; default: the block's name.
    stimulus: str = ""

    def __post_init__(self) -> None:
        if self.params.name != self.name:
            raise ValueError(f"block {self.name}: its parameters are {self.params.name}'s")

    def parse(self, assignments: Sequence[str]) -> BlockParams:
        """``["k=v", ...]`` -> the parameters (defaults for the others); UserError naming a
        malformed or bad one."""
        values: dict[str, str] = {}
        for text in assignments:
            key, sep, raw = text.partition("=")
            key = key.strip().replace("-", "_")
            if not sep or key not in self.params.field_types():
                raise UserError(
                    f"block {self.name}: bad parameter {text!r}; expected k=v with k one of "
                    + ", ".join(self.params.field_types())
                )
            values[key] = raw
        return self.make(values)

    def make(self, values: Mapping[str, object]) -> BlockParams:
        """The parameters from values (strings or typed); a bad one is a UserError."""
        try:
            return self.params.parse(values)
        except ValueError as exc:
            raise UserError(f"block {self.name}: {exc}") from None

    def build(self, params: BlockParams) -> BlockComponent:
        """The Amaranth component of these parameters."""
        if not isinstance(params, self.params):
            raise TypeError(f"block {self.name} takes {self.params.__name__}, not {params!r}")
        module, _, cls = self.component_path.partition(":")
        return getattr(importlib.import_module(module), cls)(params)

    def describe(self) -> str:
        """The parameters with their defaults."""
        return self.params().describe()

    @property
    def stimulus_module(self) -> str:
        return self.stimulus or self.name


#: docs/area.md: the seed's 8 entries per warp and its ports (6 read = 2 lookups x 3 operands,
#: 3 write = issue + 2 write-backs) for W = 8, 16 (8 warps) and 32 (4 warps: the masked table
#: of 8 warps of 32 threads takes 21k of the 24k LUTs of the ECP5-25K and 15 minutes of
#: nextpnr; warps scale both tables alike).
_SCOREBOARD_AREA = (
    {"warp_size": 8, "regs": 32, "warps": 8, "entries": 8, "lookups": 2, "writebacks": 2},
    {"warp_size": 16, "regs": 32, "warps": 8, "entries": 8, "lookups": 2, "writebacks": 2},
    {"warp_size": 32, "regs": 32, "warps": 4, "entries": 8, "lookups": 2, "writebacks": 2},
)
_MASKED_RATIO_NOTE = """\
Why the ratio is not the seed's 1.9x: seed 002 synthesised both tables as SRAM macros
(FabMem, 6 read and 3 write ports, FreePDK 45 nm). By its own figures the R-masks add 1.5 KB
(48 warps x 8 entries x 32 bits) to roughly 0.3 KB of register ids and valid bits, about six
times the bits, for 1.9x the area: the macro's ports and periphery, the same for both
tables, dominate its area. Here both tables are flip-flops and logic: every stored bit has
its own next-state logic (allocation, merge, clearing by two write-backs) and passes through
every read port (the issue port's and each lookup's set multiplexer and write-back bypass),
so the area follows the entry width, W + 5 bits against 1 + 5 (the FFs column), and the
cell and LUT4 counts with it. The transistor estimate gives more weight to what both tables
share (register-id comparators, warp and dependency-mask decoders) than to the stored bits.
The seed's 1.9x is for W = 32 threads."""

_TABLES = {"warp_size": 4, "split_table": 4, "reconv_table": 4, "pc_width": 16}
_DUAL = {"warp_size": 32, "stack_depth": 8, "pc_width": 32}

BLOCKS: dict[str, BlockSpec] = {
    spec.name: spec
    for spec in (
        BlockSpec(
            "arbiter",
            "unified PC/memory arbiter reduction tree (seed 000 Fig 4b)",
            ArbiterParams,
            "reconverge.hdl.blocks.arbiter:Arbiter",
            (
                {"n": 8, "key_width": 16, "pipeline_every": 0},
                {"n": 32, "key_width": 32, "pipeline_every": 0},
                {"n": 32, "key_width": 32, "pipeline_every": 2},
            ),
        ),
        BlockSpec(
            "squeezer",
            "hybrid-warp-size squeezer and issue length (seed 001 Sec 4.1-4.3)",
            SqueezerParams,
            "reconverge.hdl.blocks.squeezer:Squeezer",
            (
                {"warp_size": 16, "simd_width": 4, "latency": 0},
                {"warp_size": 32, "simd_width": 8, "latency": 0},
                {"warp_size": 32, "simd_width": 8, "latency": 2},
            ),
        ),
        BlockSpec(
            "split_tables",
            "warp split table and reconvergence table with OREC (seed 002 Sec 3.3.1, Fig 7)",
            SplitTablesParams,
            "reconverge.hdl.blocks.split_tables:SplitTables",
            (
                _TABLES | {"orec": False},
                _TABLES | {"orec": True},
                _TABLES | {"warp_size": 8, "split_table": 8, "orec": True},
            ),
        ),
        BlockSpec(
            "sps_stack",
            "SPS reconvergence stack (seed 002 Sec 2.2, Fig 3)",
            SpsStackParams,
            "reconverge.hdl.blocks.sps_stack:SpsStack",
            (
                {"warp_size": 8, "stack_depth": 8, "pc_width": 16},
                {"warp_size": 32, "stack_depth": 8, "pc_width": 32},
                {"warp_size": 32, "stack_depth": 16, "pc_width": 32},
            ),
        ),
        BlockSpec(
            "dual_path_stack",
            "dual-path stack, DPS and PPC explicit/implicit (seed 003 Fig 4/5)",
            DualPathStackParams,
            "reconverge.hdl.blocks.dual_path_stack:DualPathStack",
            (  # the three modes at one size (and SPS's W32 / 8 entries)
                _DUAL | {"policy": Policy.DPS, "hints": True},
                _DUAL | {"policy": Policy.PPC, "hints": True},
                _DUAL | {"policy": Policy.PPC, "hints": False},
            ),
        ),
        BlockSpec(
            "scoreboard",
            "per-warp scoreboard, set-associative by warp id (seed 002 Fig 8a)",
            ScoreboardParams,
            "reconverge.hdl.blocks.scoreboard:Scoreboard",
            _SCOREBOARD_AREA,
        ),
        BlockSpec(
            "masked_scoreboard",
            "masked scoreboard with an R-mask per entry (seed 002 Sec 3.3.2, Fig 8b)",
            MaskedScoreboardParams,
            "reconverge.hdl.blocks.scoreboard:MaskedScoreboard",
            _SCOREBOARD_AREA,
            baseline="scoreboard",
            seed_ratio=("~1.9x (175,432 / 91,365 um^2)", "seed 002 Sec 6.6"),
            ratio_note=_MASKED_RATIO_NOTE,
            stimulus="scoreboard",
        ),
        BlockSpec(
            "stackless",
            "stack-less control: per-thread PC and SP, min(SP:PC), local increment (seed 000)",
            StacklessParams,
            "reconverge.hdl.blocks.stackless:Stackless",
            (  # W = 32 with 64-bit SP:PC keys needs 25k LUT4: more than the ECP5-25K has
                {"warp_size": 8, "pc_width": 16, "sp_width": 16},
                {"warp_size": 16, "pc_width": 32, "sp_width": 32},
                {"warp_size": 32, "pc_width": 24, "sp_width": 16},
            ),
        ),
    )
}


def lookup(name: str) -> BlockSpec:
    try:
        return BLOCKS[name]
    except KeyError:
        raise UserError(f"unknown block {name!r}; blocks: {', '.join(BLOCKS)}") from None
