"""SM geometry: every size parameter of the SM, defined once (DESIGN.md, Geometry).

Defaults follow the seeds: warps of W = 32 threads issued on L = 8 lanes, so a warp instruction
takes W/L = 4 passes (the quarter-warps of seed 001).

Each HDL block's parameters for an SM of this geometry come from one method named after the
block (``geometry.sps_stack(pc_width=32)``, ...), so the SM, the CLI and the tests use the same
values; the arguments are what the geometry does not say (widths, ports, the policy).
"""

from __future__ import annotations

from dataclasses import dataclass

from reconverge.golden.blocks.arbiter import ArbiterParams
from reconverge.golden.blocks.scoreboard import MaskedScoreboardParams, ScoreboardParams
from reconverge.golden.blocks.split_tables import SplitTablesParams
from reconverge.golden.blocks.squeezer import SqueezerParams
from reconverge.golden.blocks.stack_twins import DualPathStackParams, SpsStackParams
from reconverge.golden.blocks.stackless import StacklessParams
from reconverge.golden.isa import NUM_REGS
from reconverge.golden.sm.config import Policy


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

    # -- the parameters of each HDL block for an SM of this geometry -------------------------------

    def arbiter(self, key_width: int, pipeline_every: int = 0) -> ArbiterParams:
        """The arbiter tree over the W threads (PC mode) or lanes' addresses (memory mode)."""
        return ArbiterParams(self.warp_size, key_width, pipeline_every)

    def squeezer(self, latency: int = 0) -> SqueezerParams:
        return SqueezerParams(self.warp_size, self.simd_width, latency)

    def sps_stack(self, pc_width: int = 32) -> SpsStackParams:
        return SpsStackParams(self.warp_size, self.stack_depth, pc_width)

    def dual_path_stack(
        self, policy: Policy = Policy.PPC, hints: bool = False, pc_width: int = 32
    ) -> DualPathStackParams:
        return DualPathStackParams(self.warp_size, self.stack_depth, pc_width, policy, hints)

    def split_tables(self, orec: bool = True, pc_width: int = 32) -> SplitTablesParams:
        return SplitTablesParams(
            self.warp_size, self.split_table, self.reconv_table, pc_width, orec
        )

    def stackless(
        self, pc_width: int = 32, sp_width: int = 32, coalesce_width: int = 32
    ) -> StacklessParams:
        """One warp's stack-less control, whose tree also coalesces the warp's memory requests
        (``coalesce_width``: bits of a cache-line number)."""
        return StacklessParams(self.warp_size, pc_width, sp_width, coalesce_width)

    def scoreboard(self, lookups: int, writebacks: int) -> ScoreboardParams:
        return ScoreboardParams(
            self.warp_size, self.regs, self.warps, self.scoreboard_entries, lookups, writebacks
        )

    def masked_scoreboard(self, lookups: int, writebacks: int) -> MaskedScoreboardParams:
        return MaskedScoreboardParams(
            self.warp_size, self.regs, self.warps, self.scoreboard_entries, lookups, writebacks
        )
