"""``reconverge bitstream``: a board's bitstream of the SM with its program (docs/sm-hardware.md,
"On a board").

The board top (:mod:`reconverge.hdl.tools.board_top`) goes through the board's amaranth-boards
platform, which adds the I/O buffers, the clock and reset and writes the pin constraints;
then Yosys (the ECP5 script of :mod:`reconverge.hdl.tools.synth`, or ``synth_ice40``), a
check of the resources against the device, nextpnr and the family's packer, all from YoWASP
(PyPI). The SM's clock enable gives its logic ``divider`` oscillator periods per step;
nextpnr knows no multicycle paths, so the Fmax it reports is that of the SM's longest path,
and place and route is refused when the oscillator's frequency / ``divider`` exceeds it.
"""

from __future__ import annotations

import json
import math
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reconverge.golden.errors import UserError
from reconverge.golden.output import atomic_output
from reconverge.hdl.tools.boards import RESOURCES, Board
from reconverge.hdl.tools.synth import find_tool, run_tool, stat_cells, yosys_script

#: Steps a build may stop after.
STEPS = ("synth", "pnr")
TOP = "top"
#: The area model (golden/cost) is within 15 % of synthesis on its calibration rows; a design
#: it estimates at more than this many times a device's LUT4s is refused without synthesis.
ESTIMATE_MARGIN = 1.5


def refuse_estimate(luts: float, b: Board) -> None:
    """A one-line error when the area model's LUT4 estimate of the SM is more than
    :data:`ESTIMATE_MARGIN` times ``b``'s LUT4s (an iCE40, without LUT RAM, needs more still)."""
    capacity = b.capacity["luts"]
    if luts > ESTIMATE_MARGIN * capacity:
        raise UserError(
            f"the SM does not fit {b.title}: LUT4 {round(luts):,} needed (area model, "
            f"golden/cost), {capacity:,} available; refused before synthesis"
        )


def check_timing(fmax: float, clock_mhz: float, divider: int) -> None:
    """A one-line error when the oscillator / ``divider`` is faster than ``fmax`` (MHz)."""
    needed = math.ceil(clock_mhz / fmax)
    if needed > divider:
        raise UserError(
            f"the design reaches {fmax:.2f} MHz after place and route, below the "
            f"{clock_mhz:g} MHz / {divider} = {clock_mhz / divider:.2f} MHz of its clock "
            f"enable: build with --divider {needed}"
        )


def _count(cells: dict[str, int], weights: dict[str, int]) -> int:
    total = 0
    for kind, n in cells.items():
        for name, weight in weights.items():
            if kind == name or (name.endswith("*") and kind.startswith(name[:-1])):
                total += weight * n
    return total


def _prepare(system: Any, b: Board, divider: int, work: Path) -> None:
    """The board top's RTLIL and the platform's constraints in ``work``."""
    from reconverge.hdl.tools.board_top import BoardTop, OnBoard

    platform = b.platform()
    top = BoardTop(system, clock_hz=int(platform.default_clk_frequency), divider=divider)
    plan = platform.prepare(OnBoard(top, b), TOP, emit_src=False)
    for suffix in ("il", b.family.constraints[1]):
        (work / f"{TOP}.{suffix}").write_text(plan.files[f"{TOP}.{suffix}"])


def _synthesise(b: Board, work: Path) -> dict[str, Any]:
    f = b.family
    yosys_script(f.synth_script.format(top=TOP), work, f.name)
    cells = stat_cells(work / f.stat, TOP)
    used = {r: _count(cells, f.cells[r]) for r in RESOURCES}
    for r, label in RESOURCES.items():
        if used[r] > b.capacity[r]:
            raise UserError(
                f"the design does not fit {b.title}: {label} {used[r]:,} needed (Yosys), "
                f"{b.capacity[r]:,} available; choose a smaller geometry "
                "(--warp-size, --simd-width, --warps)"
            )
    return {"cells": cells, "used": used}


def _place_and_route(b: Board, work: Path, clock_mhz: float, divider: int) -> dict[str, Any]:
    f = b.family
    cmd = [find_tool(*f.nextpnr), *b.device, "--json", f"{TOP}.json"]
    cmd += [f.constraints[0], f"{TOP}.{f.constraints[1]}", f.routed[0], f"{TOP}.{f.routed[1]}"]
    cmd += ["--report", "report.json", "--seed", "1", "--timing-allow-fail", "-q"]
    run_tool(cmd, work, f"nextpnr-{f.name}")
    report = json.loads((work / "report.json").read_text())
    fmax = min(v["achieved"] for v in report["fmax"].values())
    check_timing(fmax, clock_mhz, divider)
    found = report["utilization"]
    placed = {r: {"bel": bel, **found[bel]} for r, bel in f.placed.items()}
    return {"placed": placed, "fmax_mhz": round(fmax, 2)}


def build(
    system: Callable[[], Any],
    b: Board,
    *,
    divider: int | None = None,
    output: Path,
    stop_after: str | None = None,
    workdir: Path | None = None,
) -> dict[str, Any]:
    """The bitstream of ``system()`` (a fresh elaboratable) on board ``b`` at ``output``, or the
    figures up to ``stop_after`` (``synth``, ``pnr``): resources used and available, Fmax, the
    seconds of each step."""
    divider = divider or b.divider
    platform = b.platform()
    clock_mhz = platform.default_clk_frequency / 1e6
    result: dict[str, Any] = {
        "board": b.name,
        "device": b.title,
        "capacity": b.capacity,
        "clock_mhz": clock_mhz,
        "divider": divider,
        "sm_clock_mhz": round(clock_mhz / divider, 4),
        "fmax_mhz": None,
        "placed": None,
        "bitstream": None,
        "stopped_after": stop_after,
        "seconds": {},
    }
    with tempfile.TemporaryDirectory(prefix="reconverge-bitstream-") as tmp:
        work = workdir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        steps: list[tuple[str, Callable[[], dict[str, Any] | None]]] = [
            ("elaborate", lambda: _prepare(system(), b, divider, work)),
            ("synth", lambda: _synthesise(b, work)),
            ("pnr", lambda: _place_and_route(b, work, clock_mhz, divider)),
            ("pack", lambda: _pack(b, work, output)),
        ]
        for name, step in steps:
            started = time.monotonic()
            result.update(step() or {})
            result["seconds"][name] = round(time.monotonic() - started, 1)
            if name == stop_after:
                break
    return result


def _pack(b: Board, work: Path, output: Path) -> dict[str, Any]:
    f = b.family
    routed, bits = f"{TOP}.{f.routed[1]}", f"{TOP}.{f.bitstream}"
    args = [a.format(routed=routed, bitstream=bits) for a in f.pack_args]
    run_tool([find_tool(*f.packer), *args], work, f.packer[1])
    with atomic_output(output) as tmp:
        shutil.copyfile(work / bits, tmp)
    return {"bitstream": str(output), "bytes": output.stat().st_size}


def format_result(r: dict[str, Any], label: str) -> str:
    """The resources against the device's, the clocks, the bitstream."""
    lines = [
        f"{label} on {r['device']}",
        f"  {'resource':<12}{'used':>9}{'available':>11}  (after Yosys)",
    ]
    for key, name in RESOURCES.items():
        used, capacity = r["used"][key], r["capacity"][key]
        lines.append(f"  {name:<12}{used:>9,}{capacity:>11,}{100 * used / capacity:>6.1f} %")
    if r["placed"]:
        placed = ", ".join(f"{p['bel']} {p['used']:,} of {p['available']:,}"
                           for p in r["placed"].values())  # fmt: skip
        lines.append(f"  placed: {placed}")
        lines.append(
            f"  Fmax {r['fmax_mhz']} MHz (nextpnr); the SM runs at {r['clock_mhz']:g} MHz / "
            f"{r['divider']} = {r['sm_clock_mhz']:g} MHz (clock enable)"
        )
    if r["bitstream"]:
        lines.append(f"  bitstream: {r['bitstream']} ({r['bytes']:,} bytes)")
    else:
        lines.append(f"  stopped after {r['stopped_after']}: no bitstream")
    steps = ", ".join(f"{k} {v} s" for k, v in r["seconds"].items())
    lines.append(f"  {steps}")
    return "\n".join(lines)
