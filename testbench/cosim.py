"""Whole-program co-simulation: a program on the generated Verilog of the SM (``hdl/sm/top.py``,
docs/sm-hardware.md) under cocotb, held to the golden cycle-level SM at the agreement levels of
DESIGN.md:

1. final global memory and exit codes, and the fault (its kind through
   :attr:`reconverge.golden.faults.FaultCode.kind`, pc, block, thread);
2. each thread's retired PC sequence (projected from the issue streams);
3. each warp's issue stream (pc, active mask, split);
4. the cycle (and passes) of every issue, and the total cycles.

:func:`cosim` runs golden (:func:`~reconverge.golden.sm.core.run_sm` with the trace) on the
geometry, configuration and address map of the :class:`~reconverge.golden.sm.params.SMParams`,
builds the SM's Verilog once per parameter set (``build/cosim/<sim>/<hash>``, under a file lock
for parallel pytest workers; Amaranth is imported only there), runs the cocotb test
(:mod:`reconverge.testbench.cocotb_sm`) through ``cocotb_tools.runner`` on Icarus or Verilator,
and compares. The RTL side's metrics are computed from its issue trace and status counters with
the definitions of :mod:`reconverge.golden.sm.metrics`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from reconverge.golden.blocks.divergence import NEVER, lanes_of
from reconverge.golden.errors import UserError
from reconverge.golden.faults import FaultCode, SimtFault
from reconverge.golden.functional import GLOBAL_POINTER_SYMBOL, LaunchConfig
from reconverge.golden.image import Image
from reconverge.golden.isa import ILEN_BYTES, MASK32, sext
from reconverge.golden.memmap import GLOBAL_BASE
from reconverge.golden.memory import GlobalMemory
from reconverge.golden.sm.core import IssueRecord, SMResult, run_sm
from reconverge.golden.sm.metrics import Counters, Metrics
from reconverge.golden.sm.params import ARG_REGS, SMParams
from reconverge.golden.sm.program import Program
from reconverge.testbench.cocotb_run import (
    _check_results,
    _locked,
    _runner,
    _tail,
    build_root,
    write_if_changed,
)
from reconverge.testbench.cocotb_sm import ENV_JOB, Job
from reconverge.testbench.memory_model import Backpressure, local_span

#: The cocotb test module and the Verilog top module of the SM.
TEST_MODULE = "reconverge.testbench.cocotb_sm"
TOP = "sm"
SIMULATORS = ("icarus", "verilator")
LEVELS = (1, 2, 3, 4)
#: Verilator options for Amaranth's Verilog (as for the blocks, testbench/cocotb_run.py).
VERILATOR_ARGS = ("-Wno-fatal", "-Wno-WIDTH", "-Wno-CASEOVERLAP")
#: The C++ optimisation of Verilator's model: -O1 instead of its default -Os compiles the SM
#: in about two thirds of the time and simulates it as fast (measured on the cosim
#: configuration: 30 s against 47 s of g++ on two cores, 26 kernels in 34 s on both builds;
#: -O0 compiles in half the time but simulates three times slower).
CXX_OPTIMISATION = ("OPT_FAST=-O1", "OPT_SLOW=-O1", "OPT_GLOBAL=-O1")
#: Verilator options of the toggle-coverage build (:mod:`reconverge.testbench.activity`): every
#: signal bit however wide, Yosys's unnamed nets (``_123_``) included; the memories are left
#: out by a control file (:func:`memories_off`).
TOGGLE_ARGS = ("--coverage-toggle", "--coverage-underscore", "--coverage-max-width", "1048576")
#: The metrics reported side by side (keys of :meth:`Metrics.to_json`).
METRICS = (
    "cycles",
    "idle_cycles",
    "ipc",
    "warp_instructions",
    "thread_instructions",
    "hint_instructions",
    "simd_efficiency",
    "lane_utilisation",
    "issue_passes",
    "memory_transactions",
    "shared_transactions",
    "bank_conflicts",
    "spill_loads",
    "spill_stores",
)
#: Seconds the simulator process may outlive the wall-clock watchdog before it is killed
#: (a simulator stuck inside one time step never returns to the Python watchdog).
KILL_GRACE = 120


class CosimError(UserError):
    """The program cannot run on this SM (code outside the instruction store, a launch the SM
    cannot hold): one line, exit status 2."""


class SimulationError(RuntimeError):
    """The simulator or the cocotb test failed without results (a broken build, a crash)."""


# ----------------------------------------------------------------------------------------------
# The design under test


@dataclass(frozen=True)
class Design:
    """Verilog of a top module with the SM's ports: ``verilog()`` makes it (called only when
    ``digest``, which names everything the text depends on, changed since the last build in
    ``build/cosim/<sim>/<key>``)."""

    top: str
    key: str
    digest: str
    verilog: Callable[[], str]


def params_digest(params: SMParams) -> str:
    """A short name of a parameter set (its ``repr`` is complete and deterministic)."""
    return hashlib.sha256(repr(params).encode()).hexdigest()[:16]


def _sources_digest() -> str:
    """What the SM's Verilog depends on besides its parameters: the sources of ``hdl/`` and
    ``golden/`` (which the HDL reads its definitions from) and the Amaranth version."""
    from importlib import metadata

    from reconverge import golden, hdl

    digest = hashlib.sha256(metadata.version("amaranth").encode())
    for package in (hdl, golden):
        root = Path(package.__file__).parent
        for path in sorted(root.rglob("*.py")):
            if "tests" not in path.relative_to(root).parts:
                digest.update(path.relative_to(root).as_posix().encode() + path.read_bytes())
    return digest.hexdigest()


def sm_design(params: SMParams) -> Design:
    """The SM of ``hdl/sm/top.py`` elaborated from ``params``."""

    def verilog() -> str:
        from reconverge.hdl.sm.top import SM
        from reconverge.hdl.tools.verilog import to_verilog

        return to_verilog(SM(params), TOP)

    key = params_digest(params)
    return Design(TOP, f"sm-{key}", f"{key}-{_sources_digest()}", verilog)


def wave_format(sim: str, waves: str | Path | None) -> str:
    """ "" (no waveforms), "fst", or "vcd" (Verilator, for a file name ending in ``.vcd``;
    Icarus always writes FST)."""
    if waves is None:
        return ""
    return "vcd" if sim == "verilator" and str(waves).endswith(".vcd") else "fst"


def verilog_text(design: Design) -> str:
    """The design's Verilog, made once per digest for every simulator and process (elaborating
    the SM takes seconds): kept in ``build/cosim/verilog/<key>/`` with the digest it was made
    from."""
    directory = build_root() / "cosim" / "verilog" / design.key
    with _locked(directory):
        source, stamp = directory / f"{design.top}.v", directory / "digest"
        if source.exists() and stamp.exists() and stamp.read_text() == design.digest:
            return source.read_text()
        text = design.verilog()
        write_if_changed(source, text)
        stamp.write_text(design.digest)
        return text


#: A memory's declaration in Yosys's Verilog: ``reg [63:0] store0 [1023:0];``.
_MEMORY = re.compile(r"^\s*reg\s+(?:\[\d+:\d+\]\s*)?(?:\\\S+\s|[A-Za-z_][\w$]*)\s*\[")


def memories_off(source: Path) -> Path:
    """A Verilator control file next to ``source`` that turns coverage off on the lines that
    declare memories: their words are storage, not nets driven by logic (their ports are
    nets and stay covered), and toggle points on every stored bit would slow the simulation
    down."""
    lines = source.read_text().splitlines()
    off = [f'coverage_off -file "{source}" -lines {n}'
           for n, line in enumerate(lines, 1) if _MEMORY.match(line)]  # fmt: skip
    config = source.with_suffix(".vlt")
    config.write_text("\n".join(["`verilator_config", *off, ""]))
    return config


def _build_verilator(
    source: Path, top: str, waves: str, log: Path, *, toggles: bool = False
) -> None:
    """Verilate and compile ``source`` in its directory as cocotb's Verilator runner does
    (its ``verilator.cpp``, VPI library and binary name, so the runner's ``test`` runs it), but
    with only the top module's signals public (``--public-depth 1``: the testbench reads and
    drives the ports alone) instead of ``--public-flat-rw``, which keeps every signal of the SM
    writable through VPI: at the cosim configuration that makes 30 MB of C++ instead of 12
    and simulates 5 times slower. ``toggles``: with toggle coverage (:data:`TOGGLE_ARGS`),
    written at the end of a run (``VerilatedCov::write`` in ``verilator.cpp``)."""
    from cocotb_tools import config as cocotb_config

    from reconverge.testbench.verilator import prepare

    directory = source.parent
    libs = cocotb_config.libs_dir
    verilate = [
        prepare(),
        "-cc", "--exe", "-Mdir", str(directory), "--top-module", top, "--vpi",
        "--public-depth", "1", "--prefix", "Vtop", "-o", top,
        "-LDFLAGS", f"-Wl,-rpath,{libs} -L{libs} -lcocotbvpi_verilator",
        *VERILATOR_ARGS,
        *(["--trace"] if waves else []), *(["--trace-fst"] if waves == "fst" else []),
        *([*TOGGLE_ARGS, str(memories_off(source))] if toggles else []),
        "--timescale", "1ns/1ps",
        str(cocotb_config.share_dir / "lib" / "verilator" / "verilator.cpp"), str(source),
    ]  # fmt: skip
    jobs = str(min(os.cpu_count() or 1, 8))
    make = ["make", "-j", jobs, "-C", str(directory), "-f", "Vtop.mk", *CXX_OPTIMISATION,
            f"VM_TRACE={int(bool(waves))}", *(["VM_COVERAGE=1"] if toggles else [])]  # fmt: skip
    with open(log, "w") as out:
        for command in (verilate, make):
            subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, check=True)


def build(design: Design, sim: str, waves: str = "", *, toggles: bool = False) -> tuple[Any, Path]:
    """Write the design's Verilog (:func:`verilog_text`) and compile it for the simulator,
    once per design, wave format (:func:`wave_format`) and toggle coverage (Verilator only) in
    ``build/cosim/<sim>/<key>[-<waves>][-toggles]``: it is recompiled only when its text
    changed. Returns (runner, build directory)."""
    if sim not in SIMULATORS:
        raise CosimError(f"unknown simulator {sim!r} (known: {', '.join(SIMULATORS)})")
    if toggles and sim != "verilator":
        raise CosimError(f"toggle coverage needs Verilator, not {sim}")
    suffix = (f"-{waves}" if waves else "") + ("-toggles" if toggles else "")
    build_dir = build_root() / "cosim" / sim / (design.key + suffix)
    try:
        runner = _runner(sim)
    except RuntimeError as exc:  # no usable Verilator
        raise CosimError(str(exc)) from None
    runner.log.setLevel(logging.ERROR)  # not "Skipping compilation" on every reuse
    with _locked(build_dir):
        source = build_dir / f"{design.top}.v"
        write_if_changed(source, verilog_text(design))
        binary = build_dir / design.top
        built = binary.exists() and binary.stat().st_mtime > source.stat().st_mtime
        log = build_dir / "build.log"
        try:
            if sim == "verilator":
                if not built:  # cocotb's Verilator runner would rebuild every time
                    _build_verilator(source, design.top, waves, log, toggles=toggles)
            else:
                runner.build(
                    sources=[source],
                    hdl_toplevel=design.top,
                    build_dir=build_dir,
                    timescale=("1ns", "1ps"),
                    waves=bool(waves),
                    log_file=log,
                )
        except (RuntimeError, SystemExit, subprocess.CalledProcessError):
            hint = ""
            if "lz4.h" in (log.read_text(errors="replace") if log.exists() else ""):
                hint = " (Verilator's FST writer needs liblz4-dev; or --waves FILE.vcd)"
            raise SimulationError(
                f"building {design.top} for {sim} failed{hint} (see {log}):\n{_tail(log)}"
            ) from None
    return runner, build_dir


# ----------------------------------------------------------------------------------------------
# What the testbench loads


def instruction_store(image: Image, params: SMParams) -> tuple[tuple[int, int], ...]:
    """(word, RPC) of every instruction-store entry: the image's words from GLOBAL_BASE, each
    control instruction with its reconvergence PC (:meth:`Program.rpc`: the ``rhint`` or the
    immediate postdominator; NEVER and RETURN as they are), every other word with NEVER (all
    ones). A program whose code or entry lies outside the store is a :class:`CosimError`."""
    end = GLOBAL_BASE + ILEN_BYTES * params.imem_words
    code = [(s.vaddr, s.vaddr + len(s.data)) for s in image.segments if "x" in s.flags and s.data]
    outside = [(lo, hi) for lo, hi in code if lo < GLOBAL_BASE or hi > end]
    if outside or not GLOBAL_BASE <= image.entry & MASK32 < end:
        lo, hi = outside[0] if outside else (image.entry, image.entry + ILEN_BYTES)
        raise CosimError(
            f"{image.source}: code at {lo:#010x}-{hi - 1:#010x} lies outside the instruction "
            f"store of {params.imem_words} words ({GLOBAL_BASE:#010x}-{end - 1:#010x}); "
            "raise --imem-words"
        )
    return tuple(Program(image).store(params.imem_words))


#: What an instruction-store entry the testbench does not load holds: Amaranth initialises the
#: store's memories to zeros (``hdl/sm/fetch.py``, ``init=()``), and every co-simulation starts a
#: fresh simulator.
RESET_ENTRY = (0, 0)


def loaded_entries(store: Sequence[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """The entries the testbench writes through the load port: ``store`` up to its last entry
    other than (0, NEVER). Each entry left out would write word 0 over the word 0 of reset
    (:data:`RESET_ENTRY`); only its RPC differs (NEVER, not 0), and the SM reads an RPC only
    for a control instruction, which word 0 is not (it is illegal): fetching it faults the same
    way loaded or not. So no instruction that can execute lies in the part not loaded, and
    loading takes as many cycles as the program has words instead of ``imem_words``."""
    never = (0, NEVER)
    end = len(store)
    while end and store[end - 1] == never:
        end -= 1
    return tuple(store[:end])


def launch_args(launch: LaunchConfig) -> tuple[int, ...]:
    """a0..a7 of the launch (unused ones 0), each a 32-bit word."""
    return tuple(a & MASK32 for a in launch.args) + (0,) * (ARG_REGS - len(launch.args))


# ----------------------------------------------------------------------------------------------
# The RTL run


@dataclass
class RtlRun:
    """What the cocotb test recorded (see :data:`reconverge.testbench.cocotb_sm.RESULT_KEYS`)."""

    stopped: str
    message: str
    issues: list[tuple[int, ...]]  # (cycle, slot, block, warp, sid, pc, mask, passes)
    exits: list[tuple[int, int, int, int, tuple[int, ...]]]  # (clock, block, warp, mask, codes)
    fault: dict[str, int] | None
    counters: dict[str, int]
    clocks: int
    seconds: float
    memory: GlobalMemory
    load_seconds: float = 0.0  # the instruction-store load before the launch

    @property
    def finished(self) -> bool:
        return self.stopped in ("done", "fault")

    @property
    def cycles_per_second(self) -> float:
        """Simulated SM clock cycles per wall-clock second of the run (the load excluded)."""
        return self.clocks / self.seconds if self.seconds else 0.0


@contextmanager
def _kill_after(seconds: float) -> Iterator[None]:
    """cocotb's runner prefixes the simulator command with ``$SIM_CMD_PREFIX``: ``timeout``
    kills a simulator that never returns to the Python watchdog."""
    exe = shutil.which("timeout")
    old = os.environ.get("SIM_CMD_PREFIX")
    if exe is not None:
        os.environ["SIM_CMD_PREFIX"] = f"{exe} -k 10 {int(seconds) + 1}"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("SIM_CMD_PREFIX", None)
        else:
            os.environ["SIM_CMD_PREFIX"] = old


def run_rtl(
    design: Design,
    image: Image,
    launch: LaunchConfig,
    params: SMParams,
    *,
    sim: str = "icarus",
    waves: str | Path | None = None,
    backpressure: Backpressure | None = None,
    max_cycles: int = 1_000_000,
    max_seconds: float = 600.0,
    keep: bool = False,
    coverage: Path | None = None,
) -> RtlRun:
    """Run ``image`` on the design under cocotb. The run's directory (job, log, results) is
    removed afterwards unless ``keep`` or the simulation failed. ``coverage``: run the
    toggle-coverage build (Verilator) and write its counts to this file."""
    store = loaded_entries(instruction_store(image, params))  # fails before the build if too big
    runner, build_dir = build(design, sim, wave_format(sim, waves), toggles=coverage is not None)
    runs = build_dir / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    test_dir = Path(tempfile.mkdtemp(prefix="run-", dir=runs))
    entry, segments = Job.encode_image(image)
    memmap = params.memmap
    job = Job(
        entry=entry & MASK32,
        segments=segments,
        memmap=(memmap.global_size, memmap.shared_size, memmap.local_size),
        line_bytes=params.config.line_bytes,
        local_bytes=local_span(memmap, params.geometry.warp_size, params.geometry.warps),
        warp_size=params.geometry.warp_size,
        imem=store,
        grid=launch.grid,
        block=launch.block,
        gp=image.symbols.get(GLOBAL_POINTER_SYMBOL, 0) & MASK32,
        args=launch_args(launch),
        max_cycles=max_cycles,
        max_seconds=max_seconds,
        backpressure=None
        if backpressure is None
        else (backpressure.ready, backpressure.max_delay, backpressure.seed),
        results=str(test_dir / "results.json"),
        memory=str(test_dir / "memory.npy"),
    )
    job.write(test_dir / "job.json")
    log = test_dir / "sim.log"
    plusargs: list[str] = []
    test_args: list[str] = []
    if waves is not None:
        wave_file = str(Path(waves).resolve())
        if sim == "icarus":
            plusargs.append(f"+dumpfile_path={wave_file}")
        else:
            test_args += ["--trace-file", wave_file]
    if coverage is not None:
        plusargs.append(f"+verilator+coverage+file+{Path(coverage).resolve()}")
        test_args.append("--coverage-per-instance")
    with suppress(SystemExit, RuntimeError), _kill_after(max_seconds + KILL_GRACE):
        runner.test(
            test_module=TEST_MODULE,
            hdl_toplevel=design.top,
            hdl_toplevel_lang="verilog",
            build_dir=build_dir,
            test_dir=test_dir,
            extra_env={ENV_JOB: str(test_dir / "job.json")},
            results_xml=str(test_dir / "results.xml"),
            log_file=log,
            waves=waves is not None,
            plusargs=plusargs,
            test_args=test_args,
        )
    results = Path(job.results)
    if not results.exists():
        try:
            _check_results(test_dir / "results.xml", log)
        except AssertionError as exc:
            raise SimulationError(str(exc)) from None
        raise SimulationError(f"the cocotb test wrote no results (see {log}):\n{_tail(log)}")
    run = _parse_results(json.loads(results.read_text()), Path(job.memory), params)
    if not keep:
        shutil.rmtree(test_dir, ignore_errors=True)
    return run


def _parse_results(raw: dict[str, Any], memory_file: Path, params: SMParams) -> RtlRun:
    memory = GlobalMemory(params.memmap)
    memory.data[0] = np.load(memory_file)
    return RtlRun(
        stopped=raw["stopped"],
        message=raw["message"],
        issues=[tuple(r) for r in raw["issues"]],
        exits=[(c, b, w, m, tuple(codes)) for c, b, w, m, codes in raw["exits"]],
        fault=raw["fault"],
        counters=raw["counters"],
        clocks=raw["clocks"],
        seconds=raw["seconds"],
        memory=memory,
        load_seconds=raw["load_seconds"],
    )


# ----------------------------------------------------------------------------------------------
# The RTL side as a run result


def hint_pcs(image: Image) -> frozenset[int]:
    """PCs of the ``rhint`` instructions (the hint-instruction metric)."""
    return frozenset(pc for pc, ins in Program(image).code.items() if ins.name == "rhint")


def count_issue(
    counters: Counters, record: IssueRecord, image: Image, hints: frozenset[int]
) -> None:
    """Count one issued warp instruction as golden's SM does (``core.SM._count``)."""
    active = record.mask.bit_count()
    spill = image.spills.get(record.pc)
    counters.warp_instructions += 1
    counters.thread_instructions += active
    counters.issue_passes += record.passes
    counters.hint_instructions += record.pc in hints
    counters.count_active(active)
    counters.spill_loads += spill == "load"
    counters.spill_stores += spill == "store"


def trace_counters(trace: Sequence[IssueRecord], image: Image) -> tuple[Counters, list[Counters]]:
    """The issue counters of the whole SM and of every warp (by id) from an issue trace."""
    hints = hint_pcs(image)
    total: Counters = Counters()
    warps: dict[int, Counters] = {}
    for record in trace:
        count_issue(total, record, image, hints)
        count_issue(warps.setdefault(record.warp, Counters(warp=record.warp)), record, image, hints)
    return total, [warps[w] for w in sorted(warps)]


def rtl_metrics(
    trace: Sequence[IssueRecord], counters: dict[str, int], image: Image, params: SMParams
) -> Metrics:
    """The RTL run's metrics: issue counts from its trace, memory counts and cycles from its
    status counters, ratios by :class:`Metrics`."""
    total, warps = trace_counters(trace, image)
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
    run: RtlRun, launch: LaunchConfig, image: Image, params: SMParams
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
    metrics = rtl_metrics(trace, run.counters, image, params)
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


# ----------------------------------------------------------------------------------------------
# The comparison


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


def _fault_view(fault: SimtFault | None) -> dict[str, Any] | None:
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
            golden=_fault_view(golden.fault), rtl=_fault_view(rtl.fault),
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


# ----------------------------------------------------------------------------------------------
# The report


def metrics_json(metrics: Metrics | None) -> dict[str, Any]:
    every = {} if metrics is None else metrics.to_json()
    return {key: every.get(key) for key in METRICS}


def fault_json(fault: SimtFault | None) -> dict[str, Any] | None:
    if fault is None:
        return None
    return {**_fault_view(fault), "message": str(fault)}  # type: ignore[dict-item]


def params_json(params: SMParams) -> dict[str, Any]:
    config = params.config
    return {
        "geometry": asdict(params.geometry),
        "policy": config.policy.value,
        "hws": config.hws,
        "hints": config.hints,
        "scheduler": config.scheduler.value,
        "scoreboard": config.scoreboard_kind.value,
        "latencies": {k.rstrip("_"): v for k, v in asdict(config.latencies).items()},
        "line_bytes": config.line_bytes,
        "shared_banks": config.shared_banks,
        "memmap": asdict(params.memmap),
        "imem_words": params.imem_words,
    }


@dataclass
class CosimReport:
    """One co-simulated program: the level reached, the first difference, both sides."""

    source: str
    sim: str
    params: SMParams
    requested: int
    reached: int
    difference: Difference | None
    golden: SMResult
    rtl: SMResult
    run: RtlRun
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.reached >= self.requested

    @property
    def cycles_per_second(self) -> float:
        return self.run.cycles_per_second

    def to_json(self) -> dict[str, Any]:
        run = self.run
        return {
            "file": self.source,
            "sim": self.sim,
            "params": params_json(self.params),
            "level_requested": self.requested,
            "level": self.reached,
            "ok": self.ok,
            "difference": None if self.difference is None else self.difference.to_json(),
            "golden": {**metrics_json(self.golden.metrics), "fault": fault_json(self.golden.fault)},
            "rtl": {
                **metrics_json(self.rtl.metrics),
                "stalls": run.counters.get("stalls"),
                "fault": fault_json(self.rtl.fault),
                "stopped": run.stopped,
                "message": run.message,
                "clocks": run.clocks,
                "seconds": run.seconds,
                "cycles_per_second": run.cycles_per_second,
                "load_seconds": run.load_seconds,
            },
        }

    def format(self) -> str:
        p = self.params
        g = p.geometry
        config = p.config
        policy = config.policy.value + (" +hws" if config.hws else "")
        lines = [
            f"{self.source}: {policy} on W={g.warp_size} L={g.simd_width} with {g.warps} warp "
            f"slots, {self.sim}: level {self.reached} reached (requested {self.requested}) — "
            + ("ok" if self.ok else "FAILED"),
        ]
        if not self.run.finished:
            lines.append(f"  rtl stopped: {self.run.message}")
        for name, side in (("golden", self.golden), ("rtl", self.rtl)):
            m = metrics_json(side.metrics)
            lines.append(
                f"  {name:<6} cycles {m['cycles']}, idle {m['idle_cycles']}, warp instructions "
                f"{m['warp_instructions']}, thread instructions {m['thread_instructions']}, "
                f"SIMD efficiency {m['simd_efficiency']:.3f}, lane utilisation "
                f"{m['lane_utilisation']:.3f}, memory transactions {m['memory_transactions']}"
            )
        lines.append(
            f"  rtl: {self.run.clocks} clocks ({self.run.counters.get('stalls', 0)} stalled) in "
            f"{self.run.seconds:.1f} s, {self.run.cycles_per_second:,.0f} cycles/s (instruction "
            f"store loaded in {self.run.load_seconds:.1f} s)"
        )
        if self.difference is not None:
            lines.append("first difference at " + str(self.difference))
        return "\n".join(lines)


def default_max_cycles(golden_cycles: int, backpressure: Backpressure | None) -> int:
    """The watchdog's clock limit after the launch: four times golden's cycles plus a margin,
    more when the memory stalls the SM."""
    limit = 4 * (golden_cycles + 256)
    if backpressure is not None:
        limit *= (1 + backpressure.max_delay) * math.ceil(1 / backpressure.ready)
    return limit


def cosim(
    image: Image,
    launch: LaunchConfig,
    params: SMParams,
    *,
    sim: str = "icarus",
    level: int = 4,
    waves: str | Path | None = None,
    backpressure: Backpressure | None = None,
    max_cycles: int | None = None,
    max_seconds: float = 600.0,
    design: Design | None = None,
    source: str | None = None,
    keep: bool = False,
    coverage: Path | None = None,
) -> CosimReport:
    """Run ``image`` on golden and on the SM's Verilog with the launch's grid, block and
    arguments (its geometry and memory map are replaced by ``params``') and compare them.
    ``level`` is the agreement level required for :attr:`CosimReport.ok`; ``design`` replaces
    the SM (tests); ``waves`` names an FST file to record; ``coverage`` a file for the toggle
    counts (:func:`run_rtl`)."""
    if level not in LEVELS:
        raise CosimError(f"level {level} is not one of {', '.join(map(str, LEVELS))}")
    if sim not in SIMULATORS:
        raise CosimError(f"unknown simulator {sim!r} (known: {', '.join(SIMULATORS)})")
    design = design or sm_design(params)
    launch = replace(launch, geometry=params.geometry, memmap=params.memmap)
    try:
        golden = run_sm(image, launch, params.config, trace=True)
    except ValueError as exc:  # a block larger than the SM's warp slots, an image outside memory
        raise CosimError(str(exc)) from None
    assert golden.metrics is not None
    run = run_rtl(
        design,
        image,
        launch,
        params,
        sim=sim,
        waves=waves,
        backpressure=backpressure,
        max_cycles=max_cycles or default_max_cycles(golden.metrics.cycles, backpressure),
        max_seconds=max_seconds,
        keep=keep,
        coverage=coverage,
    )
    rtl, problems = rtl_result(run, launch, image, params)
    per_block = -(-launch.block // params.geometry.warp_size)
    if not run.finished:
        reached, difference = 0, Difference(1, f"the RTL did not finish: {run.message}")
    elif problems:
        reached, difference = 0, Difference(1, f"the RTL's events are inconsistent: {problems[0]}")
    else:
        reached, difference = compare(
            golden, rtl, warps_per_block=per_block, warp_size=params.geometry.warp_size
        )
    return CosimReport(
        source or image.source,
        sim,
        params,
        level,
        reached,
        difference,
        golden,
        rtl,
        run,
        problems,
    )


def cycles_per_second(
    image: Image, launch: LaunchConfig, params: SMParams, *, sim: str = "icarus"
) -> float:
    """Co-simulation speed (``make bench``): SM clock cycles per wall-clock second of one run
    of ``image`` on the SM's Verilog (the build and the instruction-store load excluded)."""
    return cosim(image, launch, params, sim=sim, level=1).cycles_per_second


__all__ = [
    "Backpressure",
    "CosimError",
    "CosimReport",
    "Design",
    "Difference",
    "RtlRun",
    "SimulationError",
    "compare",
    "cosim",
    "cycles_per_second",
    "instruction_store",
    "loaded_entries",
    "rtl_result",
    "sm_design",
    "trace_counters",
]
