"""cocotb on Icarus Verilog (``RECONVERGE_SIM=verilator`` for Verilator): the generated Verilog
of each block against its golden twin, every output every cycle, for three parameter sets per
block (W = L among them; combinational and pipelined arbiters), with the seeds' worked
examples as directed scenarios:

- ``seed000_table2_if_then_else`` — seed 000 Table 2, the arbiter in PC mode;
- ``seed000_listing1_sp_priority`` — seed 000 Sec 3 / Listing 1, SP before PC;
- ``seed000_sec42_memory_coalescing`` — seed 000 Sec 4.2, memory mode with replays;
- ``seed001_fig43_squeeze_steps`` — seed 001 Fig 4.3 / Sec 4.1-4.2, the squeezer;
- ``seed001_fig41_warps_b_c`` — seed 001 Fig 4.1 as Sec 4.1 describes it;
- ``seed002_fig6_nested_divergence`` — seed 002 Fig 6, the split and reconvergence tables;
- ``seed002_fig11_early_reconvergence`` — seed 002 Fig 10/11, OREC;
- ``seed002_sec5_full_split_table_waits``, ``seed002_sec333_barrier_while_diverged``,
  ``calls_and_returns``, ``rt_overflow``, ``random_barrier_storm`` — the tables' other cases;
- ``seed002_fig3_sps`` — seed 002 Fig 3, the SPS stack on Fig 2's if/else;
- ``seed003_fig4_ppc_implicit`` / ``_explicit`` — seed 003 Fig 4/5, the PPC next-PC algorithm;
- ``seed002_fig9_scoreboard_states`` — seed 002 Fig 9 (states 1-6), plain and masked
  scoreboards; ``seed002_fig8_set_full`` — the set-associative table filling up;
- ``seed000_table2_if_then_else`` / ``seed000_listing1_call_sp`` — seed 000 Table 2 and
  Listing 1 on the stack-less control; ``golden_sm_replay`` — the golden SM's own calls into
  its stack-less unit, replayed on the ports;
- ``random`` (thousands of cycles) and ``exhaustive`` (every mask of a small warp).
"""

from __future__ import annotations

import pytest

from reconverge.golden.blocks import ArbiterParams
from reconverge.golden.blocks.base import BlockParams
from reconverge.hdl.blocks.arbiter import Arbiter
from reconverge.testbench import cocotb_run
from reconverge.testbench.scenarios import applicable
from reconverge.testbench.scenarios import arbiter as arbiter_stimulus
from reconverge.testbench.scenarios import dual_path_stack as dual_path_stimulus
from reconverge.testbench.scenarios import scoreboard as scoreboard_stimulus
from reconverge.testbench.scenarios import split_tables as tables_stimulus
from reconverge.testbench.scenarios import sps_stack as sps_stimulus
from reconverge.testbench.scenarios import squeezer as squeezer_stimulus
from reconverge.testbench.scenarios import stackless as stackless_stimulus

pytestmark = pytest.mark.rtl

#: Cycles of a random scenario (the worked examples end sooner): make test-sweep runs 20 000.
CYCLES = 1500


def _cases(param_sets: list[BlockParams]) -> list[object]:
    return [
        pytest.param(params, spec.name, id=f"{params.label()}-{spec.name}")
        for params in param_sets
        for spec in applicable(params)
    ]


SCOREBOARD_SETS = [
    p
    for masked in (False, True)
    for p in scoreboard_stimulus.param_sets(masked, scoreboard_stimulus.PARAM_SETS)
]
#: Every block on its three parameter sets, each with every scenario that fits.
CASES = [
    pytest.param(*case.values, id=f"{case.values[0].name}-{case.id}")
    for case in _cases(
        arbiter_stimulus.PARAM_SETS
        + squeezer_stimulus.PARAM_SETS
        + tables_stimulus.PARAM_SETS
        + sps_stimulus.PARAM_SETS
        + dual_path_stimulus.PARAM_SETS
        + SCOREBOARD_SETS
        + stackless_stimulus.PARAM_SETS
    )
]


@pytest.mark.parametrize(("params", "scenario"), CASES)
def test_block_cocotb(params: BlockParams, scenario: str) -> None:
    """The block's generated Verilog == its golden twin on the named scenario, every output
    every cycle: the arbiter (seed 000 Fig 4b), the squeezer (seed 001 Sec 4.1-4.3), the
    split/reconvergence tables (seed 002 Fig 7), the SPS stack (seed 002 Fig 3), the
    dual-path stack (seed 003 Fig 4/5), the plain and masked scoreboards (seed 002 Fig 8a/8b),
    the stack-less control (seed 000 Sec 4.1, 4.3)."""
    cocotb_run.run(params, scenario, CYCLES)


class _TieToLowerInput(Arbiter):
    """A broken arbiter: on equal keys only the lower input is selected."""

    def _merge(self, m, level, i, a, b):  # type: ignore[no-untyped-def]
        (va, ka, _), (vb, kb, mb) = a, b
        return super()._merge(m, level, i, a, (vb & ~(va & (ka == kb)), kb, mb))


def test_cocotb_catches_a_broken_block() -> None:
    """The cocotb comparison really bites: a tie-breaking bug is reported with the cycle and
    the differing output."""
    params = ArbiterParams(4, 8, 0)
    with pytest.raises(AssertionError, match=r"cycle \d+: HDL and golden arbiter disagree"):
        cocotb_run.run(params, "random", 200, component=_TieToLowerInput(params), variant="-broken")


LONG = [
    pytest.param(params, id=f"{params.name}-{params.label()}")
    for module in (
        arbiter_stimulus,
        squeezer_stimulus,
        tables_stimulus,
        sps_stimulus,
        dual_path_stimulus,
        stackless_stimulus,
    )
    for params in module.PARAM_SETS + module.EXTRA_PARAM_SETS
]
LONG += [
    pytest.param(params, id=f"{params.name}-{params.label()}")
    for masked in (False, True)
    for params in scoreboard_stimulus.param_sets(
        masked, scoreboard_stimulus.PARAM_SETS + scoreboard_stimulus.EXTRA_PARAM_SETS
    )
]
LONG = [case for case in LONG if "random" in {s.name for s in applicable(case.values[0])}]


@pytest.mark.sweep
@pytest.mark.parametrize("params", LONG)
def test_cocotb_long_random(params: BlockParams) -> None:
    """20 000 random cycles on every parameter set, the extra shapes included."""
    cocotb_run.run(params, "random", 20_000)
