"""Programs on the SM's generated Verilog, held to golden (the co-simulation plan of issue 12,
:mod:`reconverge.testbench.cosim_plan`).

``make test``: every suite kernel at its default size under every policy at the cosim
configuration (W = 8, L = 4, 4 warp slots) on Verilator, with hws off and, for mp-orec, on (one
SM build per policy variant, every other test of this module runs on one of them); two cells on
Icarus; the GNU-built bare-metal program and the assembler demo through ``reconverge cosim``;
W = L = 8 on a subset. ``make test-slow``: the other (policy, hws) builds, the other Icarus
cells, and W = 16, L = 4 and W = 32, L = 8 (8 warp slots) on a subset. ``make test-sweep``:
the rest of the kernel x policy x hws x geometry sweep. Every cell must reach exactly its
expected level (4 unless ``cosim_plan.KNOWN`` documents it) and the RTL's outputs must match
the kernel's oracle.

Tests that run on one SM build share an ``xdist_group`` (``make test`` distributes with
``--dist loadgroup``), so a pytest-xdist worker builds each SM once and no worker waits for
another's build.
"""

from __future__ import annotations

import functools
import json
import operator
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconverge.golden import cli
from reconverge.golden.asm import assemble
from reconverge.golden.faults import FaultCode
from reconverge.golden.functional import LaunchConfig
from reconverge.golden.loader import load_program
from reconverge.golden.policies import Variant, variant
from reconverge.golden.testing import riscv_tests
from reconverge.golden.testing.randprog import Program, programs, render
from reconverge.testbench import cosimdoc
from reconverge.testbench.cosim import cosim
from reconverge.testbench.cosim_plan import (
    COSIM_GEOMETRY,
    GEOMETRIES,
    HWS,
    KERNELS,
    KNOWN,
    SEEDS_GEOMETRY,
    VARIANTS,
    build_group,
    params_for,
    run_cell,
)

ROOT = Path(__file__).resolve().parents[2]
BAREMETAL = ROOT / "golden" / "tests" / "programs" / "baremetal"
DEMO = ROOT / "kernels" / "divergent_demo.S"
JUMP_TABLE = Path(__file__).parent / "programs" / "jump_table.S"
ATOMICS = Path(__file__).parent / "programs" / "atomics.S"
TWO_BLOCKS = Path(__file__).parent / "programs" / "two_resident_blocks.S"
PAST_THE_CODE = Path(__file__).parent / "programs" / "past_the_code.S"
SPS, DPS, MP_OREC = variant("sps"), variant("dps"), variant("mp-orec")


def cell(
    kernel: str, geometry: str, variant: Variant, hws: bool, sim: str = "", *marks: object
) -> object:
    """A pytest parameter set of one cell, in the xdist group of its SM build."""
    suffix = f"-{sim}" if sim else ""
    return pytest.param(
        kernel,
        geometry,
        variant,
        hws,
        id=f"{kernel}-{variant.name}{'-hws' * hws}-{geometry.replace(' ', '-')}{suffix}",
        marks=(pytest.mark.xdist_group(build_group(geometry, variant, hws)), *marks),
    )


#: The SM builds of make test at the cosim configuration: one per policy variant, hws off but
#: for mp-orec (each build is a minute or two of Verilog generation and C++ compilation, the
#: bulk of make test); the other (policy, hws) pairs are built in make test-slow.
DEFAULT_BUILDS: tuple[tuple[Variant, bool], ...] = tuple((v, v == MP_OREC) for v in VARIANTS)
SLOW_BUILDS = tuple((v, h) for v in VARIANTS for h in HWS if (v, h) not in DEFAULT_BUILDS)


def build_params() -> list[object]:
    """(variant, hws) parameter sets of every cosim-configuration build, the slow ones marked."""
    return [
        pytest.param(v, h, id=f"{v.name}{'-hws' * h}",
                     marks=(pytest.mark.xdist_group(build_group(COSIM_GEOMETRY, v, h)),
                            *([pytest.mark.slow] if (v, h) in SLOW_BUILDS else [])))
        for v, h in (*DEFAULT_BUILDS, *SLOW_BUILDS)
    ]  # fmt: skip


CELL_ARGS = ("kernel", "geometry", "variant", "hws")
#: make test: the whole suite on the default builds; make test-slow: on the others.
COSIM_CELLS = [cell(k, COSIM_GEOMETRY, v, h) for v, h in DEFAULT_BUILDS for k in KERNELS] + [
    cell(k, COSIM_GEOMETRY, v, h, "", pytest.mark.slow) for v, h in SLOW_BUILDS for k in KERNELS
]
#: On Icarus: nested (seed 002 Fig 6) under every policy, ifElse with hws; make test runs two
#: of them (Icarus simulates the SM at tens of cycles per second), make test-slow the others.
ICARUS_FAST = {("nested", "sps", False), ("ifElse", "mp-orec", True)}
ICARUS_CELLS = [
    cell(k, COSIM_GEOMETRY, v, h, "icarus",
         *([] if (k, v.name, h) in ICARUS_FAST else [pytest.mark.slow]))
    for k, variants, h in (("nested", VARIANTS, False), ("ifElse", (SPS, MP_OREC), True))
    for v in variants
]  # fmt: skip
#: The other geometries on five control-flow shapes (if/else, nesting, a loop with break, a
#: conditional call, atomics and barriers): W = L = 8 (one pass: the stack-less tree coalesces
#: all eight lanes) in make test; W = 16 on four passes and the seeds' W = 32 (sps, 8 warp
#: slots on L = 8: its build is about 12 minutes) in make test-slow.
GEOMETRY_SUBSET = (  # (geometry, (variant, hws), slow)
    ("W=8 L=8", (variant("stackless"), False), False),
    ("W=16 L=4", (variant("mp"), False), True),
    (SEEDS_GEOMETRY, (SPS, False), True),
)
SUBSET_KERNELS = ("ifElse", "nested", "loopBreak", "condCall", "bfs")
GEOMETRY_CELLS = [
    cell(k, g, v, h, "", *([pytest.mark.slow] if slow else []))
    for g, (v, h), slow in GEOMETRY_SUBSET
    for k in SUBSET_KERNELS
]
#: make test-sweep (and make cosim, which writes docs/cosim.md): every other cell of the sweep,
#: 26 more SM builds -- more than fits in CI beside make test.
_planned = {(k, g, v, h) for g, (v, h), _ in GEOMETRY_SUBSET for k in SUBSET_KERNELS}
SWEEP_CELLS = [
    cell(k, g, v, h)
    for g in GEOMETRIES
    if g != COSIM_GEOMETRY
    for v in VARIANTS
    for h in HWS
    for k in KERNELS
    if (k, g, v, h) not in _planned
]


def check(kernel: str, geometry: str, variant: Variant, hws: bool, sim: str) -> None:
    result = run_cell(kernel, geometry, variant, hws, sim=sim)
    assert result.problems() == [], result.report.format()


@pytest.mark.rtl
@pytest.mark.usefixtures("verilator")
@pytest.mark.parametrize(CELL_ARGS, COSIM_CELLS)
def test_suite_at_the_cosim_configuration(
    kernel: str, geometry: str, variant: Variant, hws: bool
) -> None:
    """Every suite kernel under every policy, hws off and on, on Verilator: the expected
    level (4), the oracle's outputs."""
    check(kernel, geometry, variant, hws, "verilator")


@pytest.mark.rtl
@pytest.mark.parametrize(CELL_ARGS, ICARUS_CELLS)
def test_subset_on_icarus(kernel: str, geometry: str, variant: Variant, hws: bool) -> None:
    """The default simulator: nested under every policy, ifElse with hws."""
    check(kernel, geometry, variant, hws, "icarus")


@pytest.mark.rtl
@pytest.mark.usefixtures("verilator")
@pytest.mark.parametrize(CELL_ARGS, GEOMETRY_CELLS)
def test_other_geometries(kernel: str, geometry: str, variant: Variant, hws: bool) -> None:
    """W = L = 8 (one pass per instruction) and W = 16 on L = 4 (four passes) on a subset."""
    check(kernel, geometry, variant, hws, "verilator")


@pytest.mark.rtl
@pytest.mark.sweep
@pytest.mark.usefixtures("verilator")
@pytest.mark.parametrize(CELL_ARGS, SWEEP_CELLS)
def test_sweep_other_geometries(kernel: str, geometry: str, variant: Variant, hws: bool) -> None:
    """The rest of the kernel x policy x hws x geometry sweep."""
    check(kernel, geometry, variant, hws, "verilator")


def test_the_plan_covers_the_sweep() -> None:
    """The default, slow and sweep cells together are the whole sweep, each once, and every known
    exception names a cell of it with a level below 4 and a cause."""
    everything = {(k, g, v, h) for g in GEOMETRIES for v in VARIANTS for h in HWS for k in KERNELS}
    planned = [tuple(p.values) for p in (*COSIM_CELLS, *GEOMETRY_CELLS, *SWEEP_CELLS)]
    assert len(planned) == len(set(planned)) and set(planned) == everything
    labels = {v.name for v in VARIANTS}
    for (kernel, geometry, label, hws), (level, cause) in KNOWN.items():
        assert kernel in KERNELS and geometry in GEOMETRIES and label in labels
        assert hws in HWS and 0 <= level < 4 and cause


# ----------------------------------------------------------------------------------------------
# Programs through `reconverge cosim`


def cosim_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    status = cli.main(["cosim", *args, "--level", "4", "--json"])
    return status, json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def baremetal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """golden/tests/programs/baremetal built by GNU gcc -O2 as golden's test builds it."""
    gcc = shutil.which("riscv64-unknown-elf-gcc")
    if gcc is None:
        pytest.fail("riscv64-unknown-elf-gcc not found: `make setup` installs it")
    elf = tmp_path_factory.mktemp("baremetal") / "baremetal.elf"
    flags = ["-march=rv32im", "-mabi=ilp32", "-nostdlib", "-nostartfiles", "-ffreestanding"]
    sources = [str(ROOT / "kernels" / "crt0.S"), str(BAREMETAL / "main.c")]
    cmd = [gcc, *flags, "-O2", "-T", str(ROOT / "kernels" / "link.ld"), *sources, "-o", str(elf)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return elf


def _exits_ok(out: dict) -> None:
    assert out["rtl"]["stopped"] == "done" and out["rtl"]["fault"] is None, out["rtl"]["message"]


def baremetal_json(capsys: pytest.CaptureFixture[str], elf: Path, *options: str) -> dict:
    """The bare-metal program in two blocks of 8 threads, as golden's test runs it."""
    status, out = cosim_json(capsys, str(elf), "--grid", "2", "--block", "8", *options,
                             "--sim", "verilator")  # fmt: skip
    assert (status, out["level"], out["difference"]) == (cli.EXIT_OK, 4, None)
    return out


@pytest.mark.rtl
@pytest.mark.gnu
@pytest.mark.usefixtures("verilator")
@pytest.mark.xdist_group(build_group(COSIM_GEOMETRY, DPS, False))
def test_baremetal_program(baremetal: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The GNU-built C program (CRC-32, sort, recursion, division; every thread returns 0 when
    its self-checks pass) on the SM under dps: level 4, so the RTL's exit codes and memory
    (each thread's CRC in ``results``) are golden's, which golden/tests/test_baremetal.py
    holds to the expected values. (All checks run: a failing one returns early, within a
    tenth of the cycles.)"""
    out = baremetal_json(capsys, baremetal, "--policy", "dps")
    _exits_ok(out)
    assert out["golden"]["cycles"] == out["rtl"]["cycles"] > 100_000


@pytest.mark.rtl
@pytest.mark.gnu
@pytest.mark.usefixtures("verilator")
@pytest.mark.xdist_group(build_group(COSIM_GEOMETRY, SPS, False))
def test_baremetal_program_overflows_the_sps_stack(
    baremetal: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Under sps the program's divergent recursion needs 17 stack entries, one more than the
    cosim configuration has: both sides stop on the same table overflow (level 4: the same
    fault kind, instruction, block and thread, after the same issue stream)."""
    out = baremetal_json(capsys, baremetal, "--policy", "sps")
    assert out["rtl"]["stopped"] == "fault"
    rtl, golden = ({k: v for k, v in out[side]["fault"].items() if k != "message"}
                   for side in ("rtl", "golden"))  # fmt: skip
    assert rtl == golden and rtl["kind"] == "table overflow"


@pytest.mark.rtl
@pytest.mark.gnu
@pytest.mark.slow
@pytest.mark.usefixtures("verilator")
@pytest.mark.parametrize("name", [v.name for v in VARIANTS])
def test_baremetal_program_every_policy(
    name: str, baremetal: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bare-metal program in two blocks under every policy (a GNU binary has no hints:
    the explicit policies take the RPCs of its postdominators; sps with the 17 stack entries
    its recursion needs)."""
    policy = ["--policy", name]
    if name == "sps":
        policy += ["--stack-depth", "32"]
    _exits_ok(baremetal_json(capsys, baremetal, *policy))


@pytest.mark.rtl
@pytest.mark.usefixtures("verilator")
@pytest.mark.xdist_group(build_group(COSIM_GEOMETRY, MP_OREC, True))
def test_assembler_demo(capsys: pytest.CaptureFixture[str]) -> None:
    """kernels/divergent_demo.S (Collatz steps, rhint before each divergent branch), 32
    threads, under mp-orec with hws: level 4 (golden's memory, exit codes, issue cycles)."""
    status, out = cosim_json(capsys, str(DEMO), "--policy", "mp-orec", "--hws",
                             "--sim", "verilator")  # fmt: skip
    _exits_ok(out)
    assert (status, out["level"], out["difference"]) == (cli.EXIT_OK, 4, None)
    assert out["golden"]["thread_instructions"] == out["rtl"]["thread_instructions"] > 0


@pytest.mark.rtl
@pytest.mark.usefixtures("verilator")
@pytest.mark.parametrize(("variant", "hws"), build_params())
def test_jump_table_program(variant: Variant, hws: bool) -> None:
    """testbench/tests/programs/jump_table.S, 16 threads: a ``jalr`` to five targets and a
    ``ret`` without a call to three (more target groups than the stacks and tables take in one
    clock), a barrier, shared memory and AMOs, under every policy: level 4, and the RTL's
    memory holds the values the program's header derives per thread."""
    image = load_program(JUMP_TABLE)
    params = params_for(COSIM_GEOMETRY, variant, hws)
    launch = LaunchConfig(1, 16, params.geometry, args=(5,))
    report = cosim(image, launch, params, sim="verilator", level=4, source=str(JUMP_TABLE))
    assert report.reached == 4, report.format()
    values = [100 + t % 5 + 10 * (t % 3 + 1) for t in range(16)]
    neighbour = [values[(t + 1) % 16] for t in range(16)]
    memory, symbols = report.run.memory, image.symbols
    assert list(memory.read_words(symbols["result"], 16)) == [
        v + n for v, n in zip(values, neighbour, strict=True)
    ]
    assert int(memory.read_words(symbols["counter"], 1)[0]) == 16
    hist = [sum(neighbour[0::2]), sum(neighbour[1::2])]
    assert list(memory.read_words(symbols["hist"], 2)) == hist


@pytest.mark.rtl
@pytest.mark.usefixtures("verilator")
@pytest.mark.parametrize(("variant", "hws"), build_params())
def test_atomics_program(variant: Variant, hws: bool) -> None:
    """testbench/tests/programs/atomics.S, four blocks of 16 threads (blocks 2 and 3 enter the
    slots of blocks 0 and 1): lr.w / sc.w retry loops on global and shared words and in a
    divergent branch, private lr.w / sc.w on local memory, and the five AMOs beyond add, swap,
    min and max, under every policy: level 4, and the RTL's memory holds the values the
    program's header derives."""
    image = load_program(ATOMICS)
    params = params_for(COSIM_GEOMETRY, variant, hws)
    launch = LaunchConfig(4, 16, params.geometry)
    report = cosim(image, launch, params, sim="verilator", level=4, source=str(ATOMICS))
    assert report.reached == 4, report.format()
    total = 64
    memory, symbols = report.run.memory, image.symbols
    names = ("lrsc", "blocks", "oddmax", "gor", "gand", "gxor", "gminu", "gmaxu")
    words = {name: int(memory.read_words(symbols[name], 1)[0]) for name in names}
    bits = (1 << 32) - 1  # gid mod 32 covers every bit twice over
    assert words == {
        "lrsc": total,
        "blocks": total,
        "oddmax": total - 1,
        "gor": bits,
        "gand": 0,
        "gxor": functools.reduce(operator.xor, range(total)),
        "gminu": 1,
        "gmaxu": 0x8000_0000 | (total - 1),
    }
    assert list(memory.read_words(symbols["result"], total)) == [0x16] * total


@pytest.mark.rtl
@pytest.mark.usefixtures("verilator")
@pytest.mark.xdist_group(build_group(COSIM_GEOMETRY, SPS, False))
def test_two_resident_blocks_keep_their_windows() -> None:
    """testbench/tests/programs/two_resident_blocks.S (a random program that found the bug):
    a block entering the slots of another block's warps while that block still runs keeps its
    own barrier and shared-memory window: level 4 under sps."""
    image = load_program(TWO_BLOCKS)
    params = params_for(COSIM_GEOMETRY, SPS, False)
    report = cosim(image, LaunchConfig(2, 20, params.geometry), params, sim="verilator", level=4)
    assert report.reached == 4, report.format()
    assert report.rtl.fault is None and report.rtl.exited.all()


@pytest.mark.rtl
@pytest.mark.usefixtures("verilator")
@pytest.mark.xdist_group(build_group(COSIM_GEOMETRY, SPS, False))
def test_a_jump_past_the_code_faults() -> None:
    """testbench/tests/programs/past_the_code.S: a jump into the instruction store's part the
    testbench never loads is an illegal instruction at that PC, as in golden (level 4)."""
    image = load_program(PAST_THE_CODE)
    params = params_for(COSIM_GEOMETRY, SPS, False)
    report = cosim(image, LaunchConfig(1, 4, params.geometry), params, sim="verilator", level=4)
    assert report.reached == 4, report.format()
    fault = report.rtl.fault
    assert fault is not None and fault.kind == FaultCode.ILLEGAL.kind, report.format()
    assert fault.pc == image.entry + 40


def check_random_program(program: Program, variant: Variant, hws: bool, block: int) -> None:
    """A random program (golden/tests/randprog.py: jump tables, calls, recursion, loops with
    break and continue, early exits, barriers, AMOs, lr.w / sc.w) on the SM's Verilog:
    level 4 against golden."""
    source = render(program)
    image = assemble(source, "random.S")
    params = params_for(COSIM_GEOMETRY, variant, hws)
    launch = LaunchConfig(2, block, params.geometry, step_limit=200_000)
    report = cosim(image, launch, params, sim="verilator", level=4, source="random.S")
    assert report.reached == 4, f"{report.format()}\n{source}"


@pytest.mark.rtl
@pytest.mark.usefixtures("verilator")
@pytest.mark.parametrize(("variant", "hws"), [
    pytest.param(v, h, id=v.name + "-hws" * h,
                 marks=pytest.mark.xdist_group(build_group(COSIM_GEOMETRY, v, h)))
    for v, h in DEFAULT_BUILDS
])  # fmt: skip
@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(program=programs(), block=st.integers(1, 32))
def test_random_programs(variant: Variant, hws: bool, program: Program, block: int) -> None:
    """Random programs under every policy on Verilator, level 4 (more in make test-slow)."""
    check_random_program(program, variant, hws, block)


@pytest.mark.rtl
@pytest.mark.slow
@pytest.mark.usefixtures("verilator")
@pytest.mark.parametrize(("variant", "hws"), build_params())
@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(program=programs(), block=st.integers(1, 32))
def test_random_programs_sweep(variant: Variant, hws: bool, program: Program, block: int) -> None:
    check_random_program(program, variant, hws, block)


#: The public RISC-V ISA tests on the SM's Verilog: all but fence_i, which runs the instructions it
#: stores, while the SM fetches from its instruction store (docs/sm-hardware.md).
RISCV_TESTS = [n for n in riscv_tests.names() if n != "rv32ui-fence_i"] or ["riscv-tests-missing"]


@pytest.fixture(scope="module")
def riscv_tests_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("riscv-tests")


@pytest.mark.rtl
@pytest.mark.gnu
@pytest.mark.usefixtures("verilator")
@pytest.mark.xdist_group(build_group(COSIM_GEOMETRY, MP_OREC, True))
@pytest.mark.parametrize("name", RISCV_TESTS)
def test_riscv_tests_on_the_sm(name: str, riscv_tests_dir: Path) -> None:
    """The public RISC-V ISA tests (rv32ui, rv32um, rv32ua: golden/tests/riscv_tests.py) on
    the SM's Verilog under mp-orec with hws, one thread: level 4, and the thread exits with 0
    (a failing case exits with its number)."""
    image = load_program(riscv_tests.build(name, riscv_tests_dir))
    params = params_for(COSIM_GEOMETRY, MP_OREC, True)
    report = cosim(image, LaunchConfig(1, 1, params.geometry), params, sim="verilator", level=4)
    assert report.reached == 4, report.format()
    rtl = report.rtl
    assert rtl.fault is None and rtl.exited.all(), report.format()
    assert rtl.exit_codes.tolist() == [[0]], f"{name}: case {rtl.exit_codes[0][0]} failed"


@pytest.mark.rtl
@pytest.mark.xdist_group(build_group(COSIM_GEOMETRY, SPS, False))
def test_assembler_demo_on_icarus(capsys: pytest.CaptureFixture[str]) -> None:
    """The demo on the default simulator, one warp of 8 threads under sps."""
    status, out = cosim_json(capsys, str(DEMO), "--block", "8", "--policy", "sps")
    _exits_ok(out)
    assert (status, out["level"], out["sim"]) == (cli.EXIT_OK, 4, "icarus")


@pytest.mark.rtl
@pytest.mark.usefixtures("verilator")
@pytest.mark.xdist_group(build_group(COSIM_GEOMETRY, SPS, False))
def test_make_cosim_runs_its_builds_on_a_dask_cluster() -> None:
    """``make cosim CLUSTER=...``: the sweep's jobs (one per SM build) on the workers of a Dask
    cluster started on this machine, the executor ``reconverge eval --cluster`` uses; the
    rows and the document are the local run's."""
    distributed = pytest.importorskip("distributed")
    chosen = [(COSIM_GEOMETRY, SPS.name, False)]
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        rows = cosimdoc.sweep(("ifElse", "nested"), 1, "verilator",
                              cluster=cluster.scheduler_address, chosen=chosen)  # fmt: skip
    assert [(r.kernel, r.variant, r.level, r.wrong) for r in rows] == [
        ("ifElse", "sps", 4, ()),
        ("nested", "sps", 4, ()),
    ]
    assert all(r.golden_cycles == r.rtl_cycles and r.rtl_cycles for r in rows)
    assert "| ifElse | sps | 4 |" in cosimdoc.document(rows, "verilator", 1.0)
