"""The ``reconverge`` command line. Every sub-command is also a Python function of the same name
in this module, so scripts can call ``reconverge.golden.cli.exec_elf(...)`` directly.

Exit status: 0 on success, 1 when a program ran but a thread faulted or exited non-zero,
2 for a user error (bad file, bad assembly, bad option).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reconverge.golden.asm import assemble
from reconverge.golden.command import EXIT_FAILED, EXIT_OK, EXIT_USAGE, Command
from reconverge.golden.disasm import disassemble_image
from reconverge.golden.elf import read_elf, write_elf
from reconverge.golden.errors import UserError
from reconverge.golden.functional import LaunchConfig, RunResult, run
from reconverge.golden.geometry import Geometry
from reconverge.golden.image import Image


class UsageError(UserError):
    """A bad option or file the CLI reports in one line (exit status 2)."""


# ----------------------------------------------------------------------------------------------
# Loading programs


def load_program(path: str | Path) -> Image:
    """An ELF file, or an assembly source (``.s``/``.S``) assembled on the fly."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"{path}: {exc.strerror or exc}") from None
    if path.suffix in (".s", ".S", ".asm"):
        return assemble(data.decode(errors="replace"), str(path))
    return read_elf(data, str(path))


# ----------------------------------------------------------------------------------------------
# Result reporting


def result_json(result: RunResult, config: LaunchConfig, source: str) -> dict[str, Any]:
    """The stable JSON form of a functional run (keys documented in README.md)."""
    threads = [
        {
            "block": b,
            "thread": t,
            "exit_code": int(result.exit_codes[b, t]) if result.exited[b, t] else None,
            "instructions": int(result.thread_instructions[b, t]),
        }
        for b in range(config.grid)
        for t in range(config.block)
    ]
    fault = result.fault
    return {
        "file": source,
        "grid": config.grid,
        "block": config.block,
        "warp_size": config.geometry.warp_size,
        "ok": run_ok(result),
        "threads": threads,
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


def run_ok(result: RunResult) -> bool:
    return result.fault is None and bool(result.exited.all()) and not result.exit_codes.any()


def simd_efficiency(result: RunResult, geometry: Geometry) -> float:
    """Thread instructions / (warp instructions x W): the active fraction of issued warps."""
    issued = int(result.warp_instructions) * geometry.warp_size
    return float(result.thread_instructions.sum()) / issued if issued else 0.0


def _runs(
    values: Sequence[tuple[int | None, int]],
) -> list[tuple[int, int, tuple[int | None, int]]]:
    """Group consecutive equal values: (first index, last index, value)."""
    groups: list[tuple[int, int, tuple[int | None, int]]] = []
    for i, v in enumerate(values):
        if groups and groups[-1][2] == v:
            groups[-1] = (groups[-1][0], i, v)
        else:
            groups.append((i, i, v))
    return groups


def format_result(result: RunResult, config: LaunchConfig, source: str) -> str:
    """Human-readable report: exit code and instruction count per thread (runs of equal
    threads folded), totals and the fault, if any."""
    lines = [
        f"{source}: grid {config.grid} x block {config.block}, "
        f"warp size {config.geometry.warp_size}"
    ]
    for b in range(config.grid):
        per_thread = [
            (
                int(result.exit_codes[b, t]) if result.exited[b, t] else None,
                int(result.thread_instructions[b, t]),
            )
            for t in range(config.block)
        ]
        for first, last, (code, count) in _runs(per_thread):
            who = f"thread {first}" if first == last else f"threads {first}-{last}"
            status = "did not exit" if code is None else f"exit {code}"
            lines.append(f"  block {b} {who}: {status}, {count} instructions")
    lines.append(
        f"warp instructions {result.warp_instructions}, thread instructions "
        f"{int(result.thread_instructions.sum())}, SIMD efficiency "
        f"{simd_efficiency(result, config.geometry):.3f}"
    )
    if result.fault is not None:
        lines.append(f"fault: {result.fault}")
    lines.append("ok" if run_ok(result) else "FAILED")
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------
# Sub-commands (Python API)


def exec_elf(
    path: str | Path,
    *,
    grid: int = 1,
    block: int = 1,
    warp_size: int = 32,
    args: Sequence[int] = (),
    step_limit: int = 10_000_000,
) -> tuple[RunResult, LaunchConfig, Image]:
    """Run a program on the golden functional model."""
    image = load_program(path)
    config = _launch_config(grid, block, warp_size, args, step_limit)
    return run(image, config), config, image


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
    """Assemble ``source`` into the ELF file ``output`` (written only when assembly succeeds)."""
    image = load_program(source)
    Path(output).write_bytes(write_elf(image))
    return image


def disasm_file(path: str | Path) -> list[str]:
    return disassemble_image(load_program(path))


# ----------------------------------------------------------------------------------------------
# argparse front end


def parse_int(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None


def add_launch_options(
    p: argparse.ArgumentParser, grid: int | None, block: int | None, warp: int
) -> None:
    """Launch options; a default of None means "the workload's own" (a kernel's case)."""
    p.add_argument("--grid", type=parse_int, default=grid, help="blocks in the grid")
    p.add_argument("--block", type=parse_int, default=block, help="threads per block")
    p.add_argument("--warp-size", type=parse_int, default=warp, help="threads per warp (W)")
    p.add_argument(
        "--arg", type=parse_int, action="append", default=[], help="kernel argument (a0, a1, ...)"
    )
    p.add_argument(
        "--step-limit", type=parse_int, default=10_000_000, help="warp steps before giving up"
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _cmd_exec(ns: argparse.Namespace) -> int:
    result, config, image = exec_elf(
        ns.file,
        grid=ns.grid,
        block=ns.block,
        warp_size=ns.warp_size,
        args=ns.arg,
        step_limit=ns.step_limit,
    )
    return _report(result, config, image.source, ns.json)


def _report(result: RunResult, config: LaunchConfig, source: str, as_json: bool) -> int:
    if as_json:
        print(json.dumps(result_json(result, config, source), indent=1))
    else:
        print(format_result(result, config, source))
    return EXIT_OK if run_ok(result) else EXIT_FAILED


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
    add_launch_options(p, grid=1, block=1, warp=32)


def _configure_asm(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="assembly source")
    p.add_argument("-o", "--output", required=True, help="ELF file to write")
    p.add_argument("--json", action="store_true", help="machine-readable output")


BASE_COMMANDS = (
    Command("exec", "run an ELF (or assembly) program on golden", _configure_exec, _cmd_exec),
    Command("asm", "assemble RISC-V assembly into an ELF", _configure_asm, _cmd_asm),
    Command("disasm", "disassemble an ELF (or assembly) program", _file_and_json, _cmd_disasm),
)


def commands() -> list[Command]:
    """Every sub-command: the base ones here and those of the feature modules."""
    from reconverge.golden.compiler.commands import COMMANDS as COMPILER  # compile, analyze
    from reconverge.golden.sm.commands import COMMANDS as SM_COMMANDS  # run, compare
    from reconverge.hdl.tools.commands import HDL_COMMANDS  # verilog, synth
    from reconverge.testbench.commands import COMMANDS as COSIM  # cosim

    return [*BASE_COMMANDS, *COMPILER, *SM_COMMANDS, *HDL_COMMANDS, *COSIM]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="reconverge", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for command in commands():
        p = sub.add_parser(command.name, help=command.help, description=command.help)
        p.set_defaults(fn=command.run)
        command.configure(p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    ns = build_parser().parse_args(argv)
    try:
        return ns.fn(ns)
    except UserError as exc:
        print(f"reconverge {ns.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
