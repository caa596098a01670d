"""The HDL blocks by name, with their parameters: what ``reconverge verilog`` / ``synth``,
``make area`` and the testbenches look up. Adding a block = one :class:`BlockSpec` here (its
golden twin goes to ``reconverge.golden.blocks.TWINS`` under the same name).

Importing this module does not import Amaranth (the CLI lists the blocks cheaply); the
component class is imported when a block is built."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from reconverge.golden.errors import UserError

if TYPE_CHECKING:
    from reconverge.hdl.blocks.ports import BlockComponent


@dataclass(frozen=True)
class Param:
    name: str
    default: int
    help: str


@dataclass(frozen=True)
class BlockSpec:
    name: str
    help: str
    #: "module:Class" of the Amaranth component, imported on first use.
    component_path: str
    params: tuple[Param, ...]
    #: The three parameter sets of docs/area.md.
    area_sets: tuple[dict[str, int], ...]
    #: docs/area.md compares this block's area with ``baseline`` (a block with the same
    #: parameters) and with the ratio the seed reports (``seed_ratio``: text, source).
    baseline: str = ""
    seed_ratio: tuple[str, str] = ("", "")
    ratio_note: str = ""

    def parse(self, assignments: Sequence[str]) -> dict[str, int]:
        """``["k=v", ...]`` -> every parameter (defaults filled in); UserError when malformed."""
        values = {p.name: p.default for p in self.params}
        for text in assignments:
            key, sep, raw = text.partition("=")
            key = key.strip().replace("-", "_")
            if not sep or key not in values:
                raise UserError(
                    f"block {self.name}: bad parameter {text!r}; expected k=v with k one of "
                    + ", ".join(values)
                )
            try:
                values[key] = int(raw, 0)
            except ValueError:
                raise UserError(f"block {self.name}: {key}={raw!r} is not an integer") from None
        return values

    def build(self, params: dict[str, int]) -> BlockComponent:
        """The component; a parameter the block rejects becomes a UserError naming it."""
        from reconverge.golden.blocks import TWINS

        try:
            TWINS[self.name](**params)  # the twin validates the parameters
        except ValueError as exc:
            raise UserError(f"block {self.name}: {exc}") from None
        module, _, cls = self.component_path.partition(":")
        return getattr(importlib.import_module(module), cls)(**params)

    def describe(self) -> str:
        return ", ".join(f"{p.name}={p.default}" for p in self.params)


_SCOREBOARD_PARAMS = (
    Param("warp_size", 32, "threads per warp W (bits of an R-mask)"),
    Param("registers", 32, "architectural registers per thread (bits of a dependency mask)"),
    Param("warps", 8, "warps of the SM: one set of the table per warp id"),
    Param("entries", 8, "entries per warp's set (seed 002 Sec 6.6: 8)"),
    Param("lookups", 2, "decode lookup ports, 3 operands each"),
    Param("writebacks", 2, "write-back (release) ports"),
)
#: docs/area.md: the seed's 8 entries per warp and its ports (6 read = 2 lookups x 3 operands,
#: 3 write = issue + 2 write-backs) for W = 8, 16 (8 warps) and 32 (4 warps: the masked table
#: of 8 warps of 32 threads takes 21k of the 24k LUTs of the ECP5-25K and 15 minutes of
#: nextpnr; warps scale both tables alike).
_SCOREBOARD_AREA = (
    {"warp_size": 8, "registers": 32, "warps": 8, "entries": 8, "lookups": 2, "writebacks": 2},
    {"warp_size": 16, "registers": 32, "warps": 8, "entries": 8, "lookups": 2, "writebacks": 2},
    {"warp_size": 32, "registers": 32, "warps": 4, "entries": 8, "lookups": 2, "writebacks": 2},
)
_MASKED_RATIO_NOTE = """\
Why the ratio is not the seed's 1.9x: seed 002 synthesised both tables as SRAM macros
(FabMem, 6 read and 3 write ports, FreePDK 45 nm). By its own figures the R-masks add 1.5 KB
(48 warps x 8 entries x 32 bits) to roughly 0.3 KB of register ids and valid bits, about six
times the bits, for 1.9x the area: the macro's ports and periphery, the same for both
tables, dominate its area. Here both tables are flip-flops and logic: every stored bit has
its own next-state logic (allocation, merge, clearing by two write-backs) and passes through
every read port (the issue port's and each lookup's set multiplexer and write-back bypass),
so the area follows the entry width, W + 5 bits against 1 + 5 (the FFs column: 2.2x at W = 8,
3.5x at W = 16, 6.2x at W = 32), and the cell count with it. The transistor estimate gives
more weight to what both tables share (register-id comparators, warp and dependency-mask
decoders) and stays below the storage ratio; it is 1.9x at W = 8, but the seed's 1.9x is for
W = 32 threads. In LUT4s the per-bit AND-OR logic packs densely at W = 8 and 16 (a ratio
below the FFs'); at W = 32 the LUT ratio comes close to the storage ratio."""

BLOCKS: dict[str, BlockSpec] = {
    spec.name: spec
    for spec in (
        BlockSpec(
            "arbiter",
            "unified PC/memory arbiter reduction tree (seed 000 Fig 4b)",
            "reconverge.hdl.blocks.arbiter:Arbiter",
            (
                Param("n", 32, "inputs (threads in PC mode, lanes in memory mode)"),
                Param("key_width", 32, "key bits (SP:PC, or line address)"),
                Param("pipeline_every", 0, "register stage every k tree levels (0 = none)"),
            ),
            (
                {"n": 8, "key_width": 16, "pipeline_every": 0},
                {"n": 32, "key_width": 32, "pipeline_every": 0},
                {"n": 32, "key_width": 32, "pipeline_every": 2},
            ),
        ),
        BlockSpec(
            "squeezer",
            "hybrid-warp-size squeezer and issue length (seed 001 Sec 4.1-4.3)",
            "reconverge.hdl.blocks.squeezer:Squeezer",
            (
                Param("warp_size", 32, "threads per warp W"),
                Param("simd_width", 8, "lanes L (W/L quarter-warps)"),
                Param("latency", 0, "register stages (0 = combinational)"),
            ),
            (
                {"warp_size": 16, "simd_width": 4, "latency": 0},
                {"warp_size": 32, "simd_width": 8, "latency": 0},
                {"warp_size": 32, "simd_width": 8, "latency": 2},
            ),
        ),
        BlockSpec(
            "split_tables",
            "warp split table and reconvergence table with OREC (seed 002 Sec 3.3.1, Fig 7)",
            "reconverge.hdl.blocks.split_tables:SplitTables",
            (
                Param("warp_size", 32, "threads per warp W"),
                Param("st_size", 32, "split table entries (seed 002: W suffice)"),
                Param("rt_size", 16, "reconvergence table entries"),
                Param("pc_width", 32, "PC bits"),
                Param("orec", 1, "opportunistic early reconvergence (0/1)"),
            ),
            (
                {"warp_size": 4, "st_size": 4, "rt_size": 4, "pc_width": 16, "orec": 0},
                {"warp_size": 4, "st_size": 4, "rt_size": 4, "pc_width": 16, "orec": 1},
                {"warp_size": 8, "st_size": 8, "rt_size": 4, "pc_width": 16, "orec": 1},
            ),
        ),
        BlockSpec(
            "sps_stack",
            "SPS reconvergence stack (seed 002 Sec 2.2, Fig 3)",
            "reconverge.hdl.blocks.sps_stack:SpsStack",
            (
                Param("warp_size", 32, "threads per warp W (mask width)"),
                Param("depth", 16, "stack entries; overflow beyond"),
                Param("pc_width", 32, "PC bits (the two top codes are NEVER and RETURN)"),
            ),
            (
                {"warp_size": 8, "depth": 8, "pc_width": 16},
                {"warp_size": 32, "depth": 8, "pc_width": 32},
                {"warp_size": 32, "depth": 16, "pc_width": 32},
            ),
        ),
        BlockSpec(
            "dual_path_stack",
            "dual-path stack, DPS and PPC explicit/implicit (seed 003 Fig 4/5)",
            "reconverge.hdl.blocks.dual_path_stack:DualPathStack",
            (
                Param("warp_size", 32, "threads per warp W (mask width)"),
                Param("depth", 16, "stack entries; overflow beyond"),
                Param("pc_width", 32, "PC bits (the two top codes are NEVER and RETURN)"),
                Param("mode", 2, "0 = DPS, 1 = PPC explicit (hints), 2 = PPC implicit"),
            ),
            (  # the three modes at one size (and SPS's W32 / 8 entries)
                {"warp_size": 32, "depth": 8, "pc_width": 32, "mode": 0},
                {"warp_size": 32, "depth": 8, "pc_width": 32, "mode": 1},
                {"warp_size": 32, "depth": 8, "pc_width": 32, "mode": 2},
            ),
        ),
        BlockSpec(
            "scoreboard",
            "per-warp scoreboard, set-associative by warp id (seed 002 Fig 8a)",
            "reconverge.hdl.blocks.scoreboard:Scoreboard",
            _SCOREBOARD_PARAMS,
            _SCOREBOARD_AREA,
        ),
        BlockSpec(
            "masked_scoreboard",
            "masked scoreboard with an R-mask per entry (seed 002 Sec 3.3.2, Fig 8b)",
            "reconverge.hdl.blocks.scoreboard:MaskedScoreboard",
            _SCOREBOARD_PARAMS,
            _SCOREBOARD_AREA,
            baseline="scoreboard",
            seed_ratio=("~1.9x (175,432 / 91,365 um^2)", "seed 002 Sec 6.6"),
            ratio_note=_MASKED_RATIO_NOTE,
        ),
        BlockSpec(
            "stackless",
            "stack-less control: per-thread PC and SP, min(SP:PC), local increment (seed 000)",
            "reconverge.hdl.blocks.stackless:Stackless",
            (
                Param("warp_size", 32, "threads per warp W"),
                Param("pc_width", 32, "PC bits"),
                Param("sp_width", 32, "SP bits (the key is SP:PC)"),
            ),
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
