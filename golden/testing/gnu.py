"""The GNU RISC-V cross tools as the reference in tests: assemble and link a source as the
project's assembler would (``as -mno-relax``, ``ld`` with text at 0x80000000), read back the
memory image and the symbol table, run ``objdump`` and ``readelf``.

Import as ``reconverge.golden.testing.gnu``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from reconverge.golden.memmap import GLOBAL_BASE

AS_FLAGS = ("-march=rv32ima_zicsr_zifencei", "-mabi=ilp32", "-mno-relax")
LD_FLAGS = ("-m", "elf32lriscv", "--no-relax", "--no-warn-rwx-segments", "-e", "_start")

#: GNU as does not know the SIMT instructions and CSR names; these are their GNU spellings.
GNU_BAR = ".word 0x0000000b"
GNU_RHINT = r".insn j 0x0b, x1, \2"
GNU_CSR_NAMES = (
    ".equ tid, 0xcc0\n.equ ntid, 0xcc1\n.equ ctaid, 0xcc2\n.equ nctaid, 0xcc3\n"
    ".equ laneid, 0xcc4\n.equ warpid, 0xcc5\n.equ warpsize, 0xcc6\n"
)


def tool(name: str) -> str:
    """The path of ``riscv64-unknown-elf-NAME``; fails the test when it is not installed."""
    path = shutil.which(f"riscv64-unknown-elf-{name}")
    if path is None:
        pytest.fail(
            f"riscv64-unknown-elf-{name} not found: `make setup` installs the GNU RISC-V cross "
            "tools (Debian package binutils-riscv64-unknown-elf)",
            pytrace=False,
        )
    return path


def run(name: str, *args: str) -> str:
    """Run a GNU tool; its standard output, or a test failure with its messages."""
    cmd = [tool(name), *args]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode:
        pytest.fail(f"{' '.join(cmd)} failed:\n{done.stdout}{done.stderr}", pytrace=False)
    return done.stdout


def gnu_spelling(source: str) -> str:
    """``source`` as GNU as accepts it: ``bar`` and ``rhint TARGET`` as the words they encode,
    ``.rodata`` as a ``.section``, and the SIMT CSR names defined as symbols."""
    source = re.sub(r"(?m)^(\s*)bar\b", rf"\1{GNU_BAR}", source)
    source = re.sub(r"(?m)^(\s*)rhint\s+(\S+)", rf"\1{GNU_RHINT}", source)
    source = re.sub(r"(?m)^(\s*)\.rodata\b", r"\1.section .rodata", source)
    return GNU_CSR_NAMES + source


@dataclass(frozen=True)
class Build:
    """A linked GNU build: the ELF, its memory from 0x80000000 to the end of the initialised
    data (``objcopy -O binary``), and its symbols (``nm``)."""

    elf: Path
    memory: bytes
    symbols: dict[str, int]


def build(source: str, data_address: int, workdir: Path, name: str = "gnu") -> Build:
    """Assemble ``source`` (already in GNU spelling) and link it with .text at 0x80000000 and
    .data at ``data_address``."""
    src, obj, elf, binary = (workdir / f"{name}.{ext}" for ext in ("S", "o", "elf", "bin"))
    src.write_text(source)
    run("as", *AS_FLAGS, "-o", str(obj), str(src))
    layout = (f"-Ttext={GLOBAL_BASE:#x}", f"-Tdata={data_address:#x}")
    run("ld", *LD_FLAGS, *layout, "-o", str(elf), str(obj))
    run("objcopy", "-O", "binary", str(elf), str(binary))
    symbols = {}
    for line in run("nm", str(elf)).splitlines():
        fields = line.split()
        if len(fields) == 3:
            symbols[fields[2]] = int(fields[0], 16)
    return Build(elf, binary.read_bytes(), symbols)


@dataclass(frozen=True)
class Disassembly:
    """One line of ``objdump -d``: address, word, mnemonic and operand text."""

    address: int
    word: int
    mnemonic: str
    operands: str


_OBJDUMP_LINE = re.compile(r"\s*([0-9a-f]+):\s+([0-9a-f]{8})\s+(\S+)\s*([^#]*?)\s*(?:#.*)?$")


def objdump(elf: Path, *options: str) -> list[Disassembly]:
    """``objdump -d`` of ``elf`` (with ``options``, e.g. ``-M no-aliases``), instruction lines
    only."""
    out = []
    for line in run("objdump", "-d", *options, str(elf)).splitlines():
        m = _OBJDUMP_LINE.fullmatch(line)
        if m:
            out.append(Disassembly(int(m[1], 16), int(m[2], 16), m[3], m[4]))
    return out
