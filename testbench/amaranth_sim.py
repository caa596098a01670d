"""Run a scenario on an Amaranth component in Amaranth's own simulator, in lock-step with the
component's golden twin (the fast unit-test path; cocotb on the generated Verilog is the one
that counts)."""

from __future__ import annotations

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
            sim.run()
    else:
        sim.run()
    return result[0]
