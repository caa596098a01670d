"""SM geometry: every size parameter of the SM, defined once (DESIGN.md, Geometry).

Defaults follow the seeds: warps of W = 32 threads issued on L = 8 lanes, so a warp instruction
takes W/L = 4 passes (the quarter-warps of seed 001).

Each HDL block's parameters for an SM of this geometry come from its parameter dataclass's
``of`` (``SqueezerParams.of(geometry)``; a divergence unit's from
``golden.blocks.units.unit_params``), so the SM, the area model and the tests derive the same
values.
"""

from __future__ import annotations

from dataclasses import dataclass

from reconverge.golden.isa import NUM_REGS


def ceil_log2(n: int) -> int:
    """Levels of a binary reduction tree over ``n`` inputs."""
    return (n - 1).bit_length() if n > 1 else 0


def bits_for(n: int) -> int:
    """Width of an index in ``range(n)`` (at least 1 bit, so no port is zero-width)."""
    return max(1, ceil_log2(n))


@dataclass(frozen=True)
class Geometry:
    warp_size: int = 32  # W
    simd_width: int = 8  # L, lanes
    warps: int = 8  # warps resident per SM
    regs: int = NUM_REGS  # architectural registers per thread
    stack_depth: int = 32  # SPS / dual-path stack entries per warp
    split_table: int = 32  # ST entries per warp that may issue (seed 002: at most W are needed)
    reconv_table: int = 16  # RT entries per warp (seed 002: depends on the nesting depth)
    #: scoreboard entries per warp (seed 002 Fig 8: 8); the default, one per register but x0,
    #: never fills
    scoreboard_entries: int = NUM_REGS - 1

    def __post_init__(self) -> None:
        def power_of_two(v: int) -> bool:
            return v > 0 and v & (v - 1) == 0

        if not power_of_two(self.warp_size) or self.warp_size > 64:
            raise ValueError(f"warp size W={self.warp_size} must be a power of two in 1..64")
        if not power_of_two(self.simd_width) or self.simd_width > self.warp_size:
            raise ValueError(
                f"SIMD width L={self.simd_width} must be a power of two no larger than "
                f"W={self.warp_size}"
            )
        if self.warps < 1:
            raise ValueError(f"warps per SM must be at least 1, not {self.warps}")
        if not 1 <= self.regs <= NUM_REGS:
            raise ValueError(f"registers per thread must be in 1..{NUM_REGS}, not {self.regs}")
        for name in ("stack_depth", "split_table", "reconv_table", "scoreboard_entries"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if self.scoreboard_entries >= NUM_REGS:
            raise ValueError(
                f"scoreboard_entries must be at most {NUM_REGS - 1} (x0 is never reserved)"
            )

    @property
    def passes(self) -> int:
        """Issue passes of a full warp instruction (W / L)."""
        return self.warp_size // self.simd_width
