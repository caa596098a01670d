"""The stack components beyond the lock-step runs: their registers as synthesis counts them,
the CLI on their parameters, and the seed 003 Fig 4 scenario catching a stack without the
paired-path comparison."""

from __future__ import annotations

import json

import pytest

from reconverge.golden.blocks import DualPathStackParams
from reconverge.golden.cli import main
from reconverge.golden.policies import Policy
from reconverge.hdl.blocks.dual_path_stack import DualPathStack
from reconverge.testbench.amaranth_sim import simulate
from reconverge.testbench.lockstep import Mismatch
from reconverge.testbench.scenarios import dual_path_stack, rng_for


@pytest.mark.synth
def test_sps_stack_registers(capsys) -> None:
    """Per entry below the top PC, mask, RPC and call flag (one entry at depth 2: the higher
    is only ever the top), and the copy of the top entry; the stack pointer, the waiting and
    live lanes, the overflow flag and whether a call entry is on the stack:
    2 + 2 x (8 + 4 + 8 + 1) + 4 + 4 + 1 + 1 flip-flops for W = 4, depth 2, 8-bit PCs."""
    argv = ["synth", "sps_stack", "--param", "warp_size=4", "--param", "stack_depth=2"]
    assert main([*argv, "--param", "pc_width=8", "--no-pnr", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    # sp; per stored entry and the top's copy PC, mask, RPC, call flag; waiting and live;
    # overflow; in a call
    assert r["generic"]["flip_flops"] == 2 + 2 * (8 + 4 + 8 + 1) + 4 + 4 + 1 + 1


def test_stack_cli(capsys) -> None:
    assert main(["verilog", "dual_path_stack", "--param", "warp_size=4", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    ports = {p["name"]: p["bits"] for p in info["ports"]}
    assert ports["splits__pc"] == 64 and ports["splits__mask"] == 8
    assert ports["status__stack"] == 5 and ports["splits__sid"] == 2 * 5
    assert info["latency"] == 1 and info["params"]["policy"] == "ppc"
    argv = ["verilog", "dual_path_stack", "--param", "policy=dps", "--param", "hints=0", "--json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["params"]["policy"] == "dps"
    assert main(["verilog", "dual_path_stack", "--param", "policy=mp"]) == 2
    assert "policy must be dps or ppc, not mp" in capsys.readouterr().err
    assert main(["verilog", "dual_path_stack", "--param", "hints=2"]) == 2
    assert "hints='2' is not 0 or 1" in capsys.readouterr().err


class _NoPairedComparison(DualPathStack):
    """A broken implicit PPC stack: the two path PCs are never compared."""

    def _finished(self, e, waiting):  # type: ignore[no-untyped-def]
        p = e.paths
        live = [self._live(e, s) for s in range(2)]
        return (~live[0] | p[0].ret | p[0].done) & (~live[1] | p[1].ret | p[1].done)


def test_fig4_catches_a_stack_without_paired_comparison() -> None:
    params = DualPathStackParams(4, 4, 16, Policy.PPC, hints=False)
    dut = _NoPairedComparison(params)
    scenario = dual_path_stack.fig4_implicit(params.twin(), rng_for("broken"), 0)
    # the paths meet at B: golden's stack pops the entry in the next clock (busy), the broken
    # one keeps offering the path
    with pytest.raises(Mismatch, match="out status__busy: HDL 0x0, golden 0x1"):
        simulate(dut, scenario)
