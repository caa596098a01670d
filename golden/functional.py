"""The golden functional SIMT model: runs a program image over a grid of blocks and reports
final memory, exit codes and instruction counts. It is not timed; the cycle-level model reuses
its instruction semantics (:mod:`~reconverge.golden.semantics`) and memories
(:mod:`~reconverge.golden.memory`).

Execution model
    * Blocks run one after another, each to completion, in increasing block index; they share
      global memory. (A grid whose blocks wait on each other therefore never completes and ends
      in a :class:`StepLimitFault`.) Each block gets fresh, zeroed shared and local memories.
    * A block's threads form warps of W; the last warp may be partial, its missing lanes being
      inactive forever.
    * Every thread has its own PC (the stack-less model of seed 000 Sec 3). Each step picks one
      warp, round robin over the block's warps that have runnable threads, and in it issues the
      instruction at the minimum SP:PC over its runnable threads (seed 000 Sec 4.1) for exactly
      the threads at that SP:PC. Threads at the same call depth and PC thus reconverge.
    * ``bar`` makes a thread wait. A barrier completes when every thread of the block waits at
      the same ``bar``; all are then released to the next instruction. When no thread of the
      block can run and some wait, but not every thread waits at one ``bar`` (threads exited,
      or wait at different ``bar`` instructions), the barrier can never complete: a
      :class:`BarrierFault`. Exited threads never arrive, so a ``bar`` after an early exit of
      some threads is a fault, as ``__syncthreads`` in divergent code is an error in CUDA.

A run never raises :class:`SimtFault`: it stops at the first fault and returns the partial
result with the fault attached (:meth:`RunResult.check` raises it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from reconverge.golden.faults import (
    IllegalInstructionFault,
    SimtFault,
    StepLimitFault,
    barrier_fault,
)
from reconverge.golden.geometry import Geometry
from reconverge.golden.image import Image
from reconverge.golden.isa import (
    ILEN_BYTES,
    MASK32,
    NUM_REGS,
    REG_A0,
    REG_SP,
    IllegalInstruction,
    Instr,
    decode,
)
from reconverge.golden.memmap import MemoryMap
from reconverge.golden.memory import GlobalMemory, LocalMemory, SharedMemory, WarpMemory
from reconverge.golden.native.build import available, load
from reconverge.golden.native.kernel import BlockKernel, CodeTable
from reconverge.golden.progress import EVERY, Callback, launch_bytes
from reconverge.golden.semantics import WarpContext, execute

REG_GP = 3
MAX_ARGS = 8  # a0..a7
GLOBAL_POINTER_SYMBOL = "__global_pointer$"

_NOT_RUNNABLE = np.uint64(2**64 - 1)  # SP:PC key of threads that take no part in arbitration


#: The launch of a program when the command line does not give one (``exec`` and ``run``).
DEFAULT_GRID, DEFAULT_BLOCK = 1, 32


#: The default budget of warp instructions of a run: up to half a minute of the functional
#: model and a minute or two of the cycle-level SM on divergent code at W = 32, on this
#: project's 2-core reference machine (a progress line shows after two seconds).
DEFAULT_STEP_LIMIT = 1_000_000


@dataclass(frozen=True)
class LaunchConfig:
    """A kernel launch: ``grid`` blocks of ``block`` threads, with up to 8 arguments in a0..a7
    (each masked to 32 bits) and a budget of warp instructions for the whole run."""

    grid: int
    block: int
    geometry: Geometry = field(default_factory=Geometry)
    memmap: MemoryMap = field(default_factory=MemoryMap)
    args: tuple[int, ...] = ()
    step_limit: int = 10_000_000

    def __post_init__(self) -> None:
        if self.grid < 1 or self.block < 1:
            raise ValueError(
                f"grid and block must be positive (got grid {self.grid}, block {self.block})"
            )
        if len(self.args) > MAX_ARGS:
            raise ValueError(f"at most {MAX_ARGS} arguments (a0-a7), got {len(self.args)}")
        if self.step_limit < 1:
            raise ValueError(f"step limit must be positive, not {self.step_limit}")


@dataclass
class RunResult:
    """Outcome of a run; per-thread arrays have shape (grid, block). Threads that did not exit
    (after a fault) have exit code 0 and ``exited`` False."""

    exit_codes: np.ndarray  # int32
    thread_instructions: np.ndarray  # int64: instructions each thread executed
    warp_instructions: int  # warp instructions issued (steps)
    exited: np.ndarray  # bool
    memory: GlobalMemory  # final global memory
    fault: SimtFault | None = None

    @property
    def ok(self) -> bool:
        """No fault, and every thread exited with code 0."""
        return self.fault is None and bool(self.exited.all()) and not self.exit_codes.any()

    def check(self) -> RunResult:
        """Raise the fault of a run that faulted; return the result otherwise."""
        if self.fault is not None:
            raise self.fault
        return self


class _Warp:
    """Per-lane architectural state of one warp (registers, PC) and status of its threads."""

    def __init__(
        self, index: int, threads: int, image: Image, config: LaunchConfig, mem: WarpMemory
    ) -> None:
        width = config.geometry.warp_size
        self.index = index
        self.ctx = WarpContext.of_warp(
            grid=config.grid,
            block=mem.block,
            block_size=config.block,
            warp=index,
            warp_size=width,
        )
        self.mem = mem
        self.regs = initial_registers(width, image, config)
        self.pc = np.full(width, image.entry & MASK32, np.uint32)
        self.valid = np.arange(width) < threads
        self.runnable = self.valid.copy()
        self.waiting = np.zeros(width, bool)
        self.exited = np.zeros(width, bool)
        self.exit_codes = np.zeros(width, np.int32)
        self.instructions = np.zeros(width, np.int64)
        self.n_runnable = threads
        self.group: _Group | None = None

    def issue(self) -> tuple[int, np.ndarray]:
        """Execute one warp instruction: the one at the minimum SP:PC of the runnable threads,
        for the threads at that SP:PC (seed 000 Sec 4.1). Returns its pc and lanes."""
        group = self.group or self._arbitrate()
        lanes, pc = group.lanes, group.key & MASK32
        ins = self._fetch(pc, lanes)
        out = execute(ins, pc, self.regs, lanes, self.mem, self.ctx)
        group.issued += 1
        if out.uniform is None:
            self.flush()
            self.pc[lanes] = out.next_pcs
        else:
            group.key = (group.key >> 32) << 32 | out.uniform  # SP:PC, while SP is unchanged
            if ins.rd == REG_SP or group.key >= group.rest:
                self.flush()
        if out.exit_codes is not None:
            self.exit_codes[lanes] = out.exit_codes
            self._stop(lanes, self.exited)
        if out.barrier:
            self._stop(lanes, self.waiting)
        return pc, lanes

    def _arbitrate(self) -> _Group:
        """The runnable threads at the minimum SP:PC, and the minimum key of the others."""
        keys = (self.regs[:, REG_SP].astype(np.uint64) << 32) | self.pc
        keys = np.where(self.runnable, keys, _NOT_RUNNABLE)
        common = keys.min()
        at = keys == common
        rest = int(keys[~at].min(initial=_NOT_RUNNABLE))
        self.group = _Group(np.flatnonzero(at), int(common), rest)
        return self.group

    def flush(self) -> None:
        """Drop the group: the next issue arbitrates again. Its threads' pc and instruction
        count, which the group held while it issued, go to :attr:`pc` and :attr:`instructions`.
        """
        group, self.group = self.group, None
        if group is not None:
            self.pc[group.lanes] = group.key & MASK32
            self.instructions[group.lanes] += group.issued

    def _fetch(self, pc: int, lanes: np.ndarray) -> Instr:
        """Fetch and decode the instruction at ``pc`` for ``lanes`` (decoding is cached by word,
        so stores into code are honoured)."""
        try:
            return decode_word(self.mem.global_memory.fetch(pc))
        except SimtFault as fault:
            raise fault.locate(
                block=self.ctx.block, thread=self.ctx.thread(int(lanes[0])), pc=pc
            ) from None

    def _stop(self, lanes: np.ndarray, status: np.ndarray) -> None:
        """Take ``lanes`` out of arbitration, marking them in ``status`` (exited or waiting)."""
        self.flush()
        status[lanes] = True
        self.runnable[lanes] = False
        self.n_runnable -= len(lanes)

    def release(self) -> None:
        """Let the threads waiting at a completed barrier continue after it."""
        self.pc[self.waiting] += np.uint32(ILEN_BYTES)
        self.runnable |= self.waiting
        self.n_runnable += int(self.waiting.sum())
        self.waiting[:] = False

    def live_pcs(self) -> list[int]:
        """Distinct PCs of the threads that have not exited."""
        self.flush()
        return sorted({int(pc) for pc in self.pc[self.valid & ~self.exited]})


@dataclass(slots=True)
class _Group:
    """The threads a warp issues for: ``lanes`` at SP:PC ``key``, the minimum over its runnable
    threads, and ``rest``, the minimum key of its other runnable threads. Kept from one issue to
    the next while the arbitration's result is known without looking at the other threads;
    meanwhile the group holds their pc (``key``) and how many instructions they ``issued``."""

    lanes: np.ndarray
    key: int
    rest: int
    issued: int = 0


def decode_word(word: int) -> Instr:
    try:
        return decode(word)
    except IllegalInstruction as exc:
        raise IllegalInstructionFault(exc.why, instr=f".word {word:#010x}") from None


def initial_registers(width: int, image: Image, config: LaunchConfig) -> np.ndarray:
    """x0 = 0, sp = top of local memory, gp = ``__global_pointer$`` if defined, a0..a7 = the
    launch arguments, everything else 0."""
    regs = np.zeros((width, NUM_REGS), np.uint32)
    regs[:, REG_SP] = config.memmap.initial_sp
    regs[:, REG_GP] = image.symbols.get(GLOBAL_POINTER_SYMBOL, 0) & MASK32
    for i, arg in enumerate(config.args):
        regs[:, REG_A0 + i] = arg & MASK32
    return regs


#: ``observer(block, warp, pc, lanes, regs)``, see :func:`run`.
Observer = Callable[[int, int, int, np.ndarray, np.ndarray], None]


class _Machine:
    """One run: global memory, the per-thread results, and the warp-instruction budget."""

    def __init__(
        self,
        image: Image,
        config: LaunchConfig,
        observer: Observer | None = None,
        progress: Callback | None = None,
        engine: str = "reference",
    ) -> None:
        self.image = image
        self.config = config
        self.observer = observer
        self.progress = progress
        self.blocks_done = 0
        # the next step at which to report progress or stop at the limit
        self.checkpoint = min(config.step_limit, EVERY) if progress else config.step_limit
        self.memory = GlobalMemory(config.memmap)
        self.memory.load_image(image)
        shape = (config.grid, config.block)
        self.exit_codes = np.zeros(shape, np.int32)
        self.thread_instructions = np.zeros(shape, np.int64)
        self.exited = np.zeros(shape, bool)
        self.steps = 0
        self.code = CodeTable(self.memory) if engine == "compiled" else None

    def run(self) -> RunResult:
        fault = None
        try:
            for block in range(self.config.grid):
                self._run_block(block)
                self.blocks_done += 1
        except SimtFault as exc:
            fault = exc
        return RunResult(
            self.exit_codes,
            self.thread_instructions,
            self.steps,
            self.exited,
            self.memory,
            fault,
        )

    def _warps(self, block: int) -> list[_Warp]:
        width, size = self.config.geometry.warp_size, self.config.block
        shared = SharedMemory(self.config.memmap)
        warps = []
        for index, first in enumerate(range(0, size, width)):
            local = LocalMemory(width, self.config.memmap)
            mem = WarpMemory(self.memory, shared, local, block=block, first_thread=first)
            warps.append(_Warp(index, min(width, size - first), self.image, self.config, mem))
        return warps

    def _run_block(self, block: int) -> None:
        warps = self._warps(block)
        try:
            self._schedule(block, warps)
        finally:
            self._record(block, warps)

    def _schedule(self, block: int, warps: list[_Warp]) -> None:
        """Round robin over the warps with runnable threads until every thread has exited. The
        compiled loop, when used, issues every instruction it can; what it stops before (an
        event, see golden/native/block.c) the reference below executes, one at a time."""
        kernel = None if self.code is None else BlockKernel(self.code, warps)
        turn = 0
        while True:
            if kernel is not None and self.steps < self.checkpoint:
                reservations = bool(self.memory.reservations)
                turn, steps = kernel.run(turn, self.checkpoint - self.steps, reservations)
                self.steps += steps
            warp = _next_ready(warps, turn)
            if warp is None:
                if not any(w.waiting.any() for w in warps):
                    return
                _complete_barrier(block, warps, self.config.block)
                continue
            if self.steps >= self.checkpoint:
                if self.steps >= self.config.step_limit:
                    raise _step_limit_fault(block, warps, self.config.step_limit)
                assert self.progress is not None
                self.progress(self.steps, self.blocks_done)
                self.checkpoint = min(self.config.step_limit, self.steps + EVERY)
            pc, lanes = warp.issue()
            if self.observer is not None:
                self.observer(block, warp.index, pc, lanes, warp.regs)
            self.steps += 1
            turn = (warp.index + 1) % len(warps)

    def _record(self, block: int, warps: list[_Warp]) -> None:
        width = self.config.geometry.warp_size
        for warp in warps:
            warp.flush()  # a run that faulted stops with a group issuing
            threads = slice(warp.index * width, warp.index * width + int(warp.valid.sum()))
            valid = warp.valid
            self.exit_codes[block, threads] = warp.exit_codes[valid]
            self.thread_instructions[block, threads] = warp.instructions[valid]
            self.exited[block, threads] = warp.exited[valid]


def _next_ready(warps: list[_Warp], turn: int) -> _Warp | None:
    """The first warp with runnable threads, starting at index ``turn`` (round robin)."""
    for i in range(len(warps)):
        warp = warps[(turn + i) % len(warps)]
        if warp.n_runnable:
            return warp
    return None


def _complete_barrier(block: int, warps: list[_Warp], block_size: int) -> None:
    """No thread of the block can run and some wait at ``bar``: release them if every thread
    of the block waits at the same ``bar``, otherwise the barrier can never complete."""
    waiters: dict[int, list[int]] = {}
    exited: list[int] = []
    for warp in warps:
        for lane in np.flatnonzero(warp.waiting):
            waiters.setdefault(int(warp.pc[lane]), []).append(warp.ctx.thread(int(lane)))
        exited += [warp.ctx.thread(int(lane)) for lane in np.flatnonzero(warp.exited)]
    fault = barrier_fault(block, waiters, exited, block_size)
    if fault is not None:
        raise fault
    for warp in warps:
        warp.release()


def _step_limit_fault(block: int, warps: list[_Warp], limit: int) -> StepLimitFault:
    running = []
    for warp in warps:
        pcs = warp.live_pcs()
        if pcs:
            label = "pc" if len(pcs) == 1 else "pcs"
            running.append(f"warp {warp.index} at {label} {', '.join(f'{p:#010x}' for p in pcs)}")
    return StepLimitFault(
        f"no completion within {limit} warp instructions; still running: {'; '.join(running)}",
        block=block,
    )


def run(
    image: Image,
    config: LaunchConfig,
    observer: Observer | None = None,
    progress: Callback | None = None,
    engine: str = "auto",
) -> RunResult:
    """Run ``image`` from its entry point in every thread of the launch (see the module
    docstring for the execution model). Raises only for host-side errors (e.g. an image that
    does not fit global memory, :class:`~reconverge.golden.memory.AddressError`).

    ``engine`` (one of :data:`ENGINES`) chooses who executes: ``reference``, the NumPy
    semantics instruction by instruction; ``compiled``, the compiled inner loop
    (golden/native), which hands every event it does not handle to the reference and gives
    identical results; ``auto``, the compiled loop where it can be built and no ``observer``
    is given.

    ``observer``, when given, is called after every executed warp instruction as
    ``observer(block, warp, pc, lanes, regs)``: the warp's index in its block, the
    instruction's pc, the indices of the lanes that executed it (increasing) and the warp's
    registers afterwards (a ``(W, 32)`` uint32 array, lane-major; read it, do not keep or
    modify it). The compiler's dynamic soundness check of the divergence analysis uses it.
    ``progress`` is called every ``golden.progress.EVERY`` warp instructions with the warp
    instructions and the blocks finished so far."""
    return _Machine(image, config, observer, progress, choose_engine(engine, observer)).run()


#: The executors of :func:`run`.
ENGINES = ("auto", "compiled", "reference")


def choose_engine(engine: str, observer: Observer | None = None) -> str:
    """``compiled`` or ``reference`` for the ``engine`` asked for (see :func:`run`); raises
    :class:`~reconverge.golden.native.build.NativeUnavailable` when ``compiled`` is asked for
    and cannot be built."""
    if engine not in ENGINES:
        raise ValueError(f"engine {engine!r} is not one of {', '.join(ENGINES)}")
    if engine == "reference" or (engine == "auto" and observer is not None):
        return "reference"
    if observer is not None:
        raise ValueError("the compiled engine calls no observer: use engine='reference'")
    if engine == "auto":
        return "compiled" if available() else "reference"
    load()
    return "compiled"


def memory_needed(config: LaunchConfig) -> int:
    """The memory a functional run of ``config`` needs besides global memory: it holds one
    block at a time (``golden.progress.launch_bytes``)."""
    width = config.geometry.warp_size
    resident = -(-config.block // width) * width
    memmap = config.memmap
    return launch_bytes(
        config.grid, config.block, resident, memmap.local_size, memmap.shared_size, 1
    )
