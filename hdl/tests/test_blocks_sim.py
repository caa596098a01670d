"""The cocotb stimulus in Amaranth's own simulator: each block against its golden twin, every
output every cycle (fast unit tests; the cocotb suite on the generated Verilog is the one that
counts). Seed scenarios: seed 000 Table 2 / Listing 1 / Sec 4.2, seed 001 Fig 4.1 / Fig 4.3,
seed 002 Fig 6 / Fig 11 / Sec 3.3.3 / Sec 5 (split tables; the W = 32 set runs under cocotb
only, Amaranth's simulator takes a minute for it), seed 002 Fig 3 (SPS stack), seed 003
Fig 4/5 (PPC)."""

from __future__ import annotations

import pytest

from reconverge.golden.blocks import ArbiterParams
from reconverge.hdl.blocks.arbiter import Arbiter
from reconverge.hdl.blocks.split_tables import SplitTables
from reconverge.hdl.blocks.stackless import Stackless
from reconverge.hdl.registry import lookup
from reconverge.testbench.amaranth_sim import simulate
from reconverge.testbench.lockstep import Mismatch
from reconverge.testbench.scenarios import applicable, rng_for
from reconverge.testbench.scenarios import arbiter as arbiter_stimulus
from reconverge.testbench.scenarios import dual_path_stack as dual_path_stimulus
from reconverge.testbench.scenarios import scoreboard as scoreboard_stimulus
from reconverge.testbench.scenarios import split_tables as tables_stimulus
from reconverge.testbench.scenarios import sps_stack as sps_stimulus
from reconverge.testbench.scenarios import squeezer as squeezer_stimulus
from reconverge.testbench.scenarios import stackless as stackless_stimulus

CYCLES = 400

SETS = {
    "arbiter": arbiter_stimulus.PARAM_SETS + arbiter_stimulus.EXTRA_PARAM_SETS,
    "squeezer": squeezer_stimulus.PARAM_SETS + squeezer_stimulus.EXTRA_PARAM_SETS,
    "split_tables": tables_stimulus.PARAM_SETS[:2] + tables_stimulus.EXTRA_PARAM_SETS,
    "sps_stack": sps_stimulus.PARAM_SETS + sps_stimulus.EXTRA_PARAM_SETS,
    "dual_path_stack": dual_path_stimulus.PARAM_SETS + dual_path_stimulus.EXTRA_PARAM_SETS,
}
for masked in (False, True):
    SETS["masked_scoreboard" if masked else "scoreboard"] = scoreboard_stimulus.param_sets(
        masked, scoreboard_stimulus.PARAM_SETS + scoreboard_stimulus.EXTRA_PARAM_SETS
    )
SETS["stackless"] = stackless_stimulus.PARAM_SETS + stackless_stimulus.EXTRA_PARAM_SETS
CASES = [
    pytest.param(params, spec, id=f"{block}-{params.label()}-{spec.name}")
    for block, sets in SETS.items()
    for params in sets
    for spec in applicable(params)
]


@pytest.mark.parametrize(("params", "spec"), CASES)
def test_block_matches_golden_in_amaranth_sim(params, spec) -> None:
    dut = lookup(params.name).build(params)
    rng = rng_for(params, spec.name)
    label = f"{params.name} {params.describe()} {spec.name}"
    cycles = simulate(dut, spec.make(params.twin(), rng, CYCLES), label)
    assert cycles > 0


class _MaskDropsLastInput(Arbiter):
    """A broken arbiter: the last input never appears in the mask."""

    def elaborate(self, platform):  # type: ignore[no-untyped-def]
        m = super().elaborate(platform)
        m.d.comb += self.mask[-1].eq(0)
        return m


def test_lockstep_catches_a_broken_block() -> None:
    params = ArbiterParams(4, 8, 0)
    dut = _MaskDropsLastInput(params)
    scenario = arbiter_stimulus.random_stream(params.twin(), rng_for("broken"), 200)
    with pytest.raises(Mismatch, match=r"out mask: HDL 0x[0-9a-f]+, golden 0x[0-9a-f]+"):
        simulate(dut, scenario)


class _LastFreeEntry(SplitTables):
    """Broken tables: a new split takes the last free ST entry, not the first."""

    def _first(self, m, name, bits):  # type: ignore[no-untyped-def]
        if not name.endswith("_st_free"):
            return super()._first(m, name, bits)
        onehot, found = super()._first(m, name, bits[::-1])
        return onehot[::-1], found


def test_lockstep_catches_broken_split_tables() -> None:
    """Seed 002 Sec 3.3 places new entries in the first unallocated ST entries (Fig 6): the
    divergence's first split, inserted in the cycle after it, goes to entry 0."""
    params = tables_stimulus.PARAM_SETS[0]
    dut = _LastFreeEntry(params)
    scenario = tables_stimulus.fig6(params.twin(), rng_for("broken"), 0)
    with pytest.raises(Mismatch, match=r"out tables__st_valid: HDL 0x8, golden 0x1"):
        simulate(dut, scenario)


class _TreeAlwaysGranted(Stackless):
    """A broken stack-less control: the LSU is granted the tree even in cycles in which the
    control arbitrates its PC (seed 000 Sec 4.3: then the LSU must wait)."""

    def elaborate(self, platform):  # type: ignore[no-untyped-def]
        m = super().elaborate(platform)
        tree = m.submodules.arbiter
        m.d.comb += [
            self.coalesce.granted.eq(self.coalesce.valid.any()),
            self.coalesce.min_key.eq(tree.min_key),
            self.coalesce.mask.eq(tree.mask),
        ]
        return m


def test_lockstep_catches_a_tree_shared_wrongly() -> None:
    params = stackless_stimulus.PARAM_SETS[0]
    dut = _TreeAlwaysGranted(params)
    scenario = stackless_stimulus.unified_tree(params.twin(), rng_for("broken"), 400)
    with pytest.raises(Mismatch, match=r"out coalesce__granted: HDL 0x1, golden 0x0"):
        simulate(dut, scenario)
