"""`reconverge compile` and `reconverge analyze`: output, JSON keys, exit statuses, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reconverge.golden import cli

RECONVERGE = str(Path(sys.executable).with_name("reconverge"))
KERNEL_FILE = """\
from reconverge.golden.compiler import Array, kernel, tid


@kernel
def first(out: Array, n: int):
    if tid() < n:
        out[tid()] = tid() * n


@kernel
def second(out: Array):
    out[tid()] = 7
"""
ANALYZE_VALUE_KEYS = {
    "value", "variable", "block", "line", "definition", "gsa", "data_dep", "sec_3_4", "sec_3_5",
    "sec_3_5_text", "class",
}  # fmt: skip
COMPILE_KEYS = {
    "kernel", "file", "output", "allocator", "regs", "entry", "bytes", "instructions", "params",
    "frames", "shared_user_bytes", "shared_spill_base", "shared_spill_bytes_per_warp",
    "stack_bytes", "spills", "spill_instructions", "branches",
}  # fmt: skip


@pytest.fixture
def kernel_file(tmp_path: Path) -> Path:
    path = tmp_path / "kernels.py"
    path.write_text(KERNEL_FILE)
    return path


def main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = cli.main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_analyze_prints_fig_2_2_notation(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = main(capsys, "analyze", "avgSquare")
    assert status == 0
    assert "Data Dep." in out and "Sec 3.4" in out and "Sec 3.5 (degree 2)" in out
    assert "d.1    μ(d.0, d.2)" in out and "0T² + 0T + ⊥" in out
    assert "branch b4 (line 20) on %7: uniform, reconverges at b7" in out


def test_analyze_json_keys_and_degree_1(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = main(capsys, "analyze", "initRows", "--degree", "1", "--json")
    assert status == 0
    data = json.loads(out)
    assert data["kernel"] == "initRows" and data["degree"] == 1
    fn = data["functions"][0]
    assert fn["name"] == "initRows" and fn["kind"] == "kernel"
    assert set(fn["values"][0]) == ANALYZE_VALUE_KEYS
    i0 = next(v for v in fn["values"] if v["value"] == "i.0")
    assert i0["sec_3_5"] == ["bottom", 0] and i0["class"] == "divergent"
    assert set(fn["branches"][0]) == {
        "block",
        "line",
        "predicate",
        "sec_3_4",
        "uniform",
        "reconverges_at",
    }


def test_compile_writes_an_elf_that_exec_runs(kernel_file: Path, tmp_path: Path) -> None:
    elf = tmp_path / "first.elf"
    proc = subprocess.run(
        [RECONVERGE, "compile", f"{kernel_file}:first", "-o", str(elf), "--allocator", "affine",
         "--regs", "5", "--json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data) == COMPILE_KEYS
    assert data["allocator"] == "affine" and data["regs"] == 5
    assert [b["hint"] for b in data["branches"]] == [True]
    out_addr = 0x8010_0000  # an output array in zeroed global memory after the program
    run = subprocess.run(
        [RECONVERGE, "exec", str(elf), "--block", "8", "--warp-size", "4", "--arg", hex(out_addr),
         "--arg", "5", "--json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["ok"]


@pytest.mark.parametrize("stage", ["ir", "gsa", "asm"])
def test_compile_emits_each_stage(
    capsys: pytest.CaptureFixture[str], kernel_file: Path, stage: str
) -> None:
    status, out, _ = main(
        capsys, "compile", str(kernel_file), "--kernel", "second", "--emit", stage
    )
    assert status == 0
    marker = {
        "ir": "kernel second(out: Array)",
        "gsa": "kernel second(out: Array)",
        "asm": "_start:",
    }
    assert marker[stage] in out


def test_compile_gsa_shows_gates(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = main(capsys, "compile", "sumTriangle", "--emit", "gsa")
    assert status == 0
    assert "μ(" in out and "γ(" in out and "η(" in out


def test_user_errors_exit_2_in_one_line(
    capsys: pytest.CaptureFixture[str], kernel_file: Path, tmp_path: Path
) -> None:
    status, _, err = main(capsys, "compile", str(kernel_file), "-o", str(tmp_path / "x.elf"))
    assert status == 2 and "defines 2 kernels (first, second)" in err
    status, _, err = main(capsys, "compile", "avgSquare", "--regs", "2", "--emit", "asm")
    assert status == 2 and "--regs 2: the budget is 3 to 28 registers" in err
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from reconverge.golden.compiler import *\n\n@kernel\ndef k(a: Array):\n    a[0] = 1.5\n"
    )
    status, _, err = main(capsys, "analyze", str(bad))
    assert status == 2
    assert err.strip() == (
        f"reconverge analyze: {bad}:5:12: a float value is not in the language; use int32 values"
    )
    assert len(err.strip().splitlines()) == 1
    status, _, err = main(capsys, "analyze", "noSuchKernel")
    assert status == 2 and "has no kernel 'noSuchKernel'" in err
