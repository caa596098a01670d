"""Stimulus shared by the cocotb testbenches and the Amaranth-simulator tests: for every block,
the named scenarios (directed ones reproduce a seed's worked example) and the parameter sets
the suites run them on."""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from reconverge.golden.blocks.base import Block
from reconverge.testbench.lockstep import Scenario


@dataclass(frozen=True)
class ScenarioSpec:
    """A named stimulus: ``make(model, rng, cycles)`` returns the scenario generator;
    ``applies(model)`` says whether it fits the block's parameters."""

    name: str
    make: Callable[[Any, random.Random, int], Scenario]
    applies: Callable[[Any], bool] = field(default=lambda model: True)

    @property
    def doc(self) -> str:
        return (self.make.__doc__ or self.name).strip().splitlines()[0]


def rng_for(*parts: object) -> random.Random:
    """A reproducible random stream named by its parts (block, parameters, scenario)."""
    return random.Random(zlib.crc32(repr(parts).encode()))


def params_id(params: dict[str, int]) -> str:
    return "-".join(f"{k}{v}" for k, v in params.items())


def scenarios_for(block: str) -> dict[str, ScenarioSpec]:
    from reconverge.testbench.scenarios import (
        arbiter,
        dual_path_stack,
        scoreboard,
        split_tables,
        sps_stack,
        squeezer,
        stackless,
    )

    table = {
        "arbiter": arbiter.SCENARIOS,
        "squeezer": squeezer.SCENARIOS,
        "split_tables": split_tables.SCENARIOS,
        "sps_stack": sps_stack.SCENARIOS,
        "dual_path_stack": dual_path_stack.SCENARIOS,
        "scoreboard": scoreboard.SCENARIOS,
        "masked_scoreboard": scoreboard.SCENARIOS,
        "stackless": stackless.SCENARIOS,
    }[block]
    return {s.name: s for s in table}


def applicable(block: str, model: Block) -> list[ScenarioSpec]:
    return [s for s in scenarios_for(block).values() if s.applies(model)]
