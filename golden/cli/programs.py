"""The ``exec``, ``asm`` and ``disasm`` commands: programs on the functional model. Each is
also a Python function (``exec_elf``, ``asm_file``, ``disasm_file``), and the reporting helpers
here serve the other commands that run programs."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from reconverge.golden.cli import UsageError, add_launch_options
from reconverge.golden.cli.command import EXIT_FAILED, EXIT_OK, Command
from reconverge.golden.disasm import disassemble_image
from reconverge.golden.elf import write_elf
from reconverge.golden.faults import StepLimitFault
from reconverge.golden.functional import (
    DEFAULT_BLOCK,
    DEFAULT_GRID,
    DEFAULT_STEP_LIMIT,
    ENGINES,
    LaunchConfig,
    RunResult,
    memory_needed,
    run,
)
from reconverge.golden.geometry import Geometry
from reconverge.golden.image import Image
from reconverge.golden.loader import load_program
from reconverge.golden.output import check_output, write_output
from reconverge.golden.progress import check_memory, progress_for

# ----------------------------------------------------------------------------------------------
# Result reporting


def result_json(result: RunResult, config: LaunchConfig, source: str) -> dict[str, Any]:
    """The stable JSON form of a functional run (keys documented in README.md)."""
    listed = min(config.grid * config.block, MAX_JSON_THREADS)
    threads = [
        {
            "block": b,
            "thread": t,
            "exit_code": int(result.exit_codes[b, t]) if result.exited[b, t] else None,
            "instructions": int(result.thread_instructions[b, t]),
        }
        for b, t in (divmod(i, config.block) for i in range(listed))
    ]
    fault = result.fault
    return {
        "file": source,
        "grid": config.grid,
        "block": config.block,
        "warp_size": config.geometry.warp_size,
        "ok": result.ok,
        "threads": threads,
        "threads_total": config.grid * config.block,
        "thread_instructions": int(result.thread_instructions.sum()),
        "warp_instructions": int(result.warp_instructions),
        "simd_efficiency": simd_efficiency(result, config.geometry),
        "fault": None
        if fault is None
        else {
            "kind": fault.kind,
            "message": str(fault),
            "block": fault.block,
            "thread": fault.thread,
            "pc": fault.pc,
        },
    }


def simd_efficiency(result: RunResult, geometry: Geometry) -> float:
    """Thread instructions / (warp instructions x W): the active fraction of issued warps."""
    issued = int(result.warp_instructions) * geometry.warp_size
    return float(result.thread_instructions.sum()) / issued if issued else 0.0


#: Lines of per-thread results a report shows at most, and threads ``--json`` lists at most.
MAX_REPORT_RUNS = 40
MAX_JSON_THREADS = 1 << 16


def thread_runs(result: RunResult) -> tuple[np.ndarray, np.ndarray]:
    """Runs of consecutive threads of one block with the same exit code (or none) and
    instruction count, in (block, thread) order: the flat index of each run's first thread, and
    of the thread after its last."""
    exited = result.exited.ravel()
    codes = np.where(exited, result.exit_codes.ravel().astype(np.int64), 1 << 40)
    counts = result.thread_instructions.ravel()
    block = result.exit_codes.shape[1]
    change = np.ones(len(codes), bool)
    change[1:] = (codes[1:] != codes[:-1]) | (counts[1:] != counts[:-1])
    change[::block] = True
    starts = np.flatnonzero(change)
    return starts, np.append(starts[1:], len(codes))


def format_result(result: RunResult, config: LaunchConfig, source: str) -> str:
    """Human-readable report: exit code and instruction count per thread (runs of equal
    threads folded), totals and the fault, if any."""
    lines = [
        f"{source}: grid {config.grid} x block {config.block}, "
        f"warp size {config.geometry.warp_size}"
    ]
    starts, ends = thread_runs(result)
    for start, end in zip(starts[:MAX_REPORT_RUNS].tolist(), ends.tolist(), strict=False):
        b, first = divmod(start, config.block)
        last = end - 1 - b * config.block
        who = f"thread {first}" if first == last else f"threads {first}-{last}"
        code = int(result.exit_codes[b, first]) if result.exited[b, first] else None
        status = "did not exit" if code is None else f"exit {code}"
        count = int(result.thread_instructions[b, first])
        lines.append(f"  block {b} {who}: {status}, {count} instructions")
    if len(starts) > MAX_REPORT_RUNS:
        lines.append(f"  ... and {len(starts) - MAX_REPORT_RUNS} more (--json lists threads)")
    lines.append(
        f"warp instructions {result.warp_instructions}, thread instructions "
        f"{int(result.thread_instructions.sum())}, SIMD efficiency "
        f"{simd_efficiency(result, config.geometry):.3f}"
    )
    if result.fault is not None:
        lines.append(f"fault: {result.fault}")
        if isinstance(result.fault, StepLimitFault) and "watchdog" not in str(result.fault):
            lines.append(
                f"(the run stopped after its budget of {config.step_limit:,} warp instructions: "
                "give a larger --step-limit to let it run longer)"
            )
    lines.append("ok" if result.ok else "FAILED")
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------
# Sub-commands (Python API)


def exec_elf(
    path: str | Path,
    *,
    grid: int = DEFAULT_GRID,
    block: int = DEFAULT_BLOCK,
    warp_size: int = 32,
    args: Sequence[int] = (),
    step_limit: int = DEFAULT_STEP_LIMIT,
    quiet: bool = True,
    engine: str = "auto",
) -> tuple[RunResult, LaunchConfig, Image]:
    """Run a program on the golden functional model (with a progress line on a terminal
    unless ``quiet``; ``engine`` as :func:`~reconverge.golden.functional.run` takes it); a
    launch that needs more memory than the machine has is refused."""
    config = _launch_config(grid, block, warp_size, args, step_limit)
    check_memory(memory_needed(config), f"a launch of {grid} x {block} threads")
    image = load_program(path)
    progress = progress_for(f"{image.source}", grid, step_limit, quiet)
    try:
        return run(image, config, progress=progress, engine=engine), config, image
    finally:
        if progress is not None:
            progress.close()


def _launch_config(
    grid: int, block: int, warp_size: int, args: Sequence[int], step_limit: int
) -> LaunchConfig:
    if grid < 1 or block < 1:
        raise UsageError(f"grid and block must be positive (got grid {grid}, block {block})")
    try:
        geometry = Geometry(warp_size=warp_size, simd_width=min(8, warp_size))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if len(args) > 8:
        raise UsageError(f"at most 8 kernel arguments (a0-a7), got {len(args)}")
    return LaunchConfig(
        grid=grid, block=block, geometry=geometry, args=tuple(args), step_limit=step_limit
    )


def asm_file(source: str | Path, output: str | Path) -> Image:
    """Assemble ``source`` into the ELF file ``output`` (written only when assembly succeeds,
    and all at once)."""
    check_output(output)
    image = load_program(source)
    write_output(output, write_elf(image))
    return image


def disasm_file(path: str | Path) -> list[str]:
    return disassemble_image(load_program(path))


def _cmd_exec(ns: argparse.Namespace) -> int:
    result, config, image = exec_elf(
        ns.file,
        grid=ns.grid,
        block=ns.block,
        warp_size=ns.warp_size,
        args=ns.arg,
        step_limit=ns.step_limit,
        quiet=ns.json,
        engine=ns.engine,
    )
    return _report(result, config, image.source, ns.json)


def _report(result: RunResult, config: LaunchConfig, source: str, as_json: bool) -> int:
    if as_json:
        print(json.dumps(result_json(result, config, source), indent=1))
    else:
        print(format_result(result, config, source))
    return EXIT_OK if result.ok else EXIT_FAILED


def _cmd_asm(ns: argparse.Namespace) -> int:
    image = asm_file(ns.file, ns.output)
    size = sum(s.memsz for s in image.segments)
    if ns.json:
        print(json.dumps({"file": ns.output, "entry": image.entry, "bytes": size}))
    else:
        print(f"{ns.output}: entry {image.entry:#010x}, {size} bytes")
    return EXIT_OK


def _cmd_disasm(ns: argparse.Namespace) -> int:
    lines = disasm_file(ns.file)
    if ns.json:
        print(json.dumps({"file": str(ns.file), "lines": lines}, indent=1))
    else:
        print("\n".join(lines))
    return EXIT_OK


def _file_and_json(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="ELF file (or .S assembly)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _configure_exec(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="ELF file (or .S assembly)")
    add_launch_options(p, grid=DEFAULT_GRID, block=DEFAULT_BLOCK, warp=32)
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default="auto",
        help="who executes: the compiled inner loop (golden/native), the NumPy reference "
        "semantics, or auto: compiled when a C compiler is there (default; same results)",
    )


def _configure_asm(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="assembly source")
    p.add_argument("-o", "--output", required=True, help="ELF file to write")
    p.add_argument("--json", action="store_true", help="machine-readable output")


COMMANDS = (
    Command("exec", _configure_exec, _cmd_exec),
    Command("asm", _configure_asm, _cmd_asm),
    Command("disasm", _file_and_json, _cmd_disasm),
)
