"""What every ``reconverge`` sub-command shares: the :class:`Command` record and the exit
statuses. A neutral module, so that feature modules (the compiler's, the SM's, the HDL's
``verilog`` / ``synth``) define their commands without importing the CLI that lists them:
``reconverge.golden.cli`` imports them, never the other way round."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

#: Exit statuses: success; a program ran but a thread faulted or exited non-zero; a user error.
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


#: Every sub-command, in the order ``reconverge --help`` lists them: its one line of help and
#: the module whose ``COMMANDS`` define it (imported only when the command runs).
INDEX: dict[str, tuple[str, str]] = {
    "exec": ("run an ELF (or assembly) program on golden", "reconverge.golden.cli.programs"),
    "asm": ("assemble RISC-V assembly into an ELF", "reconverge.golden.cli.programs"),
    "disasm": ("disassemble an ELF (or assembly) program", "reconverge.golden.cli.programs"),
    "compile": (
        "compile a kernel to an ELF (or print its IR, GSA or assembly)",
        "reconverge.golden.cli.compiler",
    ),
    "analyze": (
        "print the divergence analyses of a kernel (seed 004 Fig 2.2 columns)",
        "reconverge.golden.cli.compiler",
    ),
    "demo": (
        "the main job: compile the demo kernels, run them under every policy, compare",
        "reconverge.golden.cli.sm",
    ),
    "run": (
        "run a program on the cycle-level SM under one policy",
        "reconverge.golden.cli.sm",
    ),
    "compare": ("compare policies on programs, side by side", "reconverge.golden.cli.sm"),
    "eval": (
        "run the seeds' experiments on the golden SM and write docs/evaluation.md",
        "reconverge.golden.cli.evaluation",
    ),
    "verilog": (
        "generate the Verilog of an HDL block or of the SM",
        "reconverge.golden.cli.hdl",
    ),
    "synth": (
        "synthesise an HDL block or the SM: Yosys cell counts and transistors, ECP5 LUTs/FFs/Fmax",
        "reconverge.golden.cli.hdl",
    ),
    "area": (
        "the analytical area model of an HDL block or of the SM, per part (--synth: beside Yosys)",
        "reconverge.golden.cli.hdl",
    ),
    "bitstream": (
        "build a board's bitstream of the SM running a program (ULX3S-85F, iCEBreaker)",
        "reconverge.golden.cli.hdl",
    ),
    "cosim": (
        "co-simulate a program on the SM's Verilog (cocotb) against golden",
        "reconverge.golden.cli.cosim",
    ),
    "power": (
        "the energy model of a run by stage and event (--rtl: beside the RTL's toggles)",
        "reconverge.golden.cli.power",
    ),
}


@dataclass(frozen=True)
class Command:
    """A sub-command: ``configure`` adds its arguments, ``run`` executes it and returns the exit
    status. Feature modules define their own as ``COMMANDS``; :data:`INDEX` lists them."""

    name: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
