"""Switching activity of each HDL block's RTL driven alone by its lock-step scenario, beside the
energy model's prediction from the events of the same inputs (issue 11; docs/energy.md, "The
blocks alone"; the model side is ``golden/cost/block_energy.py``).

The block's Verilog (the same text ``reconverge verilog`` writes) is built with Verilator's
toggle coverage (:func:`reconverge.testbench.cosim.build`, ``build/cosim/verilator/<key>-toggles``)
and runs the block's cocotb lock-step test (``testbench/cocotb_blocks.py``: every output
compared with the golden twin every cycle) on a scenario of ``testbench/scenarios``. Toggles are
counted as for the SM (``golden/cost/activity.py``: each net once, at its driver; weighted by
Yosys's generic cells per bit), over the whole block. The same scenario runs a second time,
stopped after :data:`PREFIX` cycles (``RECONVERGE_STOP``), and its counts are subtracted: what
is left is cycles ``PREFIX`` to the end, without the first evaluation's rises of every bit that
starts at 1. The events are counted from the inputs of the same cycles, replayed on the golden
twin alone.

    python -m reconverge.golden.cost.block_activity OUT.json [--resume] [--block NAME]

measures every block at the three parameter sets of docs/area.md (the registry's
``area_sets``) on its ``random`` scenario for :data:`CYCLES` cycles.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from reconverge.golden.blocks.base import BlockParams, Values
from reconverge.golden.cost.activity import (
    MeasuredSet,
    Netlist,
    StageActivity,
    difference,
    module_cells,
    read_coverage,
    stages,
)
from reconverge.golden.cost.block_energy import BLOCK_STAGES, block_events
from reconverge.hdl.registry import BLOCKS, lookup
from reconverge.hdl.tools.verilog import to_verilog
from reconverge.testbench.build import Design, build, sources_digest, verilog_text
from reconverge.testbench.cocotb_run import TEST_MODULE
from reconverge.testbench.lockstep import RESET
from reconverge.testbench.runner import build_root, check_results, run_test
from reconverge.testbench.scenarios import rng_for, scenarios_for

#: Cycles of a measured run, and of the prefix subtracted from it.
CYCLES = 3000
PREFIX = 1
#: The scenario every block has: random inputs valid by construction.
SCENARIO = "random"


def block_design(params: BlockParams) -> Design:
    """The Verilog of the registry's block of ``params``, top module named as the block."""
    name = params.name

    def verilog() -> str:

        return to_verilog(lookup(name).build(params), name)

    label = params.label()
    key = f"block-{name}-{hashlib.sha256(label.encode()).hexdigest()[:12]}"
    return Design(name, key, f"{label}-{sources_digest()}", verilog)


def scenario_inputs(params: BlockParams, scenario: str, cycles: int) -> list[Values | None]:
    """Each cycle's inputs of ``scenario`` on the golden twin alone (None: a reset cycle), as
    the lock-step test drives them."""
    model = params.twin()
    stream = scenarios_for(params.name)[scenario].make(model, rng_for(params, scenario), cycles)
    model.reset()
    out: list[Values | None] = []
    step = next(stream)
    while True:
        if step is RESET:
            out.append(None)
            outputs = model.outputs(model.idle_inputs())
            model.reset()
        else:
            assert isinstance(step, dict)
            out.append(dict(step))
            outputs = model.step(step)
        try:
            step = stream.send(outputs)
        except StopIteration:
            return out


def _measure_run(
    design: Design,
    params: BlockParams,
    scenario: str,
    cycles: int,
    coverage: Path,
    stop: int | None = None,
) -> None:
    """The lock-step test of ``scenario`` (stopped after ``stop`` cycles) on the
    toggle-coverage build; its counts to ``coverage``. AssertionError with cocotb's message
    when HDL and golden disagree."""
    runner, build_dir = build(design, "verilator", toggles=True)
    env = {
        "RECONVERGE_BLOCK": params.name,
        "RECONVERGE_PARAMS": json.dumps(params.values()),
        "RECONVERGE_SCENARIO": scenario,
        "RECONVERGE_CYCLES": str(cycles),
        **({} if stop is None else {"RECONVERGE_STOP": str(stop)}),
    }
    with tempfile.TemporaryDirectory(dir=build_dir) as tmp:
        results, log = run_test(
            runner, test_module=TEST_MODULE, top=design.top, build_dir=build_dir,
            test_dir=Path(tmp), env=env,
            plusargs=[f"+verilator+coverage+file+{coverage.resolve()}"],
            test_args=["--coverage-per-instance"],
        )  # fmt: skip
        check_results(results, log)


def block_activity(
    params: BlockParams, scenario: str = SCENARIO, cycles: int = CYCLES
) -> tuple[StageActivity, dict[str, int]]:
    """The block's measured activity (one part: the whole block) over cycles ``PREFIX`` to the
    end of ``scenario``, and the events of the same cycles (:func:`block_events`)."""
    inputs = scenario_inputs(params, scenario, cycles)
    design = block_design(params)
    runs = build_root() / "activity" / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=runs) as tmp:
        after, before = Path(tmp, "run.dat"), Path(tmp, "prefix.dat")
        _measure_run(design, params, scenario, cycles, after)
        _measure_run(design, params, scenario, cycles, before, stop=PREFIX)
        toggles = difference(read_coverage(after), read_coverage(before))
    netlist = Netlist.parse(verilog_text(design), top=design.top)
    rows, _ = stages(netlist, toggles, module_cells(design), part=lambda path: params.name)
    return rows[0], block_events(params.name, inputs[PREFIX:])


def measure(params: BlockParams) -> dict[str, Any]:
    """One row of the measured set."""
    started = time.monotonic()
    activity, events = block_activity(params)
    return {
        "block": params.name,
        "stage": BLOCK_STAGES[params.name],
        "params": params.values(),
        "scenario": SCENARIO,
        "cycles": events["cycles"],
        "activity": activity.json(),
        "events": events,
        "seconds": round(time.monotonic() - started, 1),
    }


def _key(row: Mapping[str, Any]) -> str:
    return json.dumps([row["block"], row["params"]], sort_keys=True)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    parser = MeasuredSet.parser(
        "reconverge.golden.cost.block_activity",
        "Measure the RTL switching activity of every HDL block at its three area parameter sets "
        "on its random scenario (golden/cost/block_activity.py)",
    )
    parser.add_argument("--block", action="append", choices=sorted(BLOCKS), help="(default: all)")
    ns = parser.parse_args(args)
    measured = MeasuredSet(
        ns.output,
        ns.resume,
        ["python -m reconverge.golden.cost.block_activity", *args],
        "golden/cost/block_activity.py (module docstring): the toggles of the block's nets from "
        "the end of the first cycle to the end of the scenario, each net once, at its driver, "
        "weighted by Yosys generic cells per bit; events from the same cycles' inputs "
        "(golden/cost/block_energy.py)",
    )
    rows = measured.rows
    done = {_key(r) for r in rows}

    for name in ns.block or sorted(BLOCKS):
        spec = lookup(name)
        for values in spec.area_sets:
            params = spec.make(values)
            row = {"block": name, "params": params.values()}
            if _key(row) in done:
                continue
            rows.append(measure(params))
            a = rows[-1]["activity"]
            print(f"{name} {params.describe()}: {a['toggles']} toggles of {a['bits']} bits, "
                  f"{a['cells']} cells, {rows[-1]['seconds']} s", flush=True)  # fmt: skip
            measured.write()
    measured.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
