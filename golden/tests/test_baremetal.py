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

from reconverge.golden.elf import load_elf
from reconverge.golden.functional import LaunchConfig, run
from reconverge.golden.geometry import Geometry
from reconverge.golden.memmap import GLOBAL_BASE
from reconverge.golden.sm.config import Policy, SMConfig
from reconverge.golden.sm.core import run_sm

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
