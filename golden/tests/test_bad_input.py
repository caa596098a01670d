"""Every class of bad input a user can give the command line, and what the user sees: a user
error is one line naming the cause on standard error with exit status 2 (with ``--json``, a
JSON object on standard output), a program that faults, deadlocks, overflows a table or runs
out of its step budget is a report with the fault and exit status 1, an interrupt is one line
and status 130; never a traceback, never a hang, and no half-written output file.

The cases are :data:`reconverge.golden.testing.bad_input.CASES`; ``make docs`` runs every one
and writes the table of what was tried and what the user saw into docs/testing.md."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reconverge.golden import cli
from reconverge.golden.testing.bad_input import (
    BEGIN,
    CASES,
    END,
    FAILED,
    ROOT,
    USAGE,
    Case,
    files,
)


@pytest.fixture(scope="module")
def tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bad")
    files(folder)
    return folder


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = cli.main(argv)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_is_one_line(case: Case, tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [a.replace("{tmp}", str(tmp)) for a in case.argv]
    status, out, err = run_cli(argv, capsys)
    assert status == case.status, (out, err)
    assert "Traceback" not in out + err
    if case.status == USAGE:
        (line,) = err.strip().splitlines()
        assert line.startswith(f"reconverge {argv[0]}: ") and case.fragment in line, line
        assert out == ""
    else:  # a report whose fault line names the cause
        assert case.fragment in out, out
        assert "\nFAILED\n" in out, out
    assert not [p for p in tmp.rglob("*") if ".tmp" in p.name]  # nothing half-written


@pytest.mark.parametrize("case", [c for c in CASES if c.status == USAGE and c.argv[0][0] != "f"],
                         ids=lambda c: c.name)  # fmt: skip
def test_json_errors_are_json(case: Case, tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [a.replace("{tmp}", str(tmp)) for a in case.argv] + ["--json"]
    status, out, err = run_cli(argv, capsys)
    assert status == USAGE and err == ""
    error = json.loads(out)
    assert error["command"] == argv[0] and error["error"] == "usage"
    assert case.fragment in error["message"]


def test_a_fault_in_json_is_in_the_report(tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(["exec", str(tmp / "illegal.S"), "--json"], capsys)
    report = json.loads(out)
    assert status == FAILED and report["ok"] is False
    assert report["fault"]["kind"] == "illegal instruction" and report["fault"]["pc"] is not None


def cpu_seconds_of(pid: int, at_least: float, timeout: float = 120.0) -> float:
    """Wait until process ``pid`` has used ``at_least`` seconds of CPU (Linux /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    deadline = time.monotonic() + timeout
    while True:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        used = (int(fields[11]) + int(fields[12])) / tick  # utime + stime
        if used >= at_least or time.monotonic() > deadline:
            return used
        time.sleep(0.05)


def _default_sigint() -> None:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_is_one_line_and_leaves_no_file(tmp: Path) -> None:
    """SIGINT during a long run: 'interrupted', status 130, no trace file written."""
    trace = tmp / "interrupted.jsonl"
    # A child inherits ignored and blocked signals: under make test some earlier test of the
    # same pytest worker left SIGINT so (the child then ran to its watchdog, status 1), so
    # the child starts with SIGINT as a user's shell gives it.
    parent = (signal.getsignal(signal.SIGINT), signal.pthread_sigmask(signal.SIG_BLOCK, []))
    proc = subprocess.Popen(
        [sys.executable, "-m", "reconverge.golden.cli", "run", str(tmp / "loop.S"),
         "--step-limit", "100000000", "--trace", str(trace)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_default_sigint,
    )  # fmt: skip
    used = cpu_seconds_of(proc.pid, at_least=1.0)  # into the run, past start-up, however loaded
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    why = (parent, used, proc.returncode, out[-500:], err[-500:])
    assert proc.returncode == cli.EXIT_INTERRUPTED, why
    assert err.strip() == "reconverge run: interrupted" and out == ""
    assert not trace.exists() and not list(tmp.glob(".interrupted*"))


def test_ctrl_c_while_a_design_elaborates_is_one_line(tmp: Path) -> None:
    """SIGINT while a large SM elaborates: one line, not a warning per Amaranth object the
    interrupted elaboration left unused."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "reconverge.golden.cli", "verilog", "sm", "--warp-size", "64",
         "--simd-width", "64", "--warps", "64", "-o", str(tmp / "big.v")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_default_sigint,
    )  # fmt: skip
    used = cpu_seconds_of(proc.pid, at_least=4.0)  # past the imports, into the elaboration
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == cli.EXIT_INTERRUPTED, (used, err[-500:])
    assert err.strip() == "reconverge verilog: interrupted" and out == ""
    assert not (tmp / "big.v").exists()


def test_version() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "reconverge.golden.cli", "--version"], capture_output=True,
        text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout.startswith("reconverge ")


def test_the_doc_lists_every_case() -> None:
    text = (ROOT / "docs" / "testing.md").read_text()
    table = text[text.index(BEGIN) : text.index(END)]
    for case in CASES:
        assert f"| {case.name} |" in table, f"docs/testing.md lacks {case.name!r}: make docs"


def test_outputs_are_written_through_links_and_into_special_files(tmp: Path) -> None:
    """Issue 26: ``--trace`` to a symbolic link writes the file it names (the link stays), to
    a FIFO writes into it (the FIFO stays); neither node is replaced by a regular file."""
    target, link, fifo = tmp / "target.jsonl", tmp / "link.jsonl", tmp / "fifo.jsonl"
    link.symlink_to(target.name)
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    for output in (link, fifo):
        argv = ["run", str(tmp / "loop.S"), "--step-limit", "10", "--trace", str(output)]
        with contextlib.redirect_stdout(io.StringIO()):
            assert cli.main(argv) == FAILED  # the step limit
    assert len(reader.communicate(timeout=60)[0].splitlines()) == 10
    assert link.is_symlink() and len(target.read_text().splitlines()) == 10
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert not [p for p in tmp.rglob("*") if ".tmp" in p.name]
