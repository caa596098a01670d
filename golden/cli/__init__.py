"""The ``reconverge`` command line: the parser, the sub-command table and the error
reporting. A sub-command's module (:data:`reconverge.golden.cli.command.INDEX`) is imported only
when that command runs, so ``reconverge --help`` and ``reconverge exec`` start without the
compiler, the SM, the HDL or the simulators (issue 9). Each command is also a Python function
in its module (``reconverge.golden.cli.programs.exec_elf``, ...).

Exit status: 0 on success, 1 when a program ran but a thread faulted or exited non-zero,
2 for a user error (bad file, bad assembly, bad option, a launch too large for the machine),
130 when interrupted (Ctrl-C). A user error is one line on standard error, ``reconverge
COMMAND: cause`` (with ``--json``, a JSON object on standard output); never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import warnings
from collections.abc import Sequence
from typing import NoReturn

from reconverge.golden.cli.command import EXIT_FAILED, EXIT_OK, EXIT_USAGE, INDEX, Command
from reconverge.golden.errors import UserError
from reconverge.golden.functional import DEFAULT_STEP_LIMIT

__all__ = [
    "EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE", "UsageError", "add_launch_options",
    "build_parser", "command", "main", "parse_folder", "parse_int", "parse_positive",
    "parse_word",
]  # fmt: skip


DESCRIPTION = (
    "reconverge: a SIMT streaming multiprocessor as a golden model with a divergence-aware "
    "compiler, as Amaranth HDL, and as co-simulation of the two"
)


class UsageError(UserError):
    """A bad option or file the CLI reports in one line (exit status 2)."""


EXIT_INTERRUPTED = 130  # the shell's status for a process ended by SIGINT
#: The largest grid or block a command accepts (the SIMT CSRs are 32-bit; the memory a launch
#: needs is checked separately).
MAX_LAUNCH = (1 << 31) - 1


# ----------------------------------------------------------------------------------------------
# argparse front end


def parse_int(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None


def parse_positive(text: str) -> int:
    """An integer from 1 to :data:`MAX_LAUNCH`."""
    value = parse_int(text)
    if not 1 <= value <= MAX_LAUNCH:
        raise argparse.ArgumentTypeError(f"must be from 1 to {MAX_LAUNCH}, not {value}")
    return value


def parse_word(text: str) -> int:
    """A 32-bit register value, signed or unsigned: -2**31 .. 2**32 - 1."""
    value = parse_int(text)
    if not -(1 << 31) <= value < 1 << 32:
        raise argparse.ArgumentTypeError(
            f"{value} does not fit a 32-bit register (-2147483648 .. 4294967295)"
        )
    return value


def parse_folder(text: str) -> str:
    """A folder to write into: an existing folder or a name to create, not a file."""
    if os.path.exists(text) and not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text} is a file, not a folder")
    return text


def add_launch_options(
    p: argparse.ArgumentParser, grid: int | None, block: int | None, warp: int | None
) -> None:
    """Launch options; a default of None means "the workload's own" (a kernel's case) or, for
    the warp size, the SM configuration's (:mod:`reconverge.golden.cli.options`)."""
    p.add_argument("--grid", type=parse_positive, default=grid, help="blocks in the grid")
    p.add_argument("--block", type=parse_positive, default=block, help="threads per block")
    p.add_argument("--warp-size", type=parse_positive, default=warp, help="threads per warp (W)")
    p.add_argument(
        "--arg", type=parse_word, action="append", default=[],
        help="kernel argument (a0, a1, ...): a 32-bit value",
    )  # fmt: skip
    p.add_argument(
        "--step-limit", type=parse_positive, default=DEFAULT_STEP_LIMIT,
        help=f"warp instructions before the run stops (default {DEFAULT_STEP_LIMIT:,})",
    )  # fmt: skip
    p.add_argument("--json", action="store_true", help="machine-readable output")


def command(name: str) -> Command:
    """The sub-command ``name``, from its module (:data:`INDEX`)."""
    module = importlib.import_module(INDEX[name][1])
    return next(c for c in module.COMMANDS if c.name == name)


class _Parser(argparse.ArgumentParser):
    """argparse whose errors are :class:`UsageError`s, reported in one line by :func:`main`."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


class _Version(argparse.Action):
    """``--version``: the installed package's version, looked up only when asked for
    (``importlib.metadata`` costs start-up time)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> NoReturn:
        from importlib import metadata

        try:
            text = f"reconverge {metadata.version('reconverge')}"
        except metadata.PackageNotFoundError:
            text = "reconverge (not installed)"
        print(text)
        parser.exit()


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """Every sub-command with its help; the options of all of them, or with ``only`` of that
    one alone (the others' modules are not imported)."""
    parser = _Parser(prog="reconverge", description=DESCRIPTION)
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (help_text, _) in INDEX.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if only is None or name == only:
            selected = command(name)
            p.set_defaults(fn=selected.run)
            selected.configure(p)
    return parser


def report_error(command: str, message: str, kind: str, as_json: bool) -> None:
    """One line on standard error, or with ``--json`` one JSON object on standard output."""
    if as_json:
        print(json.dumps({"command": command, "error": kind, "message": message}))
    else:
        print(f"reconverge{' ' + command if command else ''}: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in args
    name = next((a for a in args if not a.startswith("-")), "")
    try:
        ns = build_parser(only=name).parse_args(args)
        return ns.fn(ns)
    except UserError as exc:
        report_error(name, str(exc), "usage", as_json)
        return EXIT_USAGE
    except KeyboardInterrupt:
        # a design interrupted while it elaborates leaves Amaranth objects that warn, one
        # each, when collected: the interrupt is the whole story
        warnings.filterwarnings("ignore", message=".*created but never used")
        report_error(name, "interrupted", "interrupted", as_json)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader went away (``reconverge ... | head``): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except MemoryError:
        report_error(name, "out of memory (a smaller launch or size fits)", "memory", as_json)
        return EXIT_USAGE
