"""Write-back delay lines: when each destination register is released in the scoreboard
(docs/sm-hardware.md, "Write-backs"; golden: the write-back times of ``golden.sm.core``).

An instruction that writes a register enters the line of its latency class at its last pass
(a memory instruction: at its last LSU cycle) and leaves it ``latency`` cycles later, which
releases (warp, rd, mask) in the scoreboard in that cycle. One instruction enters one line per
cycle at most, and instructions enter a line in issue order, so each line releases at most one
entry per cycle: the scoreboard gets one release port per line. ``next_release`` shows what
each line releases in the next cycle (its second-to-last stage, or its input when its latency is
1), so that the SM can register what depends on a warp's write-backs having drained.
"""

from __future__ import annotations

import enum

from amaranth.hdl import Module, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from reconverge.golden.config import Latencies
from reconverge.golden.params import SMParams


class LatencyClass(enum.IntEnum):
    """The write-back latencies of :class:`golden.config.Latencies`, one line each."""

    ALU = 0
    MUL = 1
    DIV = 2
    SHARED = 3
    GLOBAL = 4

    def latency(self, latencies: Latencies) -> int:
        name = {LatencyClass.GLOBAL: "global_"}.get(self, self.name.lower())
        return getattr(latencies, name)


def entry_layout(params: SMParams) -> data.StructLayout:
    """A pending write-back: the warp slot, the register and the threads it writes."""
    return data.StructLayout(
        {
            "valid": 1,
            "warp": params.warp_bits,
            "rd": 5,
            "mask": params.geometry.warp_size,
        }
    )


#: The lines each input feeds: the issue's last pass, and the LSU's last cycle.
ISSUE_LINES = (LatencyClass.ALU, LatencyClass.MUL, LatencyClass.DIV)
MEMORY_LINES = (LatencyClass.SHARED, LatencyClass.GLOBAL)


class WritebackLines(wiring.Component):
    """Ports: in ``issue`` (the entry of an instruction in its last pass) with ``issue_line``
    (ALU, MUL or DIV), ``memory`` (the entry of a memory instruction at its last LSU cycle)
    with ``memory_line`` (SHARED or GLOBAL) — the two can come in the same cycle, into
    different lines; out ``release`` [one per class], ``next_release`` [one per class: what it
    releases in the next cycle], ``pending`` (some entry is in a line and not leaving this
    cycle)."""

    def __init__(self, params: SMParams) -> None:
        self.params = params
        entry = entry_layout(params)
        super().__init__(
            {
                "issue": In(entry),
                "issue_line": In(range(len(LatencyClass))),
                "memory": In(entry),
                "memory_line": In(range(len(LatencyClass))),
                "release": Out(data.ArrayLayout(entry, len(LatencyClass))),
                "next_release": Out(data.ArrayLayout(entry, len(LatencyClass))),
                "pending": Out(1),
            }
        )

    def elaborate(self, platform: object) -> Module:
        m = Module()
        entry = entry_layout(self.params)
        waiting = []
        for cls in LatencyClass:
            stages = [
                Signal(entry, name=f"{cls.name.lower()}_{k}")
                for k in range(cls.latency(self.params.config.latencies))
            ]
            source, line = (
                (self.issue, self.issue_line) if cls in ISSUE_LINES
                else (self.memory, self.memory_line)
            )  # fmt: skip
            taken = Signal(entry, name=f"{cls.name.lower()}_in")
            m.d.comb += taken.eq(source)
            m.d.comb += taken.valid.eq(source.valid & (line == cls))
            chain = [taken, *stages]
            for previous, stage in zip(chain, stages, strict=False):
                m.d.sync += stage.eq(previous)
            m.d.comb += [
                self.release[cls].eq(chain[-1]),
                self.next_release[cls].eq(chain[-2]),
            ]
            waiting += [stage.valid for stage in stages[:-1]]
        pending = Signal()
        for valid in waiting:
            pending = pending | valid
        m.d.comb += self.pending.eq(pending)
        return m
