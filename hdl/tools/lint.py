"""Verilator lint of the generated Verilog (docs/hdl.md, "Lint and waivers").

``verilator --lint-only -Wall`` with these categories waived, all of them artefacts of
Yosys ``write_verilog`` output rather than design problems:

- ``WIDTH``: Yosys writes expressions that rely on Verilog's context-determined widths
  (``a + b[0]`` with a narrower operand, ``!x`` for ``x == 0`` on a vector);
- ``CASEOVERLAP``: a ``$pmux`` (one-hot multiplexer) is written as a function with a ``casez``
  whose patterns overlap; its select lines are one-hot by construction;
- ``UNUSEDSIGNAL``: named intermediate signals kept for readable waveforms, and nets the
  conversion leaves behind (e.g. the unused bits of a constant-folded stage);
- ``DECLFILENAME``: the file name need not match the module name.

Every other warning (latches, combinational loops, multiple drivers, undriven signals,
blocking assignments in clocked logic, ...) fails the lint.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

WAIVED = ("WIDTH", "CASEOVERLAP", "UNUSEDSIGNAL", "DECLFILENAME")


def verilator_lint(verilog: str, top: str, verilator: str = "verilator") -> list[str]:
    """The warnings and errors Verilator reports beyond the waivers (empty = clean)."""
    exe = shutil.which(verilator)
    if exe is None:
        raise FileNotFoundError("verilator not found")
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / f"{top}.v"
        source.write_text(verilog)
        cmd = [exe, "--lint-only", "-Wall", "--top-module", top]
        cmd += [f"-Wno-{w}" for w in WAIVED] + [str(source)]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    return [line for line in done.stderr.splitlines() if line.startswith("%")]
