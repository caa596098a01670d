"""cocotb test module: one program on the generated Verilog of the SM (docs/sm-hardware.md,
"Ports of SM"), with the testbench's memory behind its data port.

:func:`reconverge.testbench.cosim.run_rtl` says what to run through a JSON :class:`Job` whose
path is in the environment variable :data:`ENV_JOB`. The test resets the DUT, writes the
instruction-store entries that hold something through the load port (each word with its RPC;
:func:`~reconverge.testbench.cosim.loaded_entries`), sets the launch inputs, pulses
``launch__start`` and then, every cycle, serves the memory port (:class:`~reconverge.testbench.
memory_model.MemoryPort`) and records the issue trace and the exit events, until
``status__done`` or ``status__fault``, or until a watchdog (a cycle and a wall-clock limit)
stops it with a message naming the last issue. It writes a results file (:data:`RESULT_KEYS`)
and the final global memory (``.npy``). The per-cycle Python work is kept small: five one-bit
reads, and the event fields only when an event happens.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly

from reconverge.golden.image import Image, Segment
from reconverge.golden.memmap import MemoryMap
from reconverge.testbench.memory_model import (
    Backpressure,
    MemoryModel,
    MemoryPort,
    MemoryProtocolError,
)

#: Environment variable holding the path of the job file.
ENV_JOB = "RECONVERGE_COSIM_JOB"
PERIOD_NS = 10
RESET_CYCLES = 2
#: Cycles between two looks at the wall clock.
CLOCK_CHECK = 256
#: Keys of the results file.
RESULT_KEYS = (
    "stopped",  # done, fault, watchdog or error
    "message",  # the watchdog's or the error's message ("" otherwise)
    "issues",  # [cycle, slot, block, warp, sid, pc, mask, passes] per trace event
    "exits",  # [clock, block, warp, mask, codes of the mask's lanes] per exit event
    "fault",  # null or {code, pc, block, thread}
    "counters",  # status counters by name (cycles, idle_cycles, ...)
    "clocks",  # clock cycles from launch to the stop
    "seconds",  # wall time of those cycles
    "load_seconds",  # wall time of the instruction-store load (one entry per clock)
)
#: The status counters of the SM, by the name after ``status__``.
COUNTERS = ("cycles", "idle_cycles", "transactions", "shared_cycles", "bank_conflicts", "stalls")
TRACE_FIELDS = ("cycle", "slot", "block", "warp", "sid", "pc", "mask", "passes")


@dataclass(frozen=True)
class Job:
    """Everything the test needs, as plain data (JSON)."""

    entry: int
    segments: tuple[tuple[int, int, str, str], ...]  # (vaddr, memsz, flags, data as hex)
    memmap: tuple[int, int, int]  # global, shared, local window sizes
    line_bytes: int
    local_bytes: int  # physical local memory behind the port
    warp_size: int
    imem: tuple[tuple[int, int], ...]  # (word, rpc) of the entries to load, from index 0
    grid: int
    block: int
    gp: int
    args: tuple[int, ...]  # a0..a7
    max_cycles: int  # watchdog: clock cycles after the launch
    max_seconds: float  # watchdog: wall time of the run
    backpressure: tuple[float, int, int] | None  # Backpressure(ready, max_delay, seed)
    results: str  # path of the results file (JSON)
    memory: str  # path of the final global memory (.npy, uint8)

    @staticmethod
    def encode_image(image: Image) -> tuple[int, tuple[tuple[int, int, str, str], ...]]:
        return image.entry, tuple((s.vaddr, s.memsz, s.flags, s.data.hex()) for s in image.segments)

    def image(self) -> Image:
        return Image(
            self.entry,
            tuple(Segment(v, bytes.fromhex(d), m, f) for v, m, f, d in self.segments),
        )

    def memory_model(self) -> MemoryModel:
        return MemoryModel(self.image(), MemoryMap(*self.memmap), self.line_bytes, self.local_bytes)

    def port(self) -> MemoryPort:
        bp = None if self.backpressure is None else Backpressure(*self.backpressure)
        return MemoryPort(self.memory_model(), bp)

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self)))

    @classmethod
    def read(cls, path: Path) -> Job:
        raw = json.loads(path.read_text())
        tuples = {"segments", "memmap", "imem", "args", "backpressure"}
        return cls(**{k: _tuples(v) if k in tuples else v for k, v in raw.items()})


def _tuples(value: Any) -> Any:
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


class Stop(Exception):
    """Ends the run loop after ``clocks`` cycles: ``reason`` is watchdog or error."""

    def __init__(self, reason: str, message: str, clocks: int) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.clocks = clocks


class SMBench:
    """Drives one job on a DUT with the SM's ports (a cocotb handle)."""

    def __init__(self, dut: Any, job: Job) -> None:
        self.dut = dut
        self.job = job
        self.port = job.port()
        self.issues: list[list[int]] = []
        self.exits: list[list[Any]] = []
        self._trace = [getattr(dut, f"trace__{name}") for name in TRACE_FIELDS]

    async def start(self) -> None:
        """Inputs idle, the clock started low, ``rst`` high for :data:`RESET_CYCLES`."""
        dut = self.dut
        dut.rst.value = 1
        for name in ("load__valid", "launch__start", "mem__resp_valid"):
            getattr(dut, name).value = 0
        for name in ("load__addr", "load__word", "load__rpc", "mem__resp_rdata"):
            getattr(dut, name).value = 0
        self._launch_inputs(0)
        dut.mem__req_ready.value = 1
        cocotb.start_soon(Clock(dut.clk, PERIOD_NS, unit="ns").start(start_high=False))
        for _ in range(RESET_CYCLES):
            await FallingEdge(dut.clk)
        dut.rst.value = 0

    def _launch_inputs(self, scale: int) -> None:
        """The launch values (``scale`` 0: all zero during reset)."""
        dut, job = self.dut, self.job
        dut.launch__grid.value = job.grid * scale
        dut.launch__block.value = job.block * scale
        dut.launch__entry.value = job.entry * scale
        dut.launch__gp.value = job.gp * scale
        packed = sum((a & 0xFFFF_FFFF) << 32 * i for i, a in enumerate(job.args))
        dut.launch__args.value = packed * scale

    async def load(self) -> None:
        """The job's instruction-store entries through the load port, one per cycle."""
        dut = self.dut
        falling = FallingEdge(dut.clk)
        dut.load__valid.value = 1
        for index, (word, rpc) in enumerate(self.job.imem):
            dut.load__addr.value = index
            dut.load__word.value = word
            dut.load__rpc.value = rpc
            await falling
        dut.load__valid.value = 0

    async def launch(self) -> None:
        """The launch inputs, then a one-cycle ``launch__start`` pulse."""
        self._launch_inputs(1)
        self.dut.launch__start.value = 1
        await FallingEdge(self.dut.clk)
        self.dut.launch__start.value = 0

    async def run(self) -> dict[str, Any]:
        """Cycle by cycle until done, fault or a watchdog; the results (:data:`RESULT_KEYS`)."""
        start = time.monotonic()
        message, counters, fault = "", {}, None
        try:
            clocks, stopped = await self._loop(start)
            counters = {name: self._read(f"status__{name}", clocks) for name in COUNTERS}
            if stopped == "fault":
                fault = {
                    name: self._read(f"status__fault_{name}", clocks)
                    for name in ("code", "pc", "block", "thread")
                }
        except Stop as stop:
            stopped, message, clocks = stop.reason, stop.message, stop.clocks
        seconds = time.monotonic() - start
        return {
            "stopped": stopped,
            "message": message,
            "issues": self.issues,
            "exits": self.exits,
            "fault": fault,
            "counters": counters,
            "clocks": clocks,
            "seconds": seconds,
        }

    async def _loop(self, start: float) -> tuple[int, str]:
        dut, port, job = self.dut, self.port, self.job
        falling, read_only = FallingEdge(dut.clk), ReadOnly()
        req_valid, req_ready = dut.mem__req_valid, dut.mem__req_ready
        resp_valid, resp_rdata = dut.mem__resp_valid, dut.mem__resp_rdata
        trace_valid, exit_valid = dut.trace__valid, dut.exit__valid
        done, fault = dut.status__done, dut.status__fault
        ready_now, response_now = True, False
        cycle = 0
        while True:  # entered at the falling edge after the launch edge: cycle 0
            ready, response = port.drive(cycle)
            if ready != ready_now:
                req_ready.value = int(ready)
                ready_now = ready
            if response is not None:
                resp_rdata.value = response
                resp_valid.value = 1
                response_now = True
            elif response_now:
                resp_valid.value = 0
                response_now = False
            await read_only
            try:
                if trace_valid.value:
                    self.issues.append([int(h.value) for h in self._trace])
                if exit_valid.value:
                    self._exit(cycle)
                if ready and req_valid.value:
                    port.accept(
                        cycle,
                        int(dut.mem__req_op.value),
                        int(dut.mem__req_addr.value),
                        int(dut.mem__req_amo.value),
                        int(dut.mem__req_be.value),
                        int(dut.mem__req_wdata.value),
                    )
                if fault.value:
                    return cycle + 1, "fault"
                if done.value:
                    return cycle + 1, "done"
            except ValueError as exc:  # an X or Z where a number is due
                raise self._stop("error", cycle, f"an output is not a number ({exc})") from None
            except MemoryProtocolError as exc:
                raise self._stop(
                    "error", cycle, f"memory request breaks the contract: {exc}"
                ) from None
            cycle += 1
            if cycle >= job.max_cycles:
                raise self._stop("watchdog", cycle, f"no completion within {cycle} cycles")
            if cycle % CLOCK_CHECK == 0 and time.monotonic() - start > job.max_seconds:
                what = f"no completion within {job.max_seconds:g} s ({cycle} cycles)"
                raise self._stop("watchdog", cycle, what)
            await falling

    def _exit(self, cycle: int) -> None:
        dut, width = self.dut, self.job.warp_size
        mask = int(dut.exit__mask.value)
        codes = int(dut.exit__codes.value)
        lanes = [lane for lane in range(width) if mask >> lane & 1]
        self.exits.append(
            [
                cycle,
                int(dut.exit__block.value),
                int(dut.exit__warp.value),
                mask,
                [codes >> 32 * lane & 0xFFFF_FFFF for lane in lanes],
            ]
        )

    def _stop(self, reason: str, cycle: int, what: str) -> Stop:
        if self.issues:
            c, slot, block, warp, sid, pc, mask, _ = self.issues[-1]
            last = (
                f"last issue: cycle {c}, block {block} warp {warp} (slot {slot}) split {sid}, "
                f"pc {pc:#010x}, mask {mask:#x}"
            )
        else:
            last = "no instruction issued"
        return Stop(reason, f"{reason} at clock {cycle} after the launch: {what}; {last}", cycle)

    def _read(self, name: str, clocks: int) -> int:
        value = getattr(self.dut, name).value
        try:
            return int(value)
        except ValueError:
            raise Stop("error", f"{name} is not a number: {value}", clocks) from None

    def write(self, results: dict[str, Any]) -> None:
        Path(self.job.results).write_text(json.dumps(results))
        np.save(self.job.memory, self.port.model.global_memory.data[0])


@cocotb.test()
async def run_program(dut: Any) -> None:
    """Load, launch and run the program of the job named by ``RECONVERGE_COSIM_JOB``."""
    job = Job.read(Path(os.environ[ENV_JOB]))
    bench = SMBench(dut, job)
    await bench.start()
    start = time.monotonic()
    await bench.load()
    load_seconds = time.monotonic() - start
    await bench.launch()
    results = {**await bench.run(), "load_seconds": load_seconds}
    bench.write(results)
    dut._log.info(
        "%s after %d clocks (%.1f s): %d issues, %d exits %s",
        results["stopped"],
        results["clocks"],
        results["seconds"],
        len(results["issues"]),
        len(results["exits"]),
        results["message"],
    )
