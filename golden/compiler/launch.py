"""Compiled kernels and their launches: the interface between the compiler and any runner that
takes ``(Image, LaunchConfig)`` — the golden functional model now, the cycle-level model and
the RTL later.

A :class:`Program` is what :func:`reconverge.golden.compiler.compile_kernel` returns: the code
as an :class:`~reconverge.golden.image.Image` (assembled from the generated assembly by
:func:`reconverge.golden.asm.assemble`), plus what the compiler knows about it. Binding it to
arguments (:meth:`Program.bind`) gives a :class:`Launch`: the same image with one extra data
segment per array argument, placed in global memory after the program, and the argument
words for ``a0``..``a7`` (array addresses and int values, in parameter order). A runner needs
nothing else::

    program = compile_kernel(avgSquare, allocator="affine", regs=8)
    launch = program.bind(m=matrix, v=np.zeros(n, np.int32), c=n)
    result = functional.run(launch.image, launch.config(grid=1, block=32))
    averages = launch.read(result, "v")
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from reconverge.golden.compiler.affine import State
from reconverge.golden.compiler.errors import CompileError
from reconverge.golden.compiler.ir import Param
from reconverge.golden.functional import LaunchConfig, RunResult
from reconverge.golden.geometry import Geometry
from reconverge.golden.image import Image, Segment
from reconverge.golden.memmap import SHARED_BASE, MemoryMap
from reconverge.golden.memory import GlobalMemory

WORD = 4
ARRAY_ALIGN = 64  # arrays start on their own cache line


@dataclass(frozen=True)
class ValueCheck:
    """A value the instruction at some PC defines: the register it is written to and the
    abstract state the degree-2 affine analysis gives it (for the dynamic soundness check)."""

    function: str
    name: str
    reg: int
    state: State


@dataclass(frozen=True)
class BranchInfo:
    """A conditional branch of the generated code: whether the analysis proves it uniform,
    and its reconvergence point (the IPDOM; None when that is the end of the program)."""

    pc: int
    function: str
    uniform: bool
    reconverge: int | None
    hinted: bool


@dataclass(frozen=True)
class ArrayBinding:
    name: str
    addr: int
    words: int


@dataclass(frozen=True)
class Program:
    """A compiled kernel (see the module docstring)."""

    kernel: str
    params: tuple[Param, ...]
    image: Image
    asm: str
    allocator: str
    regs: int
    #: Byte sizes: every function's local frame, the user's shared arrays, the shared spill
    #: slots of one warp (docs/isa.md, memory map), and the local memory a thread needs
    #: (None when recursion makes it unbounded).
    frames: Mapping[str, int]
    shared_user_bytes: int
    shared_spill_base: int
    shared_spill_per_warp: int
    stack_bytes: int | None
    #: PC -> values defined there; PC -> kind of spill code (``local``, ``shared``,
    #: ``remat``, ``param``); the conditional branches.
    checks: Mapping[int, tuple[ValueCheck, ...]]
    spill_code: Mapping[int, str]
    branches: tuple[BranchInfo, ...]
    #: Per function: the spilled registers and where they went (regalloc.Allocation).
    allocations: Mapping[str, Any] = field(default_factory=dict)
    #: The analyses of the compiled functions (analysis.ModuleAnalysis), and the IR texts.
    analysis: Any = None
    ir_text: str = ""
    gsa_text: str = ""

    def warps_per_block(self, block: int, geometry: Geometry) -> int:
        return -(-block // geometry.warp_size)

    def bind(self, *args: object, **kwargs: object) -> Launch:
        """A launch of this program with its arguments given by position or by parameter name:
        int32 array-likes for ``Array`` parameters, ints for the others."""
        values = _by_name(self.kernel, self.params, args, kwargs)
        end = max(s.end for s in self.image.segments)
        segments = list(self.image.segments)
        arrays: dict[str, ArrayBinding] = {}
        words: list[int] = []
        for p in self.params:
            value = values[p.name]
            if p.kind == "int":
                if isinstance(value, np.ndarray | list | tuple):
                    raise CompileError(
                        f"argument {p.name} of {self.kernel} is an int, not an array"
                    )
                words.append(int(value) & 0xFFFF_FFFF)  # type: ignore[call-overload]
                continue
            data = np.asarray(value, dtype=np.int64).ravel()
            addr = -(-end // ARRAY_ALIGN) * ARRAY_ALIGN
            size = max(WORD, WORD * len(data))
            raw = (data & 0xFFFF_FFFF).astype("<u4").tobytes()
            segments.append(Segment(addr, raw, size, "rw"))
            arrays[p.name] = ArrayBinding(p.name, addr, len(data))
            words.append(addr)
            end = addr + size
        image = replace(self.image, segments=tuple(segments))
        return Launch(self, image, tuple(words), arrays)


def _by_name(
    kernel: str, params: Sequence[Param], args: Sequence[object], kwargs: Mapping[str, object]
) -> dict[str, object]:
    names = [p.name for p in params]
    if len(args) > len(names):
        raise CompileError(f"{kernel} takes {len(names)} arguments, not {len(args)}")
    values = dict(zip(names, args, strict=False))
    for name, value in kwargs.items():
        if name not in names:
            raise CompileError(f"{kernel} has no parameter {name!r} (it has {', '.join(names)})")
        if name in values:
            raise CompileError(f"argument {name} of {kernel} given twice")
        values[name] = value
    missing = [n for n in names if n not in values]
    if missing:
        raise CompileError(f"{kernel}: missing argument(s) {', '.join(missing)}")
    return values


@dataclass(frozen=True)
class Launch:
    """A program bound to its arguments: ``image`` holds the code and the arrays, ``args`` the
    words for a0..a7."""

    program: Program
    image: Image
    args: tuple[int, ...]
    arrays: Mapping[str, ArrayBinding]

    def config(
        self,
        grid: int,
        block: int,
        *,
        geometry: Geometry | None = None,
        memmap: MemoryMap | None = None,
        step_limit: int = 10_000_000,
    ) -> LaunchConfig:
        """The LaunchConfig of ``grid`` blocks of ``block`` threads; checks that the program's
        shared and local memory needs fit the memory map."""
        geometry = geometry or Geometry()
        memmap = memmap or MemoryMap()
        p = self.program
        warps = p.warps_per_block(block, geometry)
        shared_end = p.shared_spill_base + p.shared_spill_per_warp * warps
        if shared_end - SHARED_BASE > memmap.shared_size:
            raise CompileError(
                f"{p.kernel} needs {shared_end - SHARED_BASE} bytes of shared memory per block "
                f"({p.shared_user_bytes} of arrays and {p.shared_spill_per_warp} of spill slots "
                f"for each of {warps} warps), more than the {memmap.shared_size} of the memory map"
            )
        if p.stack_bytes is not None and p.stack_bytes > memmap.local_size:
            raise CompileError(
                f"{p.kernel} needs {p.stack_bytes} bytes of local memory per thread, more than the "
                f"{memmap.local_size} of the memory map"
            )
        return LaunchConfig(grid, block, geometry, memmap, self.args, step_limit)

    def read(self, source: RunResult | GlobalMemory, name: str) -> np.ndarray:
        """The array argument ``name`` in a run's final global memory (int32)."""
        memory = source.memory if isinstance(source, RunResult) else source
        if name not in self.arrays:
            raise CompileError(f"{name!r} is not an array argument of {self.program.kernel}")
        binding = self.arrays[name]
        return memory.read_words(binding.addr, binding.words).view(np.int32).copy()

    def outputs(self, source: RunResult | GlobalMemory) -> dict[str, np.ndarray]:
        """Every array argument's final contents, by name."""
        return {name: self.read(source, name) for name in self.arrays}
