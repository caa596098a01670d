"""Lock-step comparison of an HDL block with its golden twin, shared by the cocotb testbenches
(generated Verilog under Icarus/Verilator) and the Amaranth-simulator unit tests.

A *scenario* is a generator that yields the inputs of each cycle (a dict of port values in the
golden form, or :data:`RESET` for one cycle with ``rst`` high and idle inputs) and receives,
as the value of its ``yield``, that cycle's outputs after they have been checked against the
golden twin. Closed-loop scenarios (replaying memory requests, running a little program on
the arbiter) use those outputs to choose the next inputs.

Each cycle :func:`run_lockstep` drives the inputs, lets them settle, reads *every* output port,
compares all of them with :meth:`Block.outputs`, then clocks both sides.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Protocol

from reconverge.golden.blocks.base import Block, PortValue, Values


class Reset:
    """The type of :data:`RESET` (a scenario's reset cycle), shown as ``RESET``."""

    def __repr__(self) -> str:
        return "RESET"


#: Yielded by a scenario for one cycle of synchronous reset (idle inputs).
RESET = Reset()

Scenario = Generator[Values | Reset, Values, None]


class CycleIO(Protocol):
    """One simulator: drive raw input bits (and ``rst``), settle, read raw output bits, then
    apply one clock edge (or just let time pass for a purely combinational block)."""

    async def cycle(self, inputs: dict[str, int], reset: bool) -> dict[str, int]: ...


class Mismatch(AssertionError):
    """The HDL and the golden twin disagree on some output."""


def hold(inputs: Values, cycles: int) -> Generator[Values, Values, Values]:
    """Drive the same inputs for ``cycles + 1`` cycles and return the last cycle's outputs:
    ``out = yield from hold(inputs, block.latency)`` waits for a pipelined result."""
    out = yield inputs
    for _ in range(cycles):
        out = yield inputs
    return out


def first_cycles(scenario: Scenario, cycles: int) -> Scenario:
    """The first ``cycles`` cycles of ``scenario`` (all of it when shorter)."""
    out: Values | None = None
    for _ in range(cycles):
        try:
            step = scenario.send(out)  # (None starts it)
        except StopIteration:
            return
        out = yield step


def _show(value: PortValue) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(f"{v:#x}" for v in value) + "]"
    return f"{value:#x}"


async def run_lockstep(model: Block, io: CycleIO, scenario: Scenario, label: str = "") -> int:
    """Run ``scenario`` on the HDL (through ``io``) and on ``model``; return the cycle count.
    Raises :class:`Mismatch` naming the cycle, the inputs and every differing output."""
    model.reset()
    step = next(scenario)
    cycle = 0
    while True:
        reset = step is RESET
        inputs = model.idle_inputs() if reset else step
        assert isinstance(inputs, dict)
        model.check_inputs(inputs)
        raw = await io.cycle({p.name: p.pack(inputs[p.name]) for p in model.in_ports()}, reset)
        got = {p.name: p.unpack(raw[p.name]) for p in model.out_ports()}
        expected = model.outputs(inputs)
        if got != expected:
            lines = [f"{label} cycle {cycle}: HDL and golden {model.name} disagree"]
            lines += [f"  in  {name} = {_show(v)}" for name, v in inputs.items()]
            lines += [
                f"  out {name}: HDL {_show(got[name])}, golden {_show(expected[name])}"
                for name in expected
                if got[name] != expected[name]
            ]
            raise Mismatch("\n".join(lines))
        if reset:
            model.reset()
        else:
            model.clock(inputs)
        cycle += 1
        try:
            step = scenario.send(got)
        except StopIteration:
            return cycle


def run_golden(model: Block, scenario: Scenario) -> int:
    """Run a scenario on the golden twin alone (its own assertions, e.g. a seed's worked
    example, checked against golden); return the cycle count."""
    model.reset()
    cycles = 0
    step = next(scenario)
    while True:
        if step is RESET:
            out = model.outputs(model.idle_inputs())
            model.reset()
        else:
            assert isinstance(step, dict)
            out = model.step(step)
        cycles += 1
        try:
            step = scenario.send(out)
        except StopIteration:
            return cycles
