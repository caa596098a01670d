"""Build the Verilog of a block once per parameter set and run a cocotb scenario on it with
cocotb's Python runner (``cocotb_tools.runner``).

Simulator: Icarus Verilog by default; ``RECONVERGE_SIM=verilator`` selects Verilator
(:mod:`.runner`). Build products go to ``cocotb/<sim>/<block>-<params>/`` of the build root;
a file lock keeps parallel pytest workers from compiling the same parameter set twice.
``WAVES=1`` records an FST waveform (``<block>.fst`` in the scenario's directory; Icarus).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reconverge.golden.blocks.base import BlockParams
from reconverge.testbench.runner import (
    build_root,
    check_results,
    get_runner,
    locked,
    run_test,
    simulator,
    write_if_changed,
)

#: Generated Verilog by (block, parameters, variant): converting a large block takes seconds.
_VERILOG: dict[tuple[str, str, str], str] = {}

#: The cocotb test module (one generic lock-step test, told what to run by environment).
TEST_MODULE = "reconverge.testbench.cocotb_blocks"


def build(
    block: str,
    params: BlockParams | Mapping[str, object],
    component: Any = None,
    variant: str = "",
) -> tuple[Any, Path]:
    """Generate the Verilog of a component with top module ``block`` and compile it for the
    simulator (once per parameter set). Without ``component`` it is the registry's block
    built from ``params`` (its :class:`BlockParams`); ``component`` replaces it (a deliberately
    broken block, say, to test the testbench, or any other component, whose ``params`` are then
    the values that name its build), built under the name suffix ``variant``."""
    from reconverge.hdl.registry import lookup
    from reconverge.hdl.tools.verilog import to_verilog

    if isinstance(params, BlockParams):
        label = params.label()
    else:
        label = "-".join(f"{k}{v}" for k, v in params.items())
    sim = simulator()
    if os.environ.get("WAVES", "0") not in ("", "0"):
        variant += "-waves"  # a build with the waveform dumper compiled in
    build_dir = build_root() / "cocotb" / sim / f"{block}-{label}{variant}"
    runner = get_runner(sim)
    with locked(build_dir):
        source = build_dir / f"{block}.v"
        key = (block, label, variant)
        if component is not None or key not in _VERILOG:  # one conversion per process
            dut = lookup(block).build(params) if component is None else component  # type: ignore[arg-type]
            _VERILOG[key] = to_verilog(dut, block)
        write_if_changed(source, _VERILOG[key])
        build_args = ["-Wno-fatal", "-Wno-WIDTH", "-Wno-CASEOVERLAP"] if sim == "verilator" else []
        binary = build_dir / block
        if (
            sim == "verilator"
            and binary.exists()
            and binary.stat().st_mtime > source.stat().st_mtime
        ):
            return runner, build_dir  # cocotb's Verilator runner always rebuilds otherwise
        runner.build(
            sources=[source],
            hdl_toplevel=block,
            build_dir=build_dir,
            timescale=("1ns", "1ps"),
            build_args=build_args,
            log_file=build_dir / "build.log",
        )
    return runner, build_dir


def run(
    params: BlockParams,
    scenario: str,
    cycles: int,
    component: Any = None,
    variant: str = "",
) -> dict[str, object]:
    """Run one scenario on the block of ``params`` under cocotb; raise AssertionError with
    cocotb's failure message. Returns the test case's attributes from the results file (sim
    time, real time)."""
    block = params.name
    runner, build_dir = build(block, params, component, variant)
    test_dir = build_dir / scenario
    env = {
        "RECONVERGE_BLOCK": block,
        "RECONVERGE_PARAMS": json.dumps(params.values()),
        "RECONVERGE_SCENARIO": scenario,
        "RECONVERGE_CYCLES": str(cycles),
    }
    waves = [f"+dumpfile_path={test_dir / block}.fst"] if "-waves" in str(build_dir) else []
    results, log = run_test(runner, test_module=TEST_MODULE, top=block, build_dir=build_dir,
                            test_dir=test_dir, env=env, plusargs=waves)  # fmt: skip
    return check_results(results, log)
