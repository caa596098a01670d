"""The kernel suite's common shape: every workload is a :class:`SuiteKernel` — a kernel of
the kernel language, an input generator at a size parameter, and (through the oracle) its
reference output."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from reconverge.golden.compiler.lang import Kernel
from reconverge.golden.compiler.launch import Launch

ArgValue = int | np.ndarray


@dataclass(frozen=True)
class Case:
    """One launch: the kernel's arguments by parameter name (ints, and int32 arrays for
    ``Array`` parameters), the grid and the block size."""

    args: Mapping[str, ArgValue]
    grid: int
    block: int

    def __post_init__(self) -> None:
        if self.grid < 1 or self.block < 1:
            raise ValueError(f"the kernel has no thread at this size (grid {self.grid}, "
                             f"block {self.block})")  # fmt: skip


@dataclass(frozen=True)
class SuiteKernel:
    """A workload of the suite. ``make(size, seed)`` builds a launch; ``size`` scales the
    work, ``default_size`` is small enough for RTL co-simulation, ``eval_size`` fills the
    evaluation SM (docs/evaluation.md: full warps of 32, about 1536 threads or more where the
    kernel scales). ``shape`` says which seed figure or control-flow shape it reproduces;
    ``provenance`` (keyword only) which paper benchmark it models (seed and benchmark name),
    the shape it keeps and what differs, or that it models none (docs/compiler.md)."""

    name: str
    kernel: Kernel
    make: Callable[[int, int], Case]
    default_size: int
    shape: str
    eval_size: int | None = None  # None: the default size
    provenance: str = field(kw_only=True)

    def __post_init__(self) -> None:
        if not self.provenance.strip():
            raise ValueError(f"suite kernel {self.name}: say which benchmark it models")

    def case(self, size: int | None = None, seed: int = 0) -> Case:
        return self.make(self.default_size if size is None else size, seed)

    def launch(
        self,
        allocator: str = "linear",
        regs: int = 16,
        size: int | None = None,
        seed: int = 0,
        *,
        hints: bool = True,
    ) -> tuple[Launch, Case]:
        """The kernel compiled with ``allocator`` and ``regs`` registers (``hints``: with
        reconvergence hints), bound to the inputs of ``case(size, seed)``: run ``launch.image``
        with ``launch.config(case.grid, case.block, geometry=...)`` on any runner."""
        from reconverge.golden.compiler import compile_kernel

        case = self.case(size, seed)
        program = compile_kernel(self.kernel, allocator, regs, hints=hints)
        return program.bind(**case.args), case

    def reference(self, size: int | None = None, seed: int = 0) -> dict[str, np.ndarray]:
        """The arrays after the launch, as the oracle computes them."""
        from reconverge.golden.compiler import oracle

        case = self.case(size, seed)
        return oracle.run(self.kernel, case.args, grid=case.grid, block=case.block)


#: Threads per block at most in the suite's cases (CUDA's limit on seed 001's machines).
MAX_BLOCK = 512


def split_threads(size: int) -> tuple[int, int]:
    """(grid, block) for about ``2 * size`` threads: two blocks of ``size`` up to 256 threads,
    more blocks of 256 beyond (``grid * block`` threads in all)."""
    block = min(size, 256)
    return 2 * size // block, block


def int32_array(values: object) -> np.ndarray:
    return np.asarray(values, dtype=np.int64).astype(np.int32)
