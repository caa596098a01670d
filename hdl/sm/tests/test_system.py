"""The board top (SM + block RAM, ``hdl.sm.system``) runs a suite kernel after reset, in
Amaranth's simulator: it finishes with ``passed``, and its global memory block RAM then holds
what golden's run leaves in global memory (the kernel's outputs equal the oracle's)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from amaranth.sim import Simulator

from reconverge.golden.memmap import MemoryMap
from reconverge.golden.params import COSIM
from reconverge.golden.policies import Policy
from reconverge.golden.sm.run import run_sm
from reconverge.hdl.sm.system import SMSystem
from reconverge.kernels import suite
from reconverge.testbench.amaranth_sim import run_simulator

#: A board-sized SM: global memory of 16 KiB in block RAM.
BOARD = replace(
    COSIM, memmap=MemoryMap(global_size=16 << 10, shared_size=1 << 10, local_size=1 << 10)
)


@pytest.mark.parametrize(
    "policy", [Policy.SPS, pytest.param(Policy.MP_OREC, marks=pytest.mark.slow)]
)
def test_board_top_runs_a_kernel(policy: Policy) -> None:
    params = replace(BOARD, config=replace(BOARD.config, policy=policy))
    kernel = suite()["ifElse"]
    launch, case = kernel.launch(hints=params.config.explicit)
    config = launch.config(case.grid, case.block, geometry=params.geometry)
    config = replace(config, memmap=params.memmap)
    golden = run_sm(launch.image, config, params.config)
    assert golden.fault is None

    dut = SMSystem(params, launch.image, case.grid, case.block, config.args)
    memory: list[int] = []
    state: dict[str, int] = {}

    async def bench(ctx) -> None:
        for _ in range(20 * golden.metrics.cycles + 200):
            if ctx.get(dut.done) or ctx.get(dut.fault):
                break
            await ctx.tick()
        state.update(done=ctx.get(dut.done), fault=ctx.get(dut.fault), passed=ctx.get(dut.passed))
        state["code"] = ctx.get(dut.code)
        glob = dut.global_memory
        memory.extend(ctx.get(glob.data[i]) for i in range(glob.depth))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    run_simulator(sim)
    assert state == {"done": 1, "fault": 0, "passed": 1, "code": 0}
    line = params.config.line_bytes
    raw = b"".join(v.to_bytes(line, "little") for v in memory)
    rtl = np.frombuffer(raw, np.uint8)
    want = golden.memory.data[0][: len(rtl)]
    assert np.array_equal(rtl, want)
    outputs = launch.outputs(golden)
    assert all(np.array_equal(outputs[n], v) for n, v in kernel.reference().items())
