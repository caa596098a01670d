"""The public RISC-V ISA tests (riscv-tests, ``isa/rv32ui``, ``rv32um``, ``rv32ua``) as test
programs: their sources come from the copy that the PyPI package ``pythondata-cpu-ibex`` (a
pinned test dependency) vendors, and GNU gcc builds them at test time with the project's
target environment (``riscv_tests_env/riscv_test.h``: a test ends its thread with the
Linux exit system call, code 0 when it passed, the failing case's number otherwise) into the
one read-write-execute segment of ``qemu.LINK_SCRIPT``, so that the same ELF runs on the SM and
under qemu-user (``fence_i`` stores the instructions it then runs).

Import as ``reconverge.golden.testing.riscv_tests``.
"""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import pytest

from reconverge.golden.testing import gnu, qemu

SUITES = ("rv32ui", "rv32um", "rv32ua")
ENV = Path(__file__).parent / "riscv_tests_env"
PACKAGE = "pythondata_cpu_ibex"
CFLAGS = ("-march=rv32ima_zicsr_zifencei", "-mabi=ilp32", "-nostdlib", "-nostartfiles")


def isa_dir() -> Path | None:
    """The riscv-tests ``isa`` directory of the installed package, or None without it."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "system_verilog" / "vendor" / "riscv-tests" / "isa"


def names() -> list[str]:
    """Every test of the three suites, as ``suite-name`` (``rv32ua-lrsc``), sorted; empty when
    the package is missing (the ``build`` of any test then says so)."""
    isa = isa_dir()
    if isa is None:
        return []
    return sorted(f"{suite}-{src.stem}" for suite in SUITES for src in (isa / suite).glob("*.S"))


def build(name: str, out_dir: Path) -> Path:
    """The ELF of test ``name`` (``rv32ua-lrsc``), built into ``out_dir`` (reused if there)."""
    isa = isa_dir()
    if isa is None:
        pytest.fail(
            f"the riscv-tests sources come with the Python package {PACKAGE}: `make setup` "
            "installs it (pyproject.toml, extra 'test')",
            pytrace=False,
        )
    suite, _, stem = name.partition("-")
    elf = out_dir / f"{name}.elf"
    if elf.exists():
        return elf
    script = qemu.link_script(out_dir)
    cmd = [
        gnu.tool("gcc"), *CFLAGS, f"-I{ENV}", f"-I{isa / 'macros' / 'scalar'}",
        "-T", str(script), *(f"-Wl,{flag}" for flag in qemu.LD_FLAGS),
        str(isa / suite / f"{stem}.S"), "-o", str(elf),
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode:
        pytest.fail(f"{' '.join(cmd)} failed:\n{done.stderr}", pytrace=False)
    return elf
