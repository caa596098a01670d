"""Stimulus for the dual-path stack with paired-path comparison (seed 003 Fig 4/5)."""

from __future__ import annotations

from reconverge.testbench.scenarios import ScenarioSpec
from reconverge.testbench.scenarios.stacks import random_stream

PARAM_SETS = [
    {"warp_size": 4, "depth": 4, "pc_width": 16, "mode": 2},
    {"warp_size": 8, "depth": 8, "pc_width": 16, "mode": 1},
    {"warp_size": 32, "depth": 8, "pc_width": 32, "mode": 0},
]
EXTRA_PARAM_SETS: list[dict[str, int]] = []

SCENARIOS = [ScenarioSpec("random", random_stream)]
