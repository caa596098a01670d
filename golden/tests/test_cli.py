"""The `reconverge` command line: the demo, exec/asm/disasm, JSON keys, exit statuses, errors."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from reconverge.golden import cli
from reconverge.golden.cli import programs
from reconverge.golden.cli.command import INDEX

DEMO = Path(cli.__file__).resolve().parents[2] / "kernels" / "divergent_demo.S"
RECONVERGE = str(Path(sys.executable).with_name("reconverge"))

RESULT_KEYS = {
    "file", "grid", "block", "warp_size", "ok", "threads", "threads_total", "thread_instructions",
    "warp_instructions", "simd_efficiency", "fault",
}  # fmt: skip


def collatz_steps(n: int) -> int:
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def reconverge(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([RECONVERGE, *args], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(("grid", "block", "warp"), [(1, 1, 1), (2, 16, 8), (1, 40, 32)])
def test_divergent_program_computes_collatz_steps(grid: int, block: int, warp: int) -> None:
    result, config, image = programs.exec_elf(DEMO, grid=grid, block=block, warp_size=warp)
    result.check()
    words = result.memory.read_words(image.symbols["result"], grid * block)
    assert [int(w) for w in words] == [collatz_steps(g + 1) for g in range(grid * block)]
    assert result.ok
    # The loop trip counts differ per thread, so warps diverge: efficiency below 1 for W > 1.
    efficiency = programs.simd_efficiency(result, config.geometry)
    assert (efficiency == 1.0) if warp == 1 else (0 < efficiency < 1)


def test_demo_command_compares_every_policy_on_the_demo_kernels() -> None:
    """`make run`: the demo kernels compiled, run under every policy with and without hws,
    one table per kernel, all matching the oracle."""
    proc = reconverge("demo", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    kernels = {r["file"].split()[0] for r in rows}
    assert kernels == {"nested", "loopBreak", "mandelbrot"}
    assert len(rows) == 3 * 2 * 9
    assert all(r["ok"] and r["same_results"] and r["oracle_mismatches"] == [] for r in rows)


def test_asm_exec_disasm_round_trip(tmp_path: Path) -> None:
    elf = tmp_path / "demo.elf"
    proc = reconverge("asm", str(DEMO), "-o", str(elf), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["entry"] == 0x8000_0000
    proc = reconverge(
        "exec", str(elf), "--grid", "2", "--block", "12", "--warp-size", "8", "--json"
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert set(report) == RESULT_KEYS
    assert report["ok"] and report["fault"] is None
    assert len(report["threads"]) == 24
    assert set(report["threads"][0]) == {"block", "thread", "exit_code", "instructions"}
    assert {t["exit_code"] for t in report["threads"]} == {0}
    proc = reconverge("disasm", str(elf))
    assert proc.returncode == 0, proc.stderr
    assert "_start:" in proc.stdout and "rhint" in proc.stdout and "ecall" in proc.stdout


def test_nonzero_exit_code_gives_status_1(tmp_path: Path) -> None:
    src = tmp_path / "exit.S"
    src.write_text("_start:\n  csrr a0, tid\n  li a7, 93\n  ecall\n")
    proc = reconverge("exec", str(src), "--block", "3", "--json")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert [t["exit_code"] for t in report["threads"]] == [0, 1, 2]
    assert not report["ok"]


def test_fault_is_reported_with_status_1(tmp_path: Path) -> None:
    src = tmp_path / "fault.S"
    src.write_text("_start:\n  li t0, 0x10\n  lw a0, 0(t0)\n")
    proc = reconverge("exec", str(src), "--block", "2")
    assert proc.returncode == 1
    fault_line = next(line for line in proc.stdout.splitlines() if line.startswith("fault:"))
    assert "0x00000010" in fault_line or "0x10" in fault_line
    assert "lw" in fault_line and "thread 0" in fault_line


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bad.S", "_start:\n  addi a0, a0\n", "bad.S:2:"),
        ("bad.elf", "this is not an ELF file", "bad.elf"),
    ],
)
def test_user_errors_give_status_2(tmp_path: Path, name: str, content: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(content)
    proc = reconverge("exec", str(path))
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_missing_file_and_bad_geometry(tmp_path: Path) -> None:
    proc = reconverge("exec", str(tmp_path / "nope.elf"))
    assert proc.returncode == 2 and "nope.elf" in proc.stderr
    proc = reconverge("exec", str(DEMO), "--warp-size", "12")
    assert proc.returncode == 2 and "power of two" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_asm_writes_nothing_on_error(tmp_path: Path) -> None:
    src, out = tmp_path / "bad.S", tmp_path / "out.elf"
    src.write_text("_start:\n  frobnicate a0\n")
    proc = reconverge("asm", str(src), "-o", str(out))
    assert proc.returncode == 2 and "bad.S:2:" in proc.stderr
    assert not out.exists()


def test_the_index_names_every_command_once_and_help_loads_none() -> None:
    """Each INDEX entry is a command its module defines, each module's commands are all in the
    index; ``--help`` and ``exec`` import no other command's module (start-up, issue 9)."""
    modules = {module for _, module in INDEX.values()}
    defined = {c.name for m in modules for c in importlib.import_module(m).COMMANDS}
    assert defined == set(INDEX)
    assert all(cli.command(name).name == name for name in INDEX)
    probe = (
        "import sys; from reconverge.golden import cli; "
        "cli.build_parser(only=sys.argv[1]); "
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('reconverge'))))"
    )
    for name, expected in (("", "reconverge.golden.cli.command"), ("exec", INDEX["exec"][1])):
        done = subprocess.run([sys.executable, "-c", probe, name], capture_output=True,
                              text=True, check=True)  # fmt: skip
        loaded = set(done.stdout.split())
        assert expected in loaded
        assert not loaded & (modules - {INDEX["exec"][1] if name else ""}), loaded
