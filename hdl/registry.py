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
    from reconverge.hdl.ports import BlockComponent


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


BLOCKS: dict[str, BlockSpec] = {
    spec.name: spec
    for spec in (
        BlockSpec(
            "arbiter",
            "unified PC/memory arbiter reduction tree (seed 000 Fig 4b)",
            "reconverge.hdl.arbiter:Arbiter",
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
            "reconverge.hdl.squeezer:Squeezer",
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
            "reconverge.hdl.split_tables:SplitTables",
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
            "reconverge.hdl.sps_stack:SpsStack",
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
            "reconverge.hdl.dual_path_stack:DualPathStack",
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
    )
}


def lookup(name: str) -> BlockSpec:
    try:
        return BLOCKS[name]
    except KeyError:
        raise UserError(f"unknown block {name!r}; blocks: {', '.join(BLOCKS)}") from None
