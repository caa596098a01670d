"""One program on the SM's Verilog under cocotb: what the testbench loads (the instruction
store with every control instruction's reconvergence PC, the launch's arguments), the job the
cocotb test (:mod:`reconverge.testbench.cocotb_sm`) runs with the testbench's memory behind the
SM's data port, and what it recorded (:class:`RtlRun`)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from reconverge.golden.blocks.divergence import NEVER
from reconverge.golden.functional import GLOBAL_POINTER_SYMBOL, LaunchConfig
from reconverge.golden.isa import ILEN_BYTES, MASK32
from reconverge.golden.memmap import GLOBAL_BASE
from reconverge.golden.memory import GlobalMemory
from reconverge.golden.params import ARG_REGS, SMParams
from reconverge.golden.sm.program import Program
from reconverge.testbench.build import Design, build, wave_format
from reconverge.testbench.cocotb_sm import ENV_JOB, Job
from reconverge.testbench.errors import CosimError, SimulationError
from reconverge.testbench.memory_model import Backpressure, local_span
from reconverge.testbench.runner import check_results, log_tail, run_test

#: The cocotb test module of the SM.
TEST_MODULE = "reconverge.testbench.cocotb_sm"
#: Seconds the simulator process may outlive the wall-clock watchdog before it is killed
#: (a simulator stuck inside one time step never returns to the Python watchdog).
KILL_GRACE = 120


def instruction_store(program: Program, params: SMParams) -> tuple[tuple[int, int], ...]:
    """(word, RPC) of every instruction-store entry: the image's words from GLOBAL_BASE, each
    control instruction with its reconvergence PC (:meth:`Program.rpc`: the ``rhint`` or the
    immediate postdominator; NEVER and RETURN as they are), every other word with NEVER (all
    ones). A program whose code or entry lies outside the store is a :class:`CosimError`."""
    image = program.image
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
    return tuple(program.store(params.imem_words))


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
def kill_after(seconds: float) -> Iterator[None]:
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
    program: Program,
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
    """Run ``program`` on the design under cocotb. The run's directory (job, log, results) is
    removed afterwards unless ``keep`` or the simulation failed. ``coverage``: run the
    toggle-coverage build (Verilator) and write its counts to this file."""
    image = program.image
    store = loaded_entries(instruction_store(program, params))  # fails before the build if too big
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
    with kill_after(max_seconds + KILL_GRACE):
        results_xml, log = run_test(
            runner, test_module=TEST_MODULE, top=design.top, build_dir=build_dir,
            test_dir=test_dir, env={ENV_JOB: str(test_dir / "job.json")},
            waves=waves is not None, plusargs=plusargs, test_args=test_args,
        )  # fmt: skip
    results = Path(job.results)
    if not results.exists():
        try:
            check_results(results_xml, log)
        except AssertionError as exc:
            raise SimulationError(str(exc)) from None
        raise SimulationError(f"the cocotb test wrote no results (see {log}):\n{log_tail(log)}")
    run = parse_results(json.loads(results.read_text()), Path(job.memory), params)
    if not keep:
        shutil.rmtree(test_dir, ignore_errors=True)
    return run


def parse_results(raw: dict[str, Any], memory_file: Path, params: SMParams) -> RtlRun:
    """The run the cocotb test recorded in ``raw`` (its results file) and ``memory_file``."""
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
