"""cocotb test module: one lock-step test that drives the generated Verilog of a block and its
golden twin with a named scenario and compares every output every cycle.

Run through :func:`reconverge.testbench.cocotb_run.run`, which says what to run in the
environment: ``RECONVERGE_BLOCK``, ``RECONVERGE_PARAMS`` (JSON), ``RECONVERGE_SCENARIO``,
``RECONVERGE_CYCLES``, and optionally ``RECONVERGE_STOP`` (stop the scenario after that many
cycles: the prefix of a run, ``golden/cost/block_activity.py``).
"""

from __future__ import annotations

import json
import os
from typing import Any

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge, Timer

from reconverge.golden.blocks.base import Block
from reconverge.hdl.registry import lookup
from reconverge.testbench.lockstep import Mismatch, first_cycles, run_lockstep
from reconverge.testbench.scenarios import rng_for, scenarios_for

PERIOD_NS = 10


class CocotbIO:
    """:class:`reconverge.testbench.lockstep.CycleIO` over a cocotb DUT handle. Inputs are
    driven after the falling edge (or at time 0), outputs sampled in the read-only phase before
    the rising edge. A block without registers has no ``clk`` port: its cycle is a time step."""

    def __init__(self, dut: Any, model: Block) -> None:
        self.dut = dut
        self.outputs = [p.name for p in model.out_ports()]
        self.clocked = hasattr(dut, "clk")

    async def start(self) -> None:
        """Start the clock low: a first edge from X to 1 would be a rising edge that loads
        the registers with X (rst is not driven yet at time 0)."""
        if self.clocked:
            self.dut.rst.value = 0
            cocotb.start_soon(Clock(self.dut.clk, PERIOD_NS, unit="ns").start(start_high=False))

    async def cycle(self, inputs: dict[str, int], reset: bool) -> dict[str, int]:
        for name, raw in inputs.items():
            getattr(self.dut, name).value = raw
        if self.clocked:
            self.dut.rst.value = int(reset)
        await ReadOnly()
        out = {name: _resolved(name, getattr(self.dut, name).value) for name in self.outputs}
        if self.clocked:
            await RisingEdge(self.dut.clk)
            await FallingEdge(self.dut.clk)
        else:
            await Timer(PERIOD_NS, unit="ns")
        return out


def _resolved(name: str, value: Any) -> int:
    if not value.is_resolvable:
        raise Mismatch(f"output {name} is not a number: {value}")
    return int(value)


@cocotb.test()
async def lockstep(dut: Any) -> None:
    """Generated Verilog vs golden twin, all outputs every cycle, on the scenario named in the
    environment (seed worked examples, memory coalescing, random streams)."""
    block = os.environ["RECONVERGE_BLOCK"]
    params = lookup(block).make(json.loads(os.environ["RECONVERGE_PARAMS"]))
    name = os.environ["RECONVERGE_SCENARIO"]
    cycles = int(os.environ.get("RECONVERGE_CYCLES", "2000"))
    model = params.twin()
    spec = scenarios_for(block)[name]
    io = CocotbIO(dut, model)
    await io.start()
    label = f"{block} {params.describe()} {name}"
    scenario = spec.make(model, rng_for(params, name), cycles)
    if "RECONVERGE_STOP" in os.environ:
        scenario = first_cycles(scenario, int(os.environ["RECONVERGE_STOP"]))
    done = await run_lockstep(model, io, scenario, label)
    dut._log.info("%s: %d cycles, HDL == golden every cycle (%s)", label, done, spec.doc)
