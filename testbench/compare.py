"""The RTL run held to golden's: the RTL side as a golden run result (:func:`rtl_result`: its
issue trace with warp ids as golden numbers them, exit codes, metrics from the trace and the
status counters with the definitions of :mod:`reconverge.golden.sm.metrics`), and the four
agreement levels of DESIGN.md (:func:`compare`):

1. final global memory and exit codes, and the fault (its kind through
   :attr:`reconverge.golden.faults.FaultCode.kind`, pc, block, thread);
2. each thread's retired PC sequence (projected from the issue streams);
3. each warp's issue stream (pc, active mask, split);
4. the cycle (and passes) of every issue, and the total cycles.

The first difference found at the lowest level that fails is reported with its context
(:class:`Difference`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from reconverge.golden.blocks.divergence import lanes_of
from reconverge.golden.faults import FaultCode, SimtFault
from reconverge.golden.functional import LaunchConfig
from reconverge.golden.isa import sext
from reconverge.golden.memmap import GLOBAL_BASE
from reconverge.golden.params import SMParams
from reconverge.golden.sm.core import IssueRecord, SMResult
from reconverge.golden.sm.metrics import Counters, Metrics
from reconverge.golden.sm.program import Program
from reconverge.testbench.rtl import RtlRun

#: The agreement levels, weakest first.
LEVELS = (1, 2, 3, 4)


def hint_pcs(program: Program) -> frozenset[int]:
    """PCs of the ``rhint`` instructions (the hint-instruction metric)."""
    return frozenset(pc for pc, ins in program.code.items() if ins.name == "rhint")


def count_issue(
    counters: Counters, record: IssueRecord, program: Program, hints: frozenset[int]
) -> None:
    """Count one issued warp instruction as golden's SM does (``core.SM._count``)."""
    active = record.mask.bit_count()
    spill = program.image.spills.get(record.pc)
    counters.warp_instructions += 1
    counters.thread_instructions += active
    counters.issue_passes += record.passes
    counters.hint_instructions += record.pc in hints
    counters.count_active(active)
    counters.spill_loads += spill == "load"
    counters.spill_stores += spill == "store"


def trace_counters(
    trace: Sequence[IssueRecord], program: Program
) -> tuple[Counters, list[Counters]]:
    """The issue counters of the whole SM and of every warp (by id) from an issue trace."""
    hints = hint_pcs(program)
    total: Counters = Counters()
    warps: dict[int, Counters] = {}
    for record in trace:
        count_issue(total, record, program, hints)
        count_issue(
            warps.setdefault(record.warp, Counters(warp=record.warp)), record, program, hints
        )
    return total, [warps[w] for w in sorted(warps)]


def rtl_metrics(
    trace: Sequence[IssueRecord], counters: dict[str, int], program: Program, params: SMParams
) -> Metrics:
    """The RTL run's metrics: issue counts from its trace, memory counts and cycles from its
    status counters, ratios by :class:`Metrics`."""
    total, warps = trace_counters(trace, program)
    total.memory_transactions = counters.get("transactions", 0)
    total.shared_transactions = counters.get("shared_cycles", 0)
    total.bank_conflicts = counters.get("bank_conflicts", 0)
    return Metrics(
        total,
        cycles=counters.get("cycles", 0),
        idle_cycles=counters.get("idle_cycles", 0),
        warp_size=params.geometry.warp_size,
        simd_width=params.geometry.simd_width,
        warps=warps,
    )


def rtl_fault(fault: dict[str, int] | None) -> SimtFault | None:
    """The golden-style fault of the SM's status port (kind by :class:`FaultCode`)."""
    if fault is None:
        return None
    code = FaultCode(fault["code"]) if fault["code"] in FaultCode._value2member_map_ else None
    kind = code.kind if code is not None else f"unknown fault code {fault['code']}"
    return SimtFault(
        "reported by the SM's status port",
        kind=kind,
        block=fault["block"],
        thread=fault["thread"],
        pc=fault["pc"],
    )


def before_overflow(run: RtlRun, warp_size: int) -> list[tuple[int, ...]]:
    """The RTL's issues before a table overflow's instruction (all of them without one): the
    unit's flag rises after the update, when the instruction is traced and other warps may
    have issued, while golden faults before tracing it (docs/sm-hardware.md, "Faults")."""
    fault = run.fault
    if fault is None or fault["code"] != FaultCode.TABLE_OVERFLOW:
        return run.issues
    # the unit holds its state on an overflow, so the warp may issue the instruction again
    # before the flag stops the SM: the overflowing issue starts the warp's trailing run of
    # issues at the fault's pc
    warp = (fault["block"], fault["thread"] // warp_size)
    start = None
    for issue in reversed(run.issues):
        if (issue[2], issue[3]) == warp:
            if issue[5] != fault["pc"]:
                break
            start = issue[0]
    return run.issues if start is None else [i for i in run.issues if i[0] < start]


def rtl_result(
    run: RtlRun, launch: LaunchConfig, program: Program, params: SMParams
) -> tuple[SMResult, list[str]]:
    """The RTL run as an :class:`SMResult` (exit codes and thread instructions from its
    events, the trace with warp ids as golden numbers them, its metrics), and the events that
    name no thread of the launch (a broken SM)."""
    width = params.geometry.warp_size
    per_block = -(-launch.block // width)
    shape = (launch.grid, launch.block)
    exit_codes = np.zeros(shape, np.int32)
    exited = np.zeros(shape, bool)
    instructions = np.zeros(shape, np.int64)
    problems: list[str] = []

    def threads(block: int, warp: int, mask: int, what: str) -> list[int] | None:
        lanes = lanes_of(mask)
        if not lanes:
            return []
        bad = block >= launch.grid or warp >= per_block or warp * width + lanes[-1] >= launch.block
        if bad:
            problems.append(
                f"{what} block {block} warp {warp} mask {mask:#x}: no such threads in a launch "
                f"of {launch.grid} x {launch.block}"
            )
            return None
        return [warp * width + lane for lane in lanes]

    trace = []
    for cycle, _slot, block, warp, sid, pc, mask, passes in before_overflow(run, width):
        trace.append(IssueRecord(cycle, block * per_block + warp, sid, pc, mask, passes))
        tids = threads(block, warp, mask, f"issue at cycle {cycle}:")
        if tids:
            instructions[block, tids] += 1
    for clock, block, warp, mask, codes in run.exits:
        tids = threads(block, warp, mask, f"exit at clock {clock}:")
        for tid, code in zip(tids or (), codes, strict=False):
            if exited[block, tid]:
                problems.append(f"exit at clock {clock}: block {block} thread {tid} exits twice")
            exited[block, tid] = True
            exit_codes[block, tid] = sext(code, 32)
    metrics = rtl_metrics(trace, run.counters, program, params)
    result = SMResult(
        exit_codes,
        instructions,
        len(trace),
        exited,
        run.memory,
        rtl_fault(run.fault),
        metrics=metrics,
        trace=trace,
    )
    return result, problems


@dataclass(frozen=True)
class Difference:
    """The first difference between golden and the RTL, at the lowest level that failed, with
    its context: the cycle, warp (id in the launch) and pc where it shows, and each side's
    view (issue records, exit codes, words, faults)."""

    level: int
    what: str
    cycle: int | None = None
    warp: int | None = None
    pc: int | None = None
    golden: Any = None
    rtl: Any = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        where = ", ".join(
            f"{name} {value}"
            for name, value in (
                ("cycle", self.cycle),
                ("warp", self.warp),
                ("pc", None if self.pc is None else f"{self.pc:#010x}"),
            )
            if value is not None
        )
        text = f"level {self.level}: {self.what}" + (f" ({where})" if where else "")
        if self.golden is not None or self.rtl is not None:
            text += f"\n  golden: {_show(self.golden)}\n  rtl:    {_show(self.rtl)}"
        return text


def _show(side: Any) -> str:
    if isinstance(side, dict):
        return ", ".join(
            f"{k} {v:#x}" if k in ("pc", "mask", "word") and isinstance(v, int) else f"{k} {v}"
            for k, v in side.items()
        )
    return "-" if side is None else str(side)


def record_json(record: IssueRecord | None) -> dict[str, int] | None:
    return None if record is None else record.to_json()


def fault_view(fault: SimtFault | None) -> dict[str, Any] | None:
    if fault is None:
        return None
    return {"kind": fault.kind, "pc": fault.pc, "block": fault.block, "thread": fault.thread}


def _same_fault(golden: SimtFault | None, rtl: SimtFault | None) -> bool:
    """Equal kinds, and equal pc, block and thread where golden names them."""
    if golden is None or rtl is None:
        return golden is rtl
    return golden.kind == rtl.kind and all(
        getattr(golden, name) is None or getattr(golden, name) == getattr(rtl, name)
        for name in ("pc", "block", "thread")
    )


def _last_issue(trace: list[IssueRecord], warp: int, lane: int) -> IssueRecord | None:
    return next((r for r in reversed(trace) if r.warp == warp and r.mask >> lane & 1), None)


def final_state(golden: SMResult, rtl: SMResult, per_block: int, width: int) -> Difference | None:
    """Level 1: the fault, every thread's exit, then global memory byte by byte."""
    if not _same_fault(golden.fault, rtl.fault):
        where = golden.fault or rtl.fault
        assert where is not None
        return Difference(
            1, "the faults differ", pc=where.pc,
            golden=fault_view(golden.fault), rtl=fault_view(rtl.fault),
        )  # fmt: skip
    views = ((golden.exited, golden.exit_codes), (rtl.exited, rtl.exit_codes))
    differ = np.argwhere((views[0][0] != views[1][0]) | (views[0][1] != views[1][1]))
    if len(differ):
        block, thread = (int(x) for x in differ[0])
        warp, lane = block * per_block + thread // width, thread % width

        def side(result: SMResult) -> dict[str, Any]:
            code = int(result.exit_codes[block, thread]) if result.exited[block, thread] else None
            last = _last_issue(result.trace, warp, lane)
            return {"exit_code": code, "last_issue": record_json(last)}

        return Difference(
            1, f"block {block} thread {thread} exits differently", warp=warp,
            golden=side(golden), rtl=side(rtl),
        )  # fmt: skip
    g, r = golden.memory.data[0], rtl.memory.data[0]
    bytes_differ = np.flatnonzero(g != r)
    if len(bytes_differ):
        offset = int(bytes_differ[0]) & ~3
        addr = GLOBAL_BASE + offset

        def word(data: np.ndarray) -> dict[str, int]:
            return {"address": addr, "word": int.from_bytes(data[offset : offset + 4], "little")}

        return Difference(
            1,
            f"global memory differs at {addr:#010x} ({len(bytes_differ)} bytes in all)",
            golden=word(g),
            rtl=word(r),
        )
    return None


def _first_divergence(
    golden: list[IssueRecord],
    rtl: list[IssueRecord],
    group: Callable[[IssueRecord], Sequence[Any]],
    key: Callable[[IssueRecord], Any],
) -> tuple[Any, int, IssueRecord | None, IssueRecord | None] | None:
    """Split both traces into streams (``group`` names the streams a record belongs to) and
    compare each stream's ``key``s in order: the earliest first difference in golden's time
    (group, position, golden's record, the RTL's record; None past a stream's end)."""

    def streams(trace: list[IssueRecord]) -> dict[Any, list[IssueRecord]]:
        out: dict[Any, list[IssueRecord]] = {}
        for record in trace:
            for name in group(record):
                out.setdefault(name, []).append(record)
        return out

    gs, rs = streams(golden), streams(rtl)
    best = None
    for name in gs.keys() | rs.keys():
        g, r = gs.get(name, []), rs.get(name, [])
        i = next(
            (i for i, (a, b) in enumerate(zip(g, r, strict=False)) if key(a) != key(b)),
            min(len(g), len(r)),
        )
        if i == len(g) == len(r):
            continue
        a = g[i] if i < len(g) else None
        b = r[i] if i < len(r) else None
        when = (a.cycle if a else float("inf"), b.cycle if b else float("inf"), str(name))
        if best is None or when < best[0]:
            best = (when, (name, i, a, b))
    return None if best is None else best[1]


def _stream_difference(
    level: int,
    found: tuple[Any, int, IssueRecord | None, IssueRecord | None] | None,
    describe: Callable[[Any, int], str],
) -> Difference | None:
    if found is None:
        return None
    name, i, a, b = found
    shown = a or b
    assert shown is not None
    return Difference(
        level, describe(name, i), cycle=shown.cycle, warp=shown.warp, pc=shown.pc,
        golden=record_json(a), rtl=record_json(b),
    )  # fmt: skip


def thread_paths(golden: SMResult, rtl: SMResult, per_block: int, width: int) -> Difference | None:
    """Level 2: the PC sequence every thread retired."""

    def threads(r: IssueRecord) -> list[tuple[int, int]]:
        block, warp = divmod(r.warp, per_block)
        return [(block, warp * width + lane) for lane in lanes_of(r.mask)]

    return _stream_difference(
        2,
        _first_divergence(golden.trace, rtl.trace, threads, lambda r: r.pc),
        lambda t, i: f"block {t[0]} thread {t[1]} retires another path at its instruction {i}",
    )


def issue_streams(golden: SMResult, rtl: SMResult, per_block: int, width: int) -> Difference | None:
    """Level 3: every warp's issue stream of (pc, active mask, split)."""
    return _stream_difference(
        3,
        _first_divergence(
            golden.trace, rtl.trace, lambda r: (r.warp,), lambda r: (r.pc, r.mask, r.split)
        ),
        lambda w, i: f"warp {w} issues another instruction at its issue {i}",
    )


def issue_timing(golden: SMResult, rtl: SMResult, per_block: int, width: int) -> Difference | None:
    """Level 4: the cycle and passes of every issue in the SM's one issue stream, and the
    total cycles."""
    found = _first_divergence(
        golden.trace, rtl.trace, lambda r: ("sm",), lambda r: (r.cycle, r.warp, r.passes)
    )
    difference = _stream_difference(4, found, lambda _, i: f"issue {i} of the SM differs in time")
    if difference is not None:
        return difference
    assert golden.metrics is not None and rtl.metrics is not None
    if golden.metrics.cycles != rtl.metrics.cycles:
        return Difference(
            4, "the total cycles differ",
            golden={"cycles": golden.metrics.cycles}, rtl={"cycles": rtl.metrics.cycles},
        )  # fmt: skip
    return None


CHECKS = (final_state, thread_paths, issue_streams, issue_timing)


def compare(
    golden: SMResult, rtl: SMResult, *, warps_per_block: int, warp_size: int
) -> tuple[int, Difference | None]:
    """(highest agreement level reached, the first difference above it)."""
    for level, check in zip(LEVELS, CHECKS, strict=True):
        difference = check(golden, rtl, warps_per_block, warp_size)
        if difference is not None:
            return level - 1, difference
    return LEVELS[-1], None
