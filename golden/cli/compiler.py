"""The compiler's sub-commands of the ``reconverge`` CLI: ``compile`` and ``analyze``.

``KERNEL`` is a Python file defining kernels (``path.py``, or ``path.py:name`` when it defines
several; ``--kernel name`` works too) or the name of a kernel of the suite or of the seed
benchmarks (``avgSquare``, ``mand``: :func:`reconverge.kernels.benchmarks`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from reconverge.golden.cli.command import Command
from reconverge.golden.compiler import analysis, lang, regalloc
from reconverge.golden.compiler.codegen import compile_kernel
from reconverge.golden.compiler.errors import CompileError
from reconverge.golden.compiler.launch import Program
from reconverge.golden.elf import write_elf
from reconverge.golden.output import check_output, write_output

EXIT_OK = 0


def resolve_kernel(spec: str, name: str | None = None) -> lang.Kernel:
    """The kernel ``spec`` names (see the module docstring)."""
    path, _, inner = spec.partition(":") if spec.count(":") == 1 else (spec, "", "")
    wanted = inner or name
    if path.endswith(".py") or Path(path).is_file():
        kernels = lang.load_kernels(path)
        where = path
    else:
        from reconverge.kernels import benchmarks

        kernels = {n: s.kernel for n, s in benchmarks().items()}
        if wanted is None:
            wanted = path
        where = "the kernel suite"
    if not kernels:
        raise CompileError(f"{where}: no @kernel function")
    if wanted is None:
        if len(kernels) > 1:
            raise CompileError(
                f"{where} defines {len(kernels)} kernels ({', '.join(kernels)}): "
                f"name one as {path}:NAME or with --kernel NAME"
            )
        return next(iter(kernels.values()))
    if wanted not in kernels:
        raise CompileError(f"{where} has no kernel {wanted!r} (it has {', '.join(kernels)})")
    return kernels[wanted]


def spill_rows(program: Program) -> list[dict[str, Any]]:
    rows = []
    for fname, alloc in program.allocations.items():
        for vreg, place in alloc.spilled.items():
            rows.append(
                {
                    "function": fname,
                    "value": vreg.name,
                    "variables": sorted({v.var for v in vreg.values if v.var}),
                    "state": str(vreg.state) if vreg.state is not None else None,
                    "placement": place.kind,
                    "memory": place.memory,
                    "row": regalloc.ROWS.get(place.kind),
                    "slot": place.slot,
                }
            )
    return rows


def compile_json(program: Program, source: str, output: str | None) -> dict[str, Any]:
    kinds: dict[str, int] = {}
    for kind in program.spill_code.values():
        kinds[kind] = kinds.get(kind, 0) + 1
    return {
        "kernel": program.kernel,
        "file": source,
        "output": output,
        "allocator": program.allocator,
        "regs": program.regs,
        "entry": program.image.entry,
        "bytes": sum(s.memsz for s in program.image.segments),
        "instructions": len(program.asm.splitlines()),
        "params": [{"name": p.name, "kind": p.kind} for p in program.params],
        "frames": dict(program.frames),
        "shared_user_bytes": program.shared_user_bytes,
        "shared_spill_base": program.shared_spill_base,
        "shared_spill_bytes_per_warp": program.shared_spill_per_warp,
        "stack_bytes": program.stack_bytes,
        "spills": spill_rows(program),
        "spill_instructions": kinds,
        "branches": [
            {
                "pc": b.pc,
                "function": b.function,
                "uniform": b.uniform,
                "hint": b.hinted,
                "reconverge": b.reconverge,
            }
            for b in program.branches
        ],
    }


def _kernel_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("kernel", metavar="KERNEL", help="FILE.py[:NAME] or a suite kernel's name")
    p.add_argument("--kernel", dest="kernel_name", metavar="NAME", help="the kernel in FILE.py")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _configure_compile(p: argparse.ArgumentParser) -> None:
    _kernel_args(p)
    p.add_argument("-o", "--output", metavar="FILE.elf", help="ELF file to write")
    p.add_argument(
        "--allocator", choices=regalloc.ALLOCATORS, default="linear", help="register allocator"
    )
    p.add_argument(
        "--regs", type=int, default=16, metavar="N",
        help=f"registers for values ({regalloc.MIN_REGS}-{regalloc.MAX_REGS})",
    )  # fmt: skip
    p.add_argument("--emit", choices=("ir", "gsa", "asm"), help="print this stage")


def _cmd_compile(ns: argparse.Namespace) -> int:
    if ns.output is None and ns.emit is None and not ns.json:
        raise CompileError("nothing to do: give -o FILE.elf, --emit ir|gsa|asm or --json")
    if ns.output is not None:
        check_output(ns.output)
    k = resolve_kernel(ns.kernel, ns.kernel_name)
    program = compile_kernel(k, ns.allocator, ns.regs)
    if ns.output is not None:
        write_output(ns.output, write_elf(program.image))
    if ns.json:
        data = compile_json(program, ns.kernel, ns.output)
        if ns.emit:
            data["emit"] = {"ir": program.ir_text, "gsa": program.gsa_text, "asm": program.asm}[
                ns.emit
            ]
        print(json.dumps(data, indent=1))
        return EXIT_OK
    if ns.emit:
        print({"ir": program.ir_text, "gsa": program.gsa_text, "asm": program.asm}[ns.emit])
    if ns.output is not None:
        spills = len(spill_rows(program))
        hints = sum(b.hinted for b in program.branches)
        print(
            f"{ns.output}: {program.kernel}, {program.allocator} allocator, {program.regs} "
            f"registers, {spills} spilled, {hints} of {len(program.branches)} branches hinted"
        )
    return EXIT_OK


def _configure_analyze(p: argparse.ArgumentParser) -> None:
    _kernel_args(p)
    p.add_argument(
        "--degree", type=int, choices=analysis.DEGREES, default=2,
        help="polynomial degree of the affine analysis (Sec 3.5)",
    )  # fmt: skip


def _cmd_analyze(ns: argparse.Namespace) -> int:
    k = resolve_kernel(ns.kernel, ns.kernel_name)
    ma = analysis.analyse_kernel(k)
    if ns.json:
        print(json.dumps(analysis.report_json(ma, ns.degree), indent=1, ensure_ascii=False))
    else:
        print(analysis.report_text(ma, ns.degree))
    return EXIT_OK


COMMANDS = (
    Command("compile", _configure_compile, _cmd_compile),
    Command("analyze", _configure_analyze, _cmd_analyze),
)
