"""qemu-riscv32 (Debian's qemu-user) as the independent RISC-V simulator in tests: a program
linked by GNU ld into one read-write-execute segment at 0x80000000 (so that qemu-user maps code
and data alike, wherever the data lies), run as a Linux process whose exit system call
(a7 = 93) is the SM's thread exit, and the instructions it executes counted: one translated
block per instruction (``-singlestep``), each executed block logged (``-d exec,nochain``).

Import as ``reconverge.golden.testing.qemu``.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from reconverge.golden.testing import gnu

#: One PT_LOAD segment, readable, writable and executable, from 0x80000000.
LINK_SCRIPT = """\
OUTPUT_ARCH(riscv)
ENTRY(_start)
PHDRS { all PT_LOAD FLAGS(7); }
SECTIONS
{
    . = 0x80000000;
    .text : { *(.text.init) *(.text .text.*) } :all
    .data : { *(.rodata .rodata.*) *(.data .data.*) *(.sdata .sdata.*) *(.bss .bss.*) } :all
}
"""
LD_FLAGS = ("--no-warn-rwx-segments",)


def link_script(workdir: Path) -> Path:
    script = workdir / "rwx.ld"
    if not script.exists():
        script.write_text(LINK_SCRIPT)
    return script


def build(source: str, workdir: Path, name: str) -> Path:
    """Assemble ``source`` (in GNU spelling, no SIMT instructions) with GNU as and link it into
    one RWX segment: the ELF."""
    src, obj, elf = (workdir / f"{name}.{ext}" for ext in ("S", "o", "elf"))
    src.write_text(source)
    gnu.run("as", *gnu.AS_FLAGS, "-o", str(obj), str(src))
    script = link_script(workdir)
    gnu.run("ld", "-m", "elf32lriscv", "--no-relax", *LD_FLAGS, "-T", str(script),
            "-o", str(elf), str(obj))  # fmt: skip
    return elf


def run(elf: Path, log: Path) -> tuple[int, int]:
    """(exit status, instructions executed) of ``elf`` under qemu-riscv32."""
    qemu = shutil.which("qemu-riscv32")
    if qemu is None:
        pytest.fail(
            "qemu-riscv32 not found: `make setup` installs it (Debian package qemu-user)",
            pytrace=False,
        )
    cmd = [qemu, "-singlestep", "-d", "exec,nochain", "-D", str(log), str(elf)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    with log.open() as lines:
        count = sum(line.startswith("Trace ") for line in lines)
    return done.returncode, count
