"""The SM's design under test and its simulator builds: the Verilog of ``hdl/sm/top.py`` for a
parameter set (made once per design digest, kept in ``build/cosim/verilog/<key>/``) and its
Icarus or Verilator build (``build/cosim/<sim>/<key>[-<waves>][-toggles]``), each under a file
lock so parallel pytest workers build a design once. Amaranth is imported only when a design's
Verilog is made."""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reconverge.golden.params import SMParams
from reconverge.testbench.errors import CosimError, SimulationError
from reconverge.testbench.runner import (
    SIMULATORS,
    build_root,
    get_runner,
    locked,
    log_tail,
    write_if_changed,
)

#: The project's root: the sources a design's digest covers (``hdl/``, ``golden/``).
PROJECT = Path(__file__).resolve().parents[1]
#: The Verilog top module of the SM.
TOP = "sm"
#: Verilator options for Amaranth's Verilog (as for the blocks, testbench/cocotb_run.py).
VERILATOR_ARGS = ("-Wno-fatal", "-Wno-WIDTH", "-Wno-CASEOVERLAP")
#: The C++ optimisation of Verilator's model: -O1 instead of its default -Os for the code that
#: runs every cycle compiles the SM in about 60 % of the time and simulates it as fast
#: (measured on the cosim configuration: 28 s against 47 s of g++ on two cores, 26 kernels in
#: 34 s on both builds; -O0 compiles in half the time but simulates three times slower). The
#: code run once (``OPT_SLOW``: initialisation, and the toggle build's coverage points) keeps
#: Verilator's default, no optimisation: at -O1 one file of the toggle build took 4 minutes.
CXX_OPTIMISATION = ("OPT_FAST=-O1", "OPT_GLOBAL=-O1")
#: g++ -O1 takes time superlinear in the length of one C++ statement, and Verilator's dataflow
#: optimiser folds the cones of every bit of a wide signal into one: the masked scoreboard's
#: ``hazard`` (64 lookups under mp and mp-orec at the co-simulation configuration) became a
#: statement of 11,500 lines that g++ -O1 compiled in 24-30 minutes. A model whose every-cycle
#: code has a statement longer than this is compiled at -O0 (:data:`CXX_UNOPTIMISED`): the mp-orec
#: model in 68 s, simulating loopBreak at 3,300 cycles per second (sps: 13,000 at -O1, 4,700 at
#: -O0; docs/testing.md, "Verilator builds and g++"). Without the dataflow optimiser
#: (``-fno-dfg``) the statement is not made, but the models simulate ten times slower.
LONG_STATEMENT_LINES = 5000
CXX_UNOPTIMISED = ("OPT_FAST=-O0", "OPT_GLOBAL=-O1")
#: Verilator options of the toggle-coverage build (:mod:`reconverge.golden.cost.activity`):
#: every signal bit however wide, Yosys's unnamed nets (``_123_``) included; the memories are
#: left out by a control file (:func:`memories_off`).
TOGGLE_ARGS = ("--coverage-toggle", "--coverage-underscore", "--coverage-max-width", "1048576")


@dataclass(frozen=True)
class Design:
    """Verilog of a top module with the SM's ports: ``verilog()`` makes it (called only when
    ``digest``, which names everything the text depends on, changed since the last build in
    ``build/cosim/<sim>/<key>``)."""

    top: str
    key: str
    digest: str
    verilog: Callable[[], str]
    kind: str = "RTL"  # what the Verilog is: the RTL, or a netlist after synthesis


def params_digest(params: SMParams) -> str:
    """A short name of a parameter set (its ``repr`` is complete and deterministic)."""
    return hashlib.sha256(repr(params).encode()).hexdigest()[:16]


def sources_digest() -> str:
    """What the SM's Verilog depends on besides its parameters: the sources of ``hdl/`` and
    ``golden/`` (which the HDL reads its definitions from) and the Amaranth version."""
    from importlib import metadata

    digest = hashlib.sha256(metadata.version("amaranth").encode())
    for package in ("hdl", "golden"):
        root = PROJECT / package
        for path in sorted(root.rglob("*.py")):
            if "tests" not in path.relative_to(root).parts:
                digest.update(path.relative_to(root).as_posix().encode() + path.read_bytes())
    return digest.hexdigest()


def sm_design(params: SMParams) -> Design:
    """The SM of ``hdl/sm/top.py`` elaborated from ``params``."""

    def verilog() -> str:
        from reconverge.hdl.sm.top import SM
        from reconverge.hdl.tools.verilog import to_verilog

        return to_verilog(SM(params), TOP)

    key = params_digest(params)
    return Design(TOP, f"sm-{key}", f"{key}-{sources_digest()}", verilog)


def netlist_design(params: SMParams) -> Design:
    """The SM's ECP5 netlist after Yosys (:func:`reconverge.hdl.tools.netlist.sm_netlist`),
    with the primitives' simulation models: the same top module and ports as
    :func:`sm_design`'s."""
    from reconverge.hdl.tools.netlist import netlist_version

    def verilog() -> str:
        from reconverge.hdl.tools.netlist import sm_netlist

        return sm_netlist(params, TOP)

    key = params_digest(params)
    version = hashlib.sha256(netlist_version().encode()).hexdigest()[:16]
    digest = f"{key}-{version}-{sources_digest()}"
    return Design(TOP, f"netlist-{key}", digest, verilog, kind="ECP5 netlist")


def wave_format(sim: str, waves: str | Path | None) -> str:
    """ "" (no waveforms), "fst", or "vcd" (Verilator, for a file name ending in ``.vcd``;
    Icarus always writes FST)."""
    if waves is None:
        return ""
    return "vcd" if sim == "verilator" and str(waves).endswith(".vcd") else "fst"


def verilog_text(design: Design) -> str:
    """The design's Verilog, made once per digest for every simulator and process (elaborating
    the SM takes seconds): kept in ``build/cosim/verilog/<key>/`` with the digest it was made
    from."""
    directory = build_root() / "cosim" / "verilog" / design.key
    with locked(directory):
        source, stamp = directory / f"{design.top}.v", directory / "digest"
        if source.exists() and stamp.exists() and stamp.read_text() == design.digest:
            return source.read_text()
        text = design.verilog()
        write_if_changed(source, text)
        stamp.write_text(design.digest)
        return text


#: A memory's declaration in Yosys's Verilog: ``reg [63:0] store0 [1023:0];``.
_MEMORY = re.compile(r"^\s*reg\s+(?:\[\d+:\d+\]\s*)?(?:\\\S+\s|[A-Za-z_][\w$]*)\s*\[")


def memories_off(source: Path) -> Path:
    """A Verilator control file next to ``source`` that turns coverage off on the lines that
    declare memories: their words are storage, not nets driven by logic (their ports are
    nets and stay covered), and toggle points on every stored bit would slow the simulation
    down."""
    lines = source.read_text().splitlines()
    off = [f'coverage_off -file "{source}" -lines {n}'
           for n, line in enumerate(lines, 1) if _MEMORY.match(line)]  # fmt: skip
    config = source.with_suffix(".vlt")
    config.write_text("\n".join(["`verilator_config", *off, ""]))
    return config


def build_verilator(
    source: Path, top: str, waves: str, log: Path, *, toggles: bool = False
) -> None:
    """Verilate and compile ``source`` in its directory as cocotb's Verilator runner does
    (its ``verilator.cpp``, VPI library and binary name, so the runner's ``test`` runs it), but
    with only the top module's signals public (``--public-depth 1``: the testbench reads and
    drives the ports alone) instead of ``--public-flat-rw``, which keeps every signal of the SM
    writable through VPI: at the cosim configuration that makes 30 MB of C++ instead of 12
    and simulates 5 times slower. ``toggles``: with toggle coverage (:data:`TOGGLE_ARGS`),
    written at the end of a run (``VerilatedCov::write`` in ``verilator.cpp``)."""
    from cocotb_tools import config as cocotb_config

    from reconverge.testbench.verilator import prepare

    directory = source.parent
    libs = cocotb_config.libs_dir
    verilate = [
        prepare(),
        "-cc", "--exe", "-Mdir", str(directory), "--top-module", top, "--vpi",
        "--public-depth", "1", "--prefix", "Vtop", "-o", top,
        "-LDFLAGS", f"-Wl,-rpath,{libs} -L{libs} -lcocotbvpi_verilator",
        *VERILATOR_ARGS,
        *(["--trace"] if waves else []), *(["--trace-fst"] if waves == "fst" else []),
        *([*TOGGLE_ARGS, str(memories_off(source))] if toggles else []),
        "--timescale", "1ns/1ps",
        str(cocotb_config.share_dir / "lib" / "verilator" / "verilator.cpp"), str(source),
    ]  # fmt: skip
    jobs = str(min(os.cpu_count() or 1, 8))
    with open(log, "w") as out:
        subprocess.run(verilate, stdout=out, stderr=subprocess.STDOUT, check=True)
        longest = longest_statement(directory)
        cxx = CXX_UNOPTIMISED if longest > LONG_STATEMENT_LINES else CXX_OPTIMISATION
        out.write(f"longest statement of the every-cycle C++: {longest} lines: {' '.join(cxx)}\n")
        out.flush()
        options = [*cxx, f"VM_TRACE={int(bool(waves))}",
                   *(["VM_COVERAGE=1"] if toggles else [])]  # fmt: skip
        make = ["make", "-j", jobs, "-C", str(directory), "-f", "Vtop.mk", *options]
        objects = runtime_objects(directory)
        runtime = runtime_directory(directory, options, objects)
        with locked(runtime):
            shared = copy_objects(objects, runtime, directory)
        subprocess.run(make, stdout=out, stderr=subprocess.STDOUT, check=True)
        if not shared:
            with locked(runtime):
                copy_objects(objects, directory, runtime)


def longest_statement(directory: Path) -> int:
    """Lines of the longest statement in the every-cycle C++ of the model verilated in
    ``directory`` (``Vtop___024root__N.cpp``, not the ``__Slow`` files of the code run once):
    the longest run of lines none of which ends a statement or a block."""
    longest = 0
    for path in directory.glob("Vtop___024root__*.cpp"):
        if path.stem.endswith("__Slow"):
            continue
        run = 0
        with open(path) as text:
            for line in text:
                run += 1
                if line.rstrip().endswith((";", "{", "}")):
                    longest, run = max(longest, run), 0
    return longest


def runtime_objects(directory: Path) -> list[str]:
    """The object files of Verilator's run-time library a verilated model in ``directory``
    links (``VM_GLOBAL_FAST`` and ``VM_GLOBAL_SLOW`` of its ``Vtop_classes.mk``)."""
    text = (directory / "Vtop_classes.mk").read_text()
    names: list[str] = []
    for block in re.findall(r"^VM_GLOBAL_(?:FAST|SLOW) \+= \\\n((?:  \S+ \\\n)*)", text, re.M):
        names += [f"{line.split()[0]}.o" for line in block.splitlines()]
    return names


def runtime_directory(directory: Path, options: list[str], objects: list[str]) -> Path:
    """Where the run-time library (``objects``) of the model verilated in ``directory`` is
    kept, compiled once and shared by every build with the same Verilator, compiler, model settings
    (``VM_*`` of ``Vtop_classes.mk``: coverage, tracing, timing) and ``make`` options:
    ``build/cosim/verilator-runtime/<digest>/``. The library (``verilated.cpp`` and the
    others: 7-10 s of g++ per build) does not depend on the design."""
    classes = (directory / "Vtop_classes.mk").read_text()
    model = (directory / "Vtop.mk").read_text()
    compiler = subprocess.run(["c++", "--version"], capture_output=True, text=True).stdout
    settings = [
        *re.findall(r"^VM_\w+ = .*$", classes, re.M),
        *re.findall(r"^(?:VERILATOR_ROOT|VM_SC|VM_PROFC) = .*$", model, re.M),
        *re.findall(r"^VM_USER_CFLAGS = \\\n(?:  .*\n)*", model, re.M),
        *objects, *options, compiler,
    ]  # fmt: skip
    digest = hashlib.sha256("\n".join(settings).encode()).hexdigest()[:16]
    return build_root() / "cosim" / "verilator-runtime" / digest


def copy_objects(objects: list[str], source: Path, target: Path) -> bool:
    """Copy the object files ``objects`` and their dependency files from ``source`` to
    ``target`` if ``source`` has them all (each written under a temporary name and renamed: a
    reader never sees half a file). The copies get the time of the copy, so ``make`` in a
    freshly verilated build takes them as newer than its ``Vtop.mk`` and keeps them."""
    files = [n for name in objects for n in (name, name.removesuffix(".o") + ".d")]
    if not all((source / name).exists() for name in files):
        return False
    for name in files:
        part = target / f"{name}.part"
        shutil.copyfile(source / name, part)
        part.replace(target / name)
    return True


def build(design: Design, sim: str, waves: str = "", *, toggles: bool = False) -> tuple[Any, Path]:
    """Write the design's Verilog (:func:`verilog_text`) and compile it for the simulator,
    once per design, wave format (:func:`wave_format`) and toggle coverage (Verilator only) in
    ``build/cosim/<sim>/<key>[-<waves>][-toggles]``: it is recompiled only when its text
    changed. Returns (runner, build directory)."""
    if sim not in SIMULATORS:
        raise CosimError(f"unknown simulator {sim!r} (known: {', '.join(SIMULATORS)})")
    if toggles and sim != "verilator":
        raise CosimError(f"toggle coverage needs Verilator, not {sim}")
    suffix = (f"-{waves}" if waves else "") + ("-toggles" if toggles else "")
    build_dir = build_root() / "cosim" / sim / (design.key + suffix)
    try:
        runner = get_runner(sim)
    except RuntimeError as exc:  # no usable Verilator
        raise CosimError(str(exc)) from None
    runner.log.setLevel(logging.ERROR)  # not "Skipping compilation" on every reuse
    with locked(build_dir):
        source = build_dir / f"{design.top}.v"
        write_if_changed(source, verilog_text(design))
        binary = build_dir / design.top
        built = binary.exists() and binary.stat().st_mtime > source.stat().st_mtime
        log = build_dir / "build.log"
        try:
            if sim == "verilator":
                if not built:  # cocotb's Verilator runner would rebuild every time
                    build_verilator(source, design.top, waves, log, toggles=toggles)
            else:
                runner.build(
                    sources=[source],
                    hdl_toplevel=design.top,
                    build_dir=build_dir,
                    timescale=("1ns", "1ps"),
                    waves=bool(waves),
                    log_file=log,
                )
        except (RuntimeError, SystemExit, subprocess.CalledProcessError):
            hint = ""
            if "lz4.h" in (log.read_text(errors="replace") if log.exists() else ""):
                hint = " (Verilator's FST writer needs liblz4-dev; or --waves FILE.vcd)"
            raise SimulationError(
                f"building {design.top} for {sim} failed{hint} (see {log}):\n{log_tail(log)}"
            ) from None
    return runner, build_dir
