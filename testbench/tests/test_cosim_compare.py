"""The co-simulation's comparison, without a simulator: golden's own run, reported through the
RTL's ports (issue records with block and warp, exit events, status counters, the fault code,
the final memory), reaches agreement level 4, reproduces golden's exit codes, per-thread
instruction counts and metrics; a mutated trace, memory, exit code or fault is reported as
exactly the first difference, at its level. The instruction store carries the image and the
reconvergence PCs of ``golden.sm.program``.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconverge.golden.asm import assemble
from reconverge.golden.blocks.divergence import NEVER, lanes_of
from reconverge.golden.blocks.units import sm_unit
from reconverge.golden.faults import FaultCode
from reconverge.golden.functional import LaunchConfig
from reconverge.golden.image import Image
from reconverge.golden.isa import ILEN_BYTES, MASK32, decode, sext
from reconverge.golden.memmap import GLOBAL_BASE
from reconverge.golden.memory import GlobalMemory
from reconverge.golden.params import COSIM, SMParams
from reconverge.golden.policies import Policy
from reconverge.golden.sm.core import SMResult
from reconverge.golden.sm.program import Program
from reconverge.golden.sm.run import run_sm
from reconverge.kernels import suite
from reconverge.testbench.cocotb_sm import Job
from reconverge.testbench.compare import Difference, compare, rtl_result, trace_counters
from reconverge.testbench.cosim import METRICS, CosimReport, metrics_json
from reconverge.testbench.errors import CosimError
from reconverge.testbench.rtl import RtlRun, instruction_store

#: (kernel, policy, hints, hws, allocator registers): divergence, calls, spills, every unit.
CASES = (
    ("nested", "sps", True, False, 16),
    ("loopBreak", "mp-orec", True, True, 16),
    ("condCall", "stackless", False, False, 6),
    ("mandelbrot", "ppc", True, True, 8),
    ("bfs", "dps", True, False, 16),
    ("ifElse", "ppc", False, True, 16),
)
KIND_CODES = {code.kind: code for code in FaultCode}


def params_for(policy: str, hints: bool, hws: bool) -> SMParams:
    return replace(COSIM, config=replace(COSIM.config, policy=Policy(policy), hints=hints, hws=hws))


@cache
def golden_case(index: int) -> tuple[Image, LaunchConfig, SMParams, SMResult]:
    name, policy, hints, hws, regs = CASES[index]
    params = params_for(policy, hints, hws)
    launch, case = suite()[name].launch("linear", regs, None, 0, hints=params.config.explicit)
    config = launch.config(case.grid, case.block, geometry=params.geometry, memmap=params.memmap)
    return launch.image, config, params, run_sm(launch.image, config, params.config, trace=True)


def ports_view(result: SMResult, launch: LaunchConfig, params: SMParams) -> RtlRun:
    """A run as the SM's ports would report it: what a faithful SM's testbench records."""
    width = params.geometry.warp_size
    per_block = -(-launch.block // width)
    issues = [
        (r.cycle, r.warp % params.geometry.warps, *divmod(r.warp, per_block), r.split, r.pc,
         r.mask, r.passes)
        for r in result.trace
    ]  # fmt: skip
    exits = []
    for block in range(launch.grid):
        for warp in range(per_block):
            tids = range(warp * width, min(launch.block, (warp + 1) * width))
            lanes = [t - warp * width for t in tids if result.exited[block, t]]
            codes = tuple(
                int(result.exit_codes[block, warp * width + lane]) & MASK32 for lane in lanes
            )
            if lanes:
                exits.append((0, block, warp, sum(1 << lane for lane in lanes), codes))
    assert result.metrics is not None
    counters = result.metrics.counters
    fault = result.fault
    memory = GlobalMemory(params.memmap)
    memory.data[...] = result.memory.data
    return RtlRun(
        stopped="done" if fault is None else "fault",
        message="",
        issues=issues,
        exits=exits,
        fault=None
        if fault is None
        else {"code": int(KIND_CODES[fault.kind]), "pc": fault.pc, "block": fault.block,
              "thread": fault.thread},
        counters={
            "cycles": result.metrics.cycles,
            "idle_cycles": result.metrics.idle_cycles,
            "transactions": counters.memory_transactions,
            "shared_cycles": counters.shared_transactions,
            "bank_conflicts": counters.bank_conflicts,
            "stalls": 0,
        },
        clocks=result.metrics.cycles,
        seconds=1.0,
        memory=memory,
    )  # fmt: skip


def check(index: int, run: RtlRun) -> tuple[int, Difference | None, SMResult]:
    image, launch, params, golden = golden_case(index)
    rtl, problems = rtl_result(run, launch, Program(image), params)
    assert problems == []
    per_block = -(-launch.block // params.geometry.warp_size)
    reached, difference = compare(
        golden, rtl, warps_per_block=per_block, warp_size=params.geometry.warp_size
    )
    return reached, difference, rtl


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c[0] for c in CASES])
def test_golden_through_the_ports_reaches_level_4(index: int) -> None:
    """Golden's run seen through the SM's ports agrees with golden at level 4, and the RTL
    side rebuilt from the events has golden's exit codes, per-thread instruction counts and
    metrics (issue counts from the trace, memory counts from the counters)."""
    _image, launch, params, golden = golden_case(index)
    assert golden.fault is None and golden.exited.all()
    reached, difference, rtl = check(index, ports_view(golden, launch, params))
    assert (reached, difference) == (4, None)
    assert np.array_equal(rtl.exit_codes, golden.exit_codes)
    assert np.array_equal(rtl.thread_instructions, golden.thread_instructions)
    assert metrics_json(rtl.metrics) == metrics_json(golden.metrics)


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c[0] for c in CASES])
def test_trace_counters_are_golden_counters(index: int) -> None:
    """The issue counts derived from a trace (warp and thread instructions, passes, hints,
    active-thread histogram, spill loads and stores) are those golden counted at issue, for
    the SM and for every warp."""
    image, _, _, golden = golden_case(index)
    assert golden.metrics is not None
    total, warps = trace_counters(golden.trace, Program(image))
    fields = ("warp_instructions", "thread_instructions", "issue_passes", "hint_instructions",
              "active_histogram", "spill_loads", "spill_stores")  # fmt: skip
    expected = [golden.metrics.counters, *golden.metrics.warps]
    for got, want in zip([total, *warps], expected, strict=True):
        assert [getattr(got, f) for f in fields] == [getattr(want, f) for f in fields]
    assert any(c.spill_loads for c in expected) or CASES[index][4] == 16
    assert any(c.hint_instructions for c in expected) or not golden_case(index)[2].config.explicit


def _mutated_issue(run: RtlRun, i: int, position: int, value: int) -> RtlRun:
    issues = list(run.issues)
    record = list(issues[i])
    record[position] = value
    issues[i] = tuple(record)
    return replace(run, issues=issues)


# Positions in a (cycle, slot, block, warp, sid, pc, mask, passes) issue event.
PC, SID, CYCLE = 5, 4, 0


@settings(max_examples=30, deadline=None)
@given(index=st.integers(0, len(CASES) - 1), data=st.data())
def test_first_difference_of_a_mutated_trace(index: int, data: st.DataObject) -> None:
    """One issue event changed in its pc (a thread's path: level 2), split (a warp's issue
    stream: level 3) or cycle (level 4): the report reaches the level below and names exactly
    that event, golden's record beside the RTL's."""
    _image, launch, params, golden = golden_case(index)
    run = ports_view(golden, launch, params)
    i = data.draw(st.integers(0, len(run.issues) - 1))
    position, level = data.draw(st.sampled_from([(PC, 2), (SID, 3), (CYCLE, 4)]))
    value = run.issues[i][position] ^ (4 if position == PC else 1)
    if position == SID and value >= 1 << sm_unit(params).sid_bits:
        value = run.issues[i][position] - 1
    reached, difference, rtl = check(index, _mutated_issue(run, i, position, value))
    assert reached == level - 1 and difference is not None
    assert difference.level == level
    record = golden.trace[i]
    assert difference.golden == record.to_json()
    assert difference.rtl == rtl.trace[i].to_json()
    assert (difference.cycle, difference.warp, difference.pc) == (
        record.cycle,
        record.warp,
        record.pc,
    )


@settings(max_examples=20, deadline=None)
@given(index=st.integers(0, len(CASES) - 1), data=st.data())
def test_first_difference_of_final_state(index: int, data: st.DataObject) -> None:
    """A changed byte of global memory, a changed exit code, a lost exit or a fault the RTL
    reports alone: level 1 fails, naming the word (both values) or the thread (both codes)."""
    _image, launch, params, golden = golden_case(index)
    run = ports_view(golden, launch, params)
    what = data.draw(st.sampled_from(["memory", "exit code", "no exit", "fault"]))
    if what == "memory":
        offset = data.draw(st.integers(0, params.memmap.global_size - 1))
        memory = GlobalMemory(params.memmap)
        memory.data[...] = run.memory.data
        memory.data[0, offset] ^= 0x5A
        reached, difference, _ = check(index, replace(run, memory=memory))
        assert difference is not None
        addr = GLOBAL_BASE + (offset & ~3)
        assert difference.what.startswith(f"global memory differs at {addr:#010x} (1 bytes")
        assert difference.golden["word"] ^ difference.rtl["word"] == 0x5A << 8 * (offset % 4)
    elif what in ("exit code", "no exit"):
        e = data.draw(st.integers(0, len(run.exits) - 1))
        clock, block, warp, mask, codes = run.exits[e]
        exits = list(run.exits)
        if what == "exit code":
            exits[e] = (clock, block, warp, mask, ((codes[0] + 1) & MASK32, *codes[1:]))
        else:
            exits[e] = (clock, block, warp, mask & (mask - 1), codes[1:])
        reached, difference, _ = check(index, replace(run, exits=exits))
        assert difference is not None
        thread = warp * params.geometry.warp_size + lanes_of(mask)[0]
        assert difference.what == f"block {block} thread {thread} exits differently"
        assert difference.golden["exit_code"] == golden.exit_codes[block, thread]
        changed = sext((int(golden.exit_codes[block, thread]) + 1) & MASK32, 32)
        assert difference.rtl["exit_code"] == (None if what == "no exit" else changed)
    else:
        fault = {"code": int(FaultCode.ILLEGAL), "pc": 0x8000_0000, "block": 0, "thread": 1}
        reached, difference, _ = check(index, replace(run, fault=fault, stopped="fault"))
        assert difference is not None and difference.what == "the faults differ"
        assert difference.golden is None and difference.rtl["kind"] == "illegal instruction"
    assert reached == 0 and difference.level == 1


def test_dropped_issue_and_total_cycles() -> None:
    """The RTL's last issue missing: the threads of that warp retire a shorter path (level 2,
    golden's record, nothing on the RTL side); only the total cycles differing: level 4."""
    _image, launch, params, golden = golden_case(0)
    run = ports_view(golden, launch, params)
    reached, difference, _ = check(0, replace(run, issues=run.issues[:-1]))
    assert reached == 1 and difference is not None and difference.level == 2
    assert difference.golden == golden.trace[-1].to_json() and difference.rtl is None
    counters = {**run.counters, "cycles": run.counters["cycles"] + 1}
    reached, difference, _ = check(0, replace(run, counters=counters))
    assert reached == 3 and difference is not None
    assert difference.what == "the total cycles differ"
    assert "golden: cycles" in str(difference)


FAULTING = """
    .text
    .globl _start
_start:
    csrr    t0, 0xcc0
    li      t1, 3
    bne     t0, t1, 1f
    lw      a0, 2(zero)        # thread 3: a misaligned load
1:  li      a0, 0
    li      a7, 93
    ecall
"""


def test_faults_compare_by_kind_pc_block_thread() -> None:
    """A program fault seen alike on both sides (kind through FaultCode, pc, block, thread)
    agrees; the same fault at another thread is a level-1 difference."""
    image = assemble(FAULTING, "faulting.S")
    launch = LaunchConfig(1, 8, COSIM.geometry, COSIM.memmap)
    golden = run_sm(image, launch, COSIM.config, trace=True)
    assert golden.fault is not None and golden.fault.kind == "misaligned load"
    run = ports_view(golden, launch, COSIM)
    rtl, _ = rtl_result(run, launch, Program(image), COSIM)
    assert compare(golden, rtl, warps_per_block=1, warp_size=8) == (4, None)
    assert run.fault is not None
    moved = replace(run, fault={**run.fault, "thread": 4})
    rtl, _ = rtl_result(moved, launch, Program(image), COSIM)
    reached, difference = compare(golden, rtl, warps_per_block=1, warp_size=8)
    assert reached == 0 and difference is not None
    assert (difference.golden["thread"], difference.rtl["thread"]) == (3, 4)


def test_events_outside_the_launch_are_problems() -> None:
    """An issue or exit for a thread the launch does not have, or a thread exiting twice, is
    reported, not counted."""
    image, launch, params, golden = golden_case(0)
    run = ports_view(golden, launch, params)
    _, block, warp, mask, codes = run.exits[0]
    lane = lanes_of(mask)[0]
    again = (1, block, warp, 1 << lane, codes[:1])
    bad = replace(run, exits=[*run.exits, again, (2, launch.grid, 0, 1, (0,))])
    bad = _mutated_issue(bad, 0, 2, launch.grid)
    _, problems = rtl_result(bad, launch, Program(image), params)
    thread = warp * params.geometry.warp_size + lane
    assert len(problems) == 3
    assert problems[0].startswith(f"issue at cycle 0: block {launch.grid} warp 0")
    assert problems[1] == f"exit at clock 1: block {block} thread {thread} exits twice"
    assert problems[2].startswith(f"exit at clock 2: block {launch.grid} warp 0 mask 0x1")


def test_report_json_and_text() -> None:
    """The report's JSON keys (README.md, Co-simulation) and its text name the level."""
    image, launch, params, golden = golden_case(1)
    run = ports_view(golden, launch, params)
    rtl, _ = rtl_result(run, launch, Program(image), params)
    report = CosimReport("loopBreak", "icarus", "RTL", params, 3, 4, None, golden, rtl, run)
    out = report.to_json()
    assert set(out) == {"file", "sim", "design", "params", "level_requested", "level", "ok",
                        "difference", "golden", "rtl"}  # fmt: skip
    assert out["design"] == "RTL" and "icarus (RTL): level 4" in report.format()
    assert set(out["golden"]) == {*METRICS, "fault"}
    assert set(out["rtl"]) == {*METRICS, "fault", "stalls", "stopped", "message", "clocks",
                               "seconds", "cycles_per_second", "load_seconds"}  # fmt: skip
    assert out["params"]["policy"] == "mp-orec" and out["params"]["hws"] is True
    assert out["ok"] and "level 4 reached (requested 3) — ok" in report.format()


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        (FAULTING, "program on golden: fault: misaligned load"),
        ("_start:\n  csrr a0, tid\n  andi a0, a0, 3\n  li a7, 93\n  ecall\n",
         "program on golden: exit 0 (2 threads), exit 1 (2 threads), exit 2 (2 threads), "
         "exit 3 (2 threads)"),
    ],
)  # fmt: skip
def test_report_text_names_the_programs_outcome(source: str, shown: str) -> None:
    """Issue 26: agreement ("ok") is not the program's outcome; the text shows its fault or its
    exit codes as ``reconverge run`` does."""
    image = assemble(source, "outcome.S")
    launch = LaunchConfig(1, 8, COSIM.geometry, COSIM.memmap)
    golden = run_sm(image, launch, COSIM.config, trace=True)
    run = ports_view(golden, launch, COSIM)
    rtl, _ = rtl_result(run, launch, Program(image), COSIM)
    report = CosimReport("outcome.S", "icarus", "RTL", COSIM, 3, 4, None, golden, rtl, run)
    assert shown in report.format().splitlines()[1]


@pytest.mark.parametrize("name", sorted(suite()))
def test_instruction_store_carries_code_and_rpcs(name: str) -> None:
    """Every entry is the image's word; each branch after an ``rhint`` has the hint's target
    as its RPC (read from the hint's own encoding here), every control instruction has
    ``Program.rpc``, every other word NEVER; past the code, zeros."""
    launch, _ = suite()[name].launch(hints=True)
    image = launch.image
    store = instruction_store(Program(image), COSIM)
    program = Program(image)
    memory = GlobalMemory(COSIM.memmap)
    memory.load_image(image)
    assert [w for w, _ in store] == memory.read_words(GLOBAL_BASE, COSIM.imem_words).tolist()
    hinted = 0
    for index, (_word, rpc) in enumerate(store):
        pc = GLOBAL_BASE + ILEN_BYTES * index
        ins = program.code.get(pc)
        previous = program.code.get(pc - ILEN_BYTES)
        if ins is not None and ins.spec.is_branch and previous and previous.name == "rhint":
            assert rpc == (pc - ILEN_BYTES + decode(store[index - 1][0]).imm) & MASK32
            hinted += 1
        if ins is not None and (ins.spec.is_branch or ins.spec.is_jump):
            assert rpc == program.rpc(pc)
        else:
            assert rpc == NEVER
    rhints = sum(ins.name == "rhint" for ins in program.code.values())
    assert hinted == rhints  # the compiler puts every rhint right before its branch


def test_code_outside_the_instruction_store_is_an_error() -> None:
    launch, _ = suite()["nqueens"].launch(hints=True)
    small = replace(COSIM, imem_words=64)
    with pytest.raises(CosimError, match="outside the instruction store of 64 words"):
        instruction_store(Program(launch.image), small)


def test_job_round_trip(tmp_path: Path) -> None:
    """The job file carries the image exactly (the memory model is built from it)."""
    image, _, params, _ = golden_case(2)
    entry, segments = Job.encode_image(image)
    memmap = params.memmap
    job = Job(entry, segments, (memmap.global_size, memmap.shared_size, memmap.local_size), 32,
              1 << 15, 8, instruction_store(Program(image), params), 2, 8, 0, (1,) * 8, 100, 1.0,
              (0.5, 2, 3), "r.json", "m.npy")  # fmt: skip
    job.write(tmp_path / "job.json")
    again = Job.read(tmp_path / "job.json")
    assert again == job
    assert again.image().segments == image.segments
    golden = GlobalMemory(memmap)
    golden.load_image(image)
    assert np.array_equal(again.memory_model().global_memory.data, golden.data)
