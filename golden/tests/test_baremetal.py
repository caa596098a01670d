"""An ordinary bare-metal C program (programs/baremetal/main.c, with the project's kernels/crt0.S
and kernels/link.ld as README.md's recipe builds it), compiled by
GNU gcc at test time, runs on the golden model through the Python API and through
``reconverge exec``.

main() self-checks a CRC-32, a sort, recursion, division and more in every thread and returns
0 (the thread's exit code); built with -DFAIL its sort check fails and it returns 3. Each thread
also stores the CRC-32 of its global thread id in ``results[gid]`` (.bss).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from reconverge.golden.config import SMConfig
from reconverge.golden.elf import load_elf
from reconverge.golden.functional import LaunchConfig, run
from reconverge.golden.geometry import Geometry
from reconverge.golden.memmap import GLOBAL_BASE
from reconverge.golden.policies import Policy
from reconverge.golden.sm.run import run_sm

pytestmark = pytest.mark.gnu

PROGRAM_DIR = Path(__file__).parent / "programs" / "baremetal"
KERNELS_DIR = Path(__file__).parents[2] / "kernels"
SOURCES = (KERNELS_DIR / "crt0.S", PROGRAM_DIR / "main.c")
CFLAGS = (
    "-march=rv32im",
    "-mabi=ilp32",
    "-nostdlib",
    "-nostartfiles",
    "-ffreestanding",
    "-Wall",
    "-Wextra",
    "-Werror",
)
GRID, BLOCK, WARP_SIZE = 2, 8, 8
FAIL_EXIT_CODE = 3  # main's return value with -DFAIL (its check 3 fails)

OPTIMIZATIONS = pytest.mark.parametrize("opt", ["-O0", "-O2"])
VARIANTS = pytest.mark.parametrize(("fail", "exit_code"), [(False, 0), (True, FAIL_EXIT_CODE)])

Build = Callable[[str, bool], Path]


def gcc() -> str:
    path = shutil.which("riscv64-unknown-elf-gcc")
    if path is None:
        pytest.fail(
            "riscv64-unknown-elf-gcc not found: `make setup` installs the GNU RISC-V cross tools "
            "(Debian package gcc-riscv64-unknown-elf)",
            pytrace=False,
        )
    return path


def reconverge_command() -> str:
    """The ``reconverge`` script of the running environment (the venv's bin directory)."""
    script = Path(sys.executable).parent / "reconverge"
    found = str(script) if script.exists() else shutil.which("reconverge")
    if found is None:
        pytest.fail("the reconverge command is not installed: run `make setup`", pytrace=False)
    return found


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """Compile the program once per (optimisation, -DFAIL) into a temporary directory."""
    built: dict[tuple[str, bool], Path] = {}

    def build_elf(opt: str, fail: bool) -> Path:
        if (opt, fail) not in built:
            elf = tmp_path_factory.mktemp("baremetal") / f"baremetal{opt}{'-fail' * fail}.elf"
            cmd = [gcc(), *CFLAGS, opt, *(["-DFAIL"] if fail else [])]
            cmd += ["-T", str(KERNELS_DIR / "link.ld"), *(str(s) for s in SOURCES)]
            done = subprocess.run([*cmd, "-o", str(elf)], capture_output=True, text=True)
            if done.returncode:
                pytest.fail(f"{' '.join(cmd)} failed:\n{done.stderr}", pytrace=False)
            built[opt, fail] = elf
        return built[opt, fail]

    return build_elf


@OPTIMIZATIONS
@VARIANTS
def test_python_api(build: Build, opt: str, fail: bool, exit_code: int) -> None:
    image = load_elf(build(opt, fail))
    assert image.entry == image.symbols["_start"] == GLOBAL_BASE
    geometry = Geometry(warp_size=WARP_SIZE, simd_width=WARP_SIZE)
    result = run(image, LaunchConfig(grid=GRID, block=BLOCK, geometry=geometry))
    assert result.fault is None, str(result.fault)
    assert result.exit_codes.tolist() == [[exit_code] * BLOCK] * GRID
    threads = GRID * BLOCK
    results = result.memory.read_words(image.symbols["results"], threads).tolist()
    if fail:
        assert results == [0] * threads  # main returned before storing
    else:
        assert results == [zlib.crc32(gid.to_bytes(4, "little")) for gid in range(threads)]


@OPTIMIZATIONS
@VARIANTS
def test_cli_exec(build: Build, opt: str, fail: bool, exit_code: int) -> None:
    cmd = [reconverge_command(), "exec", str(build(opt, fail)), "--grid", str(GRID)]
    cmd += ["--block", str(BLOCK), "--warp-size", str(WARP_SIZE), "--json"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert (done.returncode != 0) == fail, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["fault"] is None
    assert report["ok"] is not fail
    threads = sorted((t["block"], t["thread"], t["exit_code"]) for t in report["threads"])
    assert threads == [(b, t, exit_code) for b in range(GRID) for t in range(BLOCK)]
    assert all(t["instructions"] > 0 for t in report["threads"])


@pytest.mark.parametrize(
    "config",
    [SMConfig(policy=p) for p in Policy] + [SMConfig(policy=Policy.PPC, hints=False)],
    ids=lambda c: f"{c.policy.value}{'' if c.hints else '-implicit'}",
)
def test_every_policy_runs_the_hint_free_gcc_binary(build: Build, config: SMConfig) -> None:
    """A GCC binary has no reconvergence hints: the policies that need reconvergence PCs take
    them from the immediate postdominators of the binary's control-flow graph (recursion,
    calls, loops and all), and every policy computes what the functional model computes."""
    image = load_elf(build("-O2", False))
    geometry = Geometry(warp_size=WARP_SIZE, simd_width=4, warps=4)
    launch = LaunchConfig(grid=1, block=BLOCK, geometry=geometry)
    reference = run(image, launch)
    result = run_sm(image, launch, config)
    assert result.fault is None, str(result.fault)
    assert result.exit_codes.tolist() == reference.exit_codes.tolist() == [[0] * BLOCK]
    symbol = image.symbols["results"]
    assert (
        result.memory.read_words(symbol, BLOCK).tolist()
        == reference.memory.read_words(symbol, BLOCK).tolist()
    )
    assert result.metrics is not None and result.metrics.counters.hint_instructions == 0


def _qemu() -> str:
    qemu = shutil.which("qemu-riscv32")
    if qemu is None:
        pytest.fail("qemu-riscv32 is not installed: run `make setup`", pytrace=False)
    return qemu


def _qemu_instructions(qemu: str, elf: Path, threads: int, log: Path) -> int:
    """Instructions qemu executes for ``threads`` threads: one translation block per
    instruction, each execution logged (``-d nochain,exec``)."""
    help_text = subprocess.run([qemu, "--help"], capture_output=True, text=True).stdout
    one = "-one-insn-per-tb" if "-one-insn-per-tb" in help_text else "-singlestep"
    cmd = [qemu, one, "-d", "nochain,exec", "-D", str(log), str(elf), str(threads)]
    subprocess.run(cmd, check=True)
    return log.read_text().count("Trace")


@pytest.mark.qemu
def test_qemu_runs_the_same_program_thread_by_thread(tmp_path: Path) -> None:
    """qemu-riscv32, the physical reference of ``make bench``, runs main.c thread by thread
    (qemu_main.S; the thread id from it instead of the SIMT CSRs): every thread passes its
    checks (with -DFAIL, check 3 fails), and qemu executes the instructions golden counts for
    the same threads, but for the thread id's read (CSRs on the SM, a load on qemu) and
    qemu_main.S's loop: a few per thread."""
    from reconverge.golden.evaluation import speed
    from reconverge.golden.evaluation.bench import build_reference

    qemu = _qemu()
    simt, user = build_reference(gcc(), tmp_path)
    assert subprocess.run([qemu, str(user), "256"]).returncode == 0
    (tmp_path / "fail").mkdir()
    _, failing = build_reference(gcc(), tmp_path / "fail", "-DFAIL")
    assert subprocess.run([qemu, str(failing), "4"]).returncode == FAIL_EXIT_CODE
    threads = 4
    ran = _qemu_instructions(qemu, user, threads, tmp_path / "4.log")
    start_up = _qemu_instructions(qemu, user, 0, tmp_path / "0.log")
    geometry = Geometry(warp_size=4, simd_width=4)
    golden = run(load_elf(simt), LaunchConfig(grid=1, block=threads, geometry=geometry))
    assert golden.exit_codes.tolist() == [[0] * threads]
    assert abs((ran - start_up) - int(golden.thread_instructions.sum())) <= 8 * threads
    # make bench's measurement of the program (a thread exiting non-zero would raise)
    for model in ("functional", "sps"):
        measured = speed.measure(str(simt), threads, model, 4, 4, 1)["instructions"]
        assert measured == golden.thread_instructions.sum()
