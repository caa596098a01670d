"""Build the Verilog of a block once per parameter set and run a cocotb scenario on it with
cocotb's Python runner (``cocotb_tools.runner``).

Simulator: Icarus Verilog by default; ``RECONVERGE_SIM=verilator`` selects Verilator (see
:mod:`reconverge.testbench.verilator`). Build products go to ``$RECONVERGE_BUILD`` (default
``./build``) under ``cocotb/<sim>/<block>-<params>/``; a file lock keeps parallel pytest
workers from compiling the same parameter set twice. ``WAVES=1`` records an FST waveform
(``<block>.fst`` in the scenario's directory; Icarus).
"""

from __future__ import annotations

import fcntl
import json
import os
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from reconverge.golden.blocks.base import BlockParams

#: Generated Verilog by (block, parameters, variant): converting a large block takes seconds.
_VERILOG: dict[tuple[str, str, str], str] = {}

#: The cocotb test module (one generic lock-step test, told what to run by environment).
TEST_MODULE = "reconverge.testbench.cocotb_blocks"


def build_root() -> Path:
    return Path(os.environ.get("RECONVERGE_BUILD", "build")).resolve()


def simulator() -> str:
    sim = os.environ.get("RECONVERGE_SIM", "icarus")
    if sim not in ("icarus", "verilator"):
        raise ValueError(f"RECONVERGE_SIM={sim!r}: use icarus or verilator")
    return sim


@contextmanager
def _locked(directory: Path) -> Iterator[None]:
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def write_if_changed(path: Path, text: str) -> None:
    """Keep the file (and its time stamp, so the simulator build is reused) when unchanged."""
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def _runner(sim: str) -> Any:
    from cocotb_tools.runner import get_runner

    if sim == "verilator":
        from reconverge.testbench.verilator import prepare

        prepare()
    return get_runner(sim)


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
    runner = _runner(sim)
    with _locked(build_dir):
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
    results = test_dir / "results.xml"
    env = {
        "RECONVERGE_BLOCK": block,
        "RECONVERGE_PARAMS": json.dumps(params.values()),
        "RECONVERGE_SCENARIO": scenario,
        "RECONVERGE_CYCLES": str(cycles),
    }
    with suppress(SystemExit):  # the runner exits when a test failed: the results say why
        runner.test(
            test_module=TEST_MODULE,
            hdl_toplevel=block,
            hdl_toplevel_lang="verilog",
            build_dir=build_dir,
            test_dir=test_dir,
            extra_env=env,
            results_xml=str(results),
            log_file=test_dir / "sim.log",
            plusargs=[f"+dumpfile_path={test_dir / block}.fst"]
            if "-waves" in str(build_dir)
            else [],
        )
    return _check_results(results, test_dir / "sim.log")


def _check_results(results: Path, log: Path) -> dict[str, object]:
    if not results.exists():
        raise AssertionError(f"cocotb left no results (see {log}):\n{_tail(log)}")
    cases = list(ET.parse(results).getroot().iter("testcase"))
    if not cases:
        raise AssertionError(f"cocotb ran no test (see {log}):\n{_tail(log)}")
    for case in cases:
        for failure in [*case.iter("failure"), *case.iter("error")]:
            message = failure.get("message") or failure.text or "failed"
            raise AssertionError(f"cocotb {case.get('name')}: {message}\n{_tail(log)}")
    return dict(cases[0].attrib)


def _tail(log: Path, lines: int = 40) -> str:
    if not log.exists():
        return ""
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
