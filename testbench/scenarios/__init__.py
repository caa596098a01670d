"""Stimulus shared by the cocotb testbenches and the Amaranth-simulator tests: for every block,
the named scenarios (directed ones reproduce a seed's worked example) and the parameter sets
the suites run them on."""

from __future__ import annotations

import importlib
import random
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from reconverge.golden.blocks.base import BlockParams
from reconverge.testbench.lockstep import Scenario


@dataclass(frozen=True)
class ScenarioSpec:
    """A named stimulus: ``make(model, rng, cycles)`` returns the scenario generator for the
    golden twin ``model``; ``applies(params)`` says whether it fits the block's parameters."""

    name: str
    make: Callable[[Any, random.Random, int], Scenario]
    applies: Callable[[Any], bool] = field(default=lambda params: True)

    @property
    def doc(self) -> str:
        return (self.make.__doc__ or self.name).strip().splitlines()[0]


def rng_for(*parts: object) -> random.Random:
    """A reproducible random stream named by its parts (block parameters, scenario)."""
    return random.Random(zlib.crc32(repr(parts).encode()))


def scenarios_for(block: str) -> dict[str, ScenarioSpec]:
    """The scenarios of a block: ``SCENARIOS`` of its stimulus module
    (``testbench/scenarios/<stimulus>.py``, named in the block's registry entry)."""
    from reconverge.hdl.registry import lookup

    module = importlib.import_module(f"{__name__}.{lookup(block).stimulus_module}")
    return {s.name: s for s in module.SCENARIOS}


def applicable(params: BlockParams) -> list[ScenarioSpec]:
    """The scenarios that fit a block's parameters."""
    return [s for s in scenarios_for(params.name).values() if s.applies(params)]
