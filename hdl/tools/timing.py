"""Every slow path of a mapped ECP5 netlist, estimated (docs/hdl.md, "Every slow path").

nextpnr reports the one critical path of a clock; a design far from its clock has dozens of
endpoints over the period, through unrelated logic, and fixing the worst one shows only the
next. This estimate gives them all from Yosys's ECP5 netlist before place and route: each
cell input's latest arrival after the clock edge, with fixed delays per cell
(:data:`DELAYS`, the speed-grade-6 figures nextpnr's reports show) and a mean routing delay per
net hop (:data:`ROUTING`), the endpoints (flip-flop and block RAM inputs) over the period,
and for each register or RAM a path starts at, its latest endpoint. On the SM at
``--config synth`` the estimate of the critical endpoint is within about 1 ns of nextpnr's
(e2030e3: 27.6 against 28.6 ns; routing varies from 0.4 to 2 ns a hop).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Mean routing delay of a net hop between two cells (ns).
ROUTING = 0.95

#: Cell delays (ns): a source's clock to output, a LUT's input to output, a carry cell's
#: input to sum/carry-out and its carry-in to carry-out, a wide multiplexer's.
DELAYS = {
    "TRELLIS_FF": 0.52,
    "DP16KD": 5.8,
    "PDPW16KD": 5.8,
    "MULT18X18D": 3.93,
    "LUT4": 0.24,
    "CARRY_IN": 0.45,
    "CARRY_CHAIN": 0.06,
    "CARRY_SUM": 0.3,
    "PFUMX": 0.25,
    "L6MUX21": 0.25,
    "other": 0.5,
}

#: Cells whose outputs start paths (their inputs end them). A DSP multiplier without its
#: registers (as Yosys maps the lanes' ``*``) is combinational: its inputs to its product.
SOURCES = ("TRELLIS_FF", "DP16KD", "PDPW16KD", "TRELLIS_DPR16X4")

#: Clock inputs, which end no path.
CLOCKS = ("CLK", "CLKA", "CLKB", "CLKW", "WCK")

#: A cell's name less the suffixes Yosys adds when it maps (what the HDL named).
_SUFFIX = re.compile(r"(_TRELLIS_FF_Q|_LUT4_|_CCU2C_|\$).*")


@dataclass(frozen=True)
class Endpoint:
    """A cell input's latest arrival and the path to it: (arrival ns, cell type, net name)
    from its source on."""

    name: str
    arrival: float
    path: tuple[tuple[float, str, str], ...]

    @property
    def start(self) -> str:
        return _SUFFIX.sub("", re.sub(r"\[\d+\]", "", self.path[0][2])) if self.path else "?"

    def as_json(self) -> dict[str, Any]:
        return {
            "endpoint": self.name,
            "arrival_ns": round(self.arrival, 1),
            "start": self.start,
            "cells": len(self.path),
        }


def _carry_ports(port: str) -> tuple[str, ...]:
    """The inputs of a CCU2C's output ``port`` besides the carry in: its half's for a sum
    (``S0``/``S1``), both halves' for the carry out."""
    if port == "COUT":
        return tuple(p + i for p in "ABCD" for i in "01")
    return tuple(p + port[-1] for p in "ABCD")


class _Arrivals:
    """Arrival times of a flat module's nets, each with the net it came through."""

    def __init__(self, module: dict[str, Any]) -> None:
        self.cells = module["cells"]
        self.names: dict[int, str] = {}
        for name, net in module["netnames"].items():
            for bit in net["bits"]:
                if isinstance(bit, int) and (
                    bit not in self.names or len(name) < len(self.names[bit])
                ):
                    self.names[bit] = name
        self.driver: dict[int, tuple[str, str]] = {}
        for cell_name, cell in self.cells.items():
            for port, bits in cell["connections"].items():
                if cell["port_directions"].get(port) == "output":
                    for bit in bits:
                        if isinstance(bit, int):
                            self.driver[bit] = (cell_name, port)
        self.time: dict[int, float] = {}
        self.via: dict[int, int | None] = {}

    def _inputs(self, cell: dict[str, Any], ports: tuple[str, ...] | None = None) -> list[Any]:
        con, dirs = cell["connections"], cell["port_directions"]
        names = ports if ports is not None else [p for p in con if dirs.get(p) == "input"]
        return [bit for p in names if p in con for bit in con[p]]

    def _latest(self, bits: list[Any]) -> tuple[float, int | None]:
        """The latest of ``bits`` (all timed already; a net on a combinational loop counts
        as 0) and which it is."""
        best: tuple[float, int | None] = (0.0, None)
        for bit in bits:
            if isinstance(bit, int) and (best[1] is None or self.time.get(bit, 0.0) > best[0]):
                best = (self.time.get(bit, 0.0), bit)
        return best

    def arrival(self, bit: Any) -> float:
        """When ``bit`` settles after the clock edge (0 for constants and inputs)."""
        if not isinstance(bit, int) or bit not in self.driver:
            return 0.0
        if bit in self.time:
            return self.time[bit]
        stack = [bit]
        while stack:  # depth first without recursion (paths are hundreds of cells deep)
            top = stack[-1]
            pending = [b for b in self._fanin(top) if isinstance(b, int) and b in self.driver
                       and b not in self.time]  # fmt: skip
            if pending and top not in self.via:
                self.via[top] = None  # entered: a combinational loop ends here
                stack.extend(pending)
                continue
            stack.pop()
            if top not in self.time:
                self.time[top] = self._settle(top)
        return self.time[bit]

    def _fanin(self, bit: int) -> list[Any]:
        cell_name, port = self.driver[bit]
        cell = self.cells[cell_name]
        if cell["type"] in SOURCES and cell["type"] != "TRELLIS_DPR16X4":
            return []
        if cell["type"] == "CCU2C":
            return self._inputs(cell, (*_carry_ports(port), "CIN"))
        if cell["type"] == "TRELLIS_DPR16X4":
            return self._inputs(cell, ("RAD",))
        return self._inputs(cell)

    def _settle(self, bit: int) -> float:
        cell_name, port = self.driver[bit]
        cell = self.cells[cell_name]
        kind = cell["type"]
        if kind in SOURCES and kind != "TRELLIS_DPR16X4":
            self.via[bit] = None
            return DELAYS[kind] + ROUTING
        if kind == "CCU2C":
            con = cell["connections"]
            carry_in = con["CIN"][0]
            k = port[-1] if port != "COUT" else ""
            own, src = self._latest(self._inputs(cell, _carry_ports(port)))
            own += DELAYS["CARRY_IN"]
            chained = self.time.get(carry_in, 0.0) + DELAYS["CARRY_SUM" if k else "CARRY_CHAIN"]
            if isinstance(carry_in, int) and chained > own:
                own, src = chained, carry_in
            self.via[bit] = src
            return own + (ROUTING if k else 0.0)
        if kind in ("PFUMX", "L6MUX21"):
            t, src = self._latest(self._fanin(bit))
            self.via[bit] = src
            return t + DELAYS[kind]
        t, src = self._latest(self._fanin(bit))
        self.via[bit] = src
        return t + DELAYS.get(kind, DELAYS["other"]) + ROUTING

    def path(self, bit: int) -> tuple[tuple[float, str, str], ...]:
        steps = []
        seen = set()
        current: int | None = bit
        while current is not None and current in self.driver and current not in seen:
            seen.add(current)
            cell_name, _ = self.driver[current]
            steps.append((self.time.get(current, 0.0), self.cells[cell_name]["type"],
                          self.names.get(current, cell_name)))  # fmt: skip
            current = self.via.get(current)
        return tuple(reversed(steps))


def endpoints(module: dict[str, Any]) -> list[Endpoint]:
    """Every endpoint (a source cell's data, enable or address input, by cell and port, its
    bits merged) of a flat module, latest first."""
    arrivals = _Arrivals(module)
    latest: dict[str, tuple[float, Any]] = {}
    for cell_name, cell in module["cells"].items():
        if cell["type"] not in SOURCES:
            continue
        for port, bits in cell["connections"].items():
            if cell["port_directions"].get(port) != "input" or port in CLOCKS:
                continue
            key = f"{_SUFFIX.sub('', cell_name)}:{port}"
            for bit in bits:
                t = arrivals.arrival(bit)
                if isinstance(bit, int) and t > latest.get(key, (-1.0, None))[0]:
                    latest[key] = (t, bit)
    found = [Endpoint(k, t, arrivals.path(b)) for k, (t, b) in latest.items()]
    return sorted(found, key=lambda e: -e.arrival)


def slow_paths(flat_json: Path, top: str, period_ns: float) -> dict[str, Any]:
    """The endpoints of ``top`` in a flattened Yosys JSON netlist later than ``period_ns``,
    and per start register its latest one."""
    module = json.loads(flat_json.read_text())["modules"][top]
    found = endpoints(module)
    slow = [e for e in found if e.arrival > period_ns]
    by_start: dict[str, Endpoint] = {}
    for e in slow:
        by_start.setdefault(e.start, e)
    return {
        "period_ns": period_ns,
        "endpoints": len(found),
        "over": len(slow),
        "latest_ns": round(found[0].arrival, 1) if found else 0.0,
        "by_start": [e.as_json() for e in by_start.values()],
    }
