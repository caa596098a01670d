"""The HDL blocks by name, with their parameters: what ``reconverge verilog`` / ``synth``,
``make area`` and the testbenches look up. Adding a block = one :class:`BlockSpec` here (its
golden twin goes to ``reconverge.golden.blocks.TWINS`` under the same name)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from reconverge.golden.errors import UserError
from reconverge.hdl.arbiter import Arbiter
from reconverge.hdl.ports import BlockComponent
from reconverge.hdl.squeezer import Squeezer


@dataclass(frozen=True)
class Param:
    name: str
    default: int
    help: str


@dataclass(frozen=True)
class BlockSpec:
    name: str
    help: str
    component: Callable[..., BlockComponent]
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
        try:
            return self.component(**params)
        except ValueError as exc:
            raise UserError(f"block {self.name}: {exc}") from None

    def describe(self) -> str:
        return ", ".join(f"{p.name}={p.default}" for p in self.params)


BLOCKS: dict[str, BlockSpec] = {
    spec.name: spec
    for spec in (
        BlockSpec(
            "arbiter",
            "unified PC/memory arbiter reduction tree (seed 000 Fig 4b)",
            Arbiter,
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
            Squeezer,
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
    )
}


def lookup(name: str) -> BlockSpec:
    try:
        return BLOCKS[name]
    except KeyError:
        raise UserError(f"unknown block {name!r}; blocks: {', '.join(BLOCKS)}") from None
