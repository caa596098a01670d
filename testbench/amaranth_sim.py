"""Run a scenario on an Amaranth component in Amaranth's own simulator, in lock-step with the
component's golden twin (the fast unit-test path; cocotb on the generated Verilog is the one
that counts)."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from typing import Any

from amaranth.hdl import ClockDomain, Module, Signal
from amaranth.sim import Simulator

from reconverge.hdl.blocks.ports import BlockComponent
from reconverge.testbench.lockstep import Scenario, run_lockstep


class AmaranthIO:
    """:class:`reconverge.testbench.lockstep.CycleIO` over an Amaranth testbench context."""

    def __init__(self, ctx: object, dut: BlockComponent, rst: Signal) -> None:
        self.ctx, self.dut, self.rst = ctx, dut, rst
        self.outputs = [p.name for p in dut.params.out_ports()]

    async def cycle(self, inputs: dict[str, int], reset: bool) -> dict[str, int]:
        ctx, dut = self.ctx, self.dut
        for name, raw in inputs.items():
            ctx.set(dut.port(name), raw)  # type: ignore[attr-defined]
        ctx.set(self.rst, int(reset))  # type: ignore[attr-defined]
        out = {name: ctx.get(dut.port(name)) for name in self.outputs}  # type: ignore[attr-defined]
        await ctx.tick()  # type: ignore[attr-defined]
        return out


def simulate(
    dut: BlockComponent, scenario: Scenario, label: str = "", vcd: str | None = None
) -> int:
    """Run ``scenario`` on ``dut`` and a fresh golden twin of its parameters; return the number
    of cycles."""
    top = Module()
    top.domains.sync = domain = ClockDomain("sync")
    top.submodules.dut = dut
    sim = Simulator(top)
    sim.add_clock(1e-8)
    result: list[int] = []

    async def bench(ctx: object) -> None:
        io = AmaranthIO(ctx, dut, domain.rst)
        result.append(await run_lockstep(dut.params.twin(), io, scenario, label))

    sim.add_testbench(bench)
    if vcd:
        with sim.write_vcd(vcd):
            run_simulator(sim)
    else:
        run_simulator(sim)
    return result[0]


def run_simulator(sim: Simulator) -> None:
    """``sim.run()`` in a thread of its own, so at the same depth of a fresh Python stack
    whoever calls. CPython 3.11 keeps its frames in 16 KB chunks and frees a chunk when the
    frame at its base returns; Amaranth's simulator evaluates a design with one generated
    function of a large frame per clock domain, called thousands of times, and when the
    caller's depth leaves less room in the current chunk than that frame needs, every call
    maps and unmaps a chunk of its own: the same simulation took 25 s instead of 1.4 s in a
    test depending on where in the stack it ran (measured with ``perf``:
    ``_PyThreadState_BumpFramePointerSlow`` and its page faults)."""
    failure: list[BaseException] = []

    def target() -> None:
        try:
            sim.run()
        except BaseException as exc:  # re-raised in the caller's thread
            failure.append(exc)

    thread = threading.Thread(target=target, name="amaranth-sim", daemon=True)  # Ctrl-C exits
    thread.start()
    thread.join()
    if failure:
        raise failure[0]


Bench = Callable[[Any], Awaitable[None]]


class Compiled:
    """A clocked design compiled once for Amaranth's simulator and run from its initial state
    for each testbench (``Simulator.reset``: signals, memories, the clock and the testbench
    restart). Compiling a large design costs more than a test's stream through it (the register
    file at W = L = 8 and the LSU at W = 16: 10-50 s against a few), and Hypothesis runs a
    test's body once per example."""

    def __init__(self, top: Module) -> None:
        self._sim = Simulator(top)
        self._sim.add_clock(1e-8)
        self._bench: Bench | None = None
        self._fresh = True  # not run yet: already in its initial state
        self._sim.add_testbench(self._run)

    async def _run(self, ctx: Any) -> None:
        assert self._bench is not None
        await self._bench(ctx)

    def run(self, bench: Bench) -> None:
        """Run ``bench`` (an Amaranth testbench) on the design from its initial state."""
        self._bench = bench
        if not self._fresh:
            self._sim.reset()
        self._fresh = False
        run_simulator(self._sim)
