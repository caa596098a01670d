"""What ``reconverge run`` and ``reconverge compare`` run: a program (an ELF or assembly file,
launched with the command line's grid, block and arguments), or a kernel of the kernel language
compiled on the fly and bound to the inputs of its suite case (a name of
:func:`~reconverge.kernels.benchmarks`, the suite or a seed benchmark, or a ``FILE.py`` that
defines ``SPEC = SuiteKernel(...)``), whose outputs are then checked against the oracle. A
kernel is compiled twice, with reconvergence hints for the policies that use them and without
for the others (DESIGN.md: the hints are emitted for sps, mp, dps, ppc explicit and left out for
stack-less and ppc implicit), so that the dynamic instruction counts compare as seed 003 does."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from reconverge.golden.compiler.errors import CompileError
from reconverge.golden.compiler.launch import Launch
from reconverge.golden.errors import UserError
from reconverge.golden.functional import DEFAULT_BLOCK, DEFAULT_GRID, LaunchConfig, RunResult
from reconverge.golden.geometry import Geometry
from reconverge.golden.image import Image
from reconverge.golden.loader import load_program
from reconverge.golden.memmap import MemoryMap
from reconverge.golden.params import SMParams
from reconverge.kernels import SuiteKernel, benchmarks

PROGRAM_SUFFIXES = (".elf", ".s", ".S", ".asm")


@dataclass(frozen=True)
class Workload:
    """A runnable program with its launch; for a compiled kernel, its launches with and
    without hints and the oracle's reference outputs."""

    source: str
    image: Image
    grid: int
    block: int
    args: tuple[int, ...]
    launches: Mapping[bool, Launch] | None = None  # by hints
    reference: Mapping[str, np.ndarray] | None = None

    def image_for(self, hints: bool) -> Image:
        return self.image if self.launches is None else self.launches[hints].image

    def config(
        self,
        geometry: Geometry,
        step_limit: int,
        hints: bool,
        dynamic_warps: bool = False,
        memmap: MemoryMap | None = None,
    ) -> LaunchConfig:
        """The launch of the code with or without hints (its arrays are placed after it) in
        the memory windows ``memmap`` (None: the default's). ``dynamic_warps``: under dynamic
        warp formation, which a kernel whose register allocator keeps spilled uniform values in
        one shared slot per warp cannot run: the threads of a warp then reach the slot at
        different times (different iterations)."""
        if dynamic_warps and self.launches is not None:
            program = self.launches[hints].program
            if program.shared_spill_per_warp:
                raise UserError(
                    f"{self.source}: the {program.allocator} allocator keeps spilled uniform "
                    "values in one shared-memory slot per warp, which dynamic warp formation "
                    "breaks (the threads of a warp run apart); use --allocator linear or remat, "
                    "or more --regs"
                )
        try:
            if self.launches is not None:
                return self.launches[hints].config(
                    self.grid, self.block, geometry=geometry, memmap=memmap, step_limit=step_limit
                )
            return LaunchConfig(self.grid, self.block, geometry, args=self.args,
                                memmap=memmap or MemoryMap(), step_limit=step_limit)  # fmt: skip
        except ValueError as exc:
            raise UserError(str(exc)) from None

    def sm_launch(self, params: SMParams, step_limit: int) -> LaunchConfig:
        """The launch on an SM of ``params`` (its code with or without hints as the policy
        needs): a kernel's shared and local memory must fit the SM's windows."""
        return self.config(params.geometry, step_limit, params.config.explicit,
                           memmap=params.memmap)  # fmt: skip

    def outputs(self, result: RunResult, hints: bool) -> dict[str, np.ndarray] | None:
        """The kernel's output arrays after a run of the code with or without hints (None for
        a program)."""
        if self.launches is None:
            return None
        return self.launches[hints].outputs(result)

    def mismatches(self, result: RunResult, hints: bool) -> list[str]:
        """The output arrays that differ from the oracle's (empty for programs)."""
        outputs = self.outputs(result, hints)
        if outputs is None or self.reference is None or result.fault is not None:
            return []
        return [n for n, want in self.reference.items() if not np.array_equal(outputs[n], want)]


def _file_suite_kernel(path: Path) -> SuiteKernel:
    """The ``SPEC`` suite kernel a Python file defines (a kernel needs inputs to run)."""
    name = f"reconverge_workload_{path.stem}_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UserError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except CompileError:
        raise
    except Exception as exc:
        raise UserError(f"{path}: importing it raised {type(exc).__name__}: {exc}") from None
    found = getattr(module, "SPEC", None)
    if not isinstance(found, SuiteKernel):
        raise UserError(
            f"{path}: defines no SPEC = SuiteKernel(...), so its kernel has no inputs to run "
            "with; compile it with `reconverge compile` and run the ELF with --arg, or add a "
            "SuiteKernel (see kernels/*.py)"
        )
    return found


def is_program(spec: str) -> bool:
    """Whether ``spec`` names a program file (ELF or assembly), not a suite kernel."""
    path = Path(spec)
    return path.suffix in PROGRAM_SUFFIXES or (path.is_file() and path.suffix != ".py")


#: A kernel's allocator, registers and input seed when the command line gives none.
DEFAULT_ALLOCATOR, DEFAULT_REGS, DEFAULT_SEED = "linear", 16, 0


def load_workload(
    spec: str,
    *,
    grid: int | None,
    block: int | None,
    args: tuple[int, ...],
    allocator: str | None,
    regs: int | None,
    size: int | None,
    seed: int | None,
) -> Workload:
    """A program file, or a suite kernel (by name or ``FILE.py``) compiled and bound. The
    kernel options (``allocator``, ``regs``, ``size``, ``seed``; None: not given, the
    defaults) are refused with a program file."""
    path = Path(spec)
    if is_program(spec):
        options = {"allocator": allocator, "regs": regs, "size": size, "seed": seed}
        given = [f"--{name}" for name, value in options.items() if value is not None]
        if given:
            raise UserError(
                f"{spec}: {', '.join(given)} {'is' if len(given) == 1 else 'are'} for suite "
                "kernels; a program file runs as it is (with --grid, --block, --arg)"
            )
        image = load_program(path)
        return Workload(image.source, image, grid or DEFAULT_GRID, block or DEFAULT_BLOCK, args)
    if path.suffix == ".py":
        if not path.is_file():
            raise UserError(f"{path}: no such file")
        kernel = _file_suite_kernel(path)
    else:
        kernels = benchmarks()
        if spec not in kernels:
            raise UserError(
                f"{spec}: not a program file (.elf, .S) nor a suite kernel ({', '.join(kernels)})"
            )
        kernel = kernels[spec]
    if grid is not None or block is not None or args:
        raise UserError(
            f"{spec}: a kernel runs with its suite case's grid, block and inputs; choose them "
            "with --size and --seed"
        )
    allocator = DEFAULT_ALLOCATOR if allocator is None else allocator
    regs = DEFAULT_REGS if regs is None else regs
    seed = DEFAULT_SEED if seed is None else seed
    launches = {}
    try:
        for hints in (True, False):
            launches[hints], case = kernel.launch(allocator, regs, size, seed, hints=hints)
    except ValueError as exc:  # the input generator refuses the size (at its default: a bug)
        if size is None:
            raise
        raise UserError(f"--size {size}: {exc}") from None
    return Workload(
        f"{kernel.name} (size {kernel.default_size if size is None else size}, seed {seed})",
        launches[True].image,
        case.grid,
        case.block,
        launches[True].args,
        launches,
        kernel.reference(size, seed),
    )
