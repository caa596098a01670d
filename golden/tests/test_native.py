"""The functional model's compiled inner loop (golden/native) against its reference, the NumPy
semantics: the same run, bit for bit (exit codes, per-thread instruction counts, warp
instructions, exited flags, every byte of global memory, and the fault with its message and
location), on the suite's kernels, on random programs, on random operands of every arithmetic,
load and store, on every fault, on code that stores into itself, and across progress reports
and the step limit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconverge.golden import functional
from reconverge.golden.asm import assemble
from reconverge.golden.functional import LaunchConfig, RunResult, run
from reconverge.golden.geometry import Geometry
from reconverge.golden.image import Image
from reconverge.golden.native import build
from reconverge.golden.native.kernel import CodeTable
from reconverge.golden.semantics import ALU_OPS
from reconverge.golden.testing.randprog import programs, render
from reconverge.kernels import suite

EXIT = "li a7, 93\n    ecall\n"


def assert_same(reference: RunResult, compiled: RunResult) -> None:
    assert type(compiled.fault) is type(reference.fault)
    assert str(compiled.fault) == str(reference.fault)
    assert compiled.warp_instructions == reference.warp_instructions
    assert np.array_equal(compiled.exit_codes, reference.exit_codes)
    assert np.array_equal(compiled.thread_instructions, reference.thread_instructions)
    assert np.array_equal(compiled.exited, reference.exited)
    assert np.array_equal(compiled.memory.data, reference.memory.data)


def both(image: Image, config: LaunchConfig) -> RunResult:
    """Run ``image`` on both engines, check they agree; the compiled run's result."""
    reference = run(image, config, engine="reference")
    compiled = run(image, config, engine="compiled")
    assert_same(reference, compiled)
    return compiled


def config_for(warp: int = 4, block: int = 4, grid: int = 1, **kw: object) -> LaunchConfig:
    geometry = Geometry(warp_size=warp, simd_width=min(4, warp))
    return LaunchConfig(grid=grid, block=block, geometry=geometry, **kw)  # type: ignore[arg-type]


def test_the_compiled_engine_builds_on_this_machine() -> None:
    """CI's machine has a C compiler: the compiled loop is what ``auto`` runs there."""
    assert build.available()
    assert functional.choose_engine("auto") == "compiled"


@pytest.mark.parametrize("kernel", sorted(suite()))
@pytest.mark.parametrize("warp_size", [4, 32])
def test_suite_kernels_run_alike(
    kernel: str, warp_size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """...and the compiled loop runs them: with no progress reports, the reference issues
    nothing (none of these kernels uses lr.w / sc.w or faults)."""
    launch, case = suite()[kernel].launch()
    geometry = Geometry(warp_size=warp_size, simd_width=4)
    config = launch.config(case.grid, case.block, geometry=geometry)
    reference = run(launch.image, config, engine="reference")
    issued = []
    issue = functional._Warp.issue

    def counted(warp: functional._Warp) -> tuple[int, np.ndarray]:
        issued.append(warp.index)
        return issue(warp)

    monkeypatch.setattr(functional._Warp, "issue", counted)
    compiled = run(launch.image, config, engine="compiled")
    assert_same(reference, compiled)
    assert compiled.fault is None
    assert not issued


def test_a_64_wide_warp_runs_alike() -> None:
    launch, case = suite()["interpreter"].launch(size=128)
    geometry = Geometry(warp_size=64, simd_width=8)
    both(launch.image, launch.config(case.grid, case.block, geometry=geometry)).check()


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    program=programs(),
    warp=st.sampled_from([4, 8, 16]),
    block=st.integers(1, 24),
    grid=st.integers(1, 2),
)
def test_random_programs_run_alike(program: object, warp: int, block: int, grid: int) -> None:
    """Divergence, loops with break and continue, jump tables, calls, recursion, early exits,
    barriers, AMOs and lr.w / sc.w loops (stores while reservations are held)."""
    image = assemble(render(program), "random.S")  # type: ignore[arg-type]
    both(image, config_for(warp, block, grid, step_limit=200_000)).check()


# ----------------------------------------------------------------------------------------------
# Operands: every arithmetic operation, load and store on random values per lane

WORDS = st.one_of(
    st.sampled_from([0, 1, 2, 31, 32, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFE]),
    st.integers(0, 0xFFFFFFFF),
)
IMMEDIATE_OPS = ("addi", "slti", "sltiu", "xori", "ori", "andi", "slli", "srli", "srai")


@st.composite
def arithmetic(draw: st.DrawFn) -> str:
    """A program whose lanes each compute random operations on per-lane operands (a + tid * c)
    and store every result."""
    lines = []
    for i in range(draw(st.integers(1, 12))):
        a, b, c = draw(WORDS), draw(WORDS), draw(WORDS)
        lines += [f"li t0, {a}", f"li t1, {b}", f"li t2, {c}", "mul t2, t2, s0", "add t0, t0, t2"]
        if draw(st.booleans()):
            lines.append(f"{draw(st.sampled_from(sorted(ALU_OPS)))} t3, t0, t1")
        else:
            op = draw(st.sampled_from(IMMEDIATE_OPS))
            imm = draw(
                st.integers(0, 31) if op in ("slli", "srli", "srai") else st.integers(-2048, 2047)
            )
            lines.append(f"{op} t3, t0, {imm}")
        lines.append(f"sw t3, {4 * i}(s1)")
    return "\n    ".join(lines)


@st.composite
def memory_ops(draw: st.DrawFn) -> str:
    """Random stores of every size into a buffer, then loads of every size and sign."""
    lines = []
    for _ in range(draw(st.integers(1, 10))):
        size, op = draw(st.sampled_from([(1, "sb"), (2, "sh"), (4, "sw")]))
        offset = draw(st.integers(0, 60 // size)) * size
        lines += [f"li t0, {draw(WORDS)}", "add t0, t0, s0", f"{op} t0, {offset}(s2)"]
    for i in range(draw(st.integers(1, 10))):
        size, op = draw(st.sampled_from([(1, "lb"), (1, "lbu"), (2, "lh"), (2, "lhu"), (4, "lw")]))
        offset = draw(st.integers(0, 60 // size)) * size
        lines += [f"{op} t1, {offset}(s2)", f"sw t1, {4 * i}(s1)"]
    return "\n    ".join(lines)


def operand_program(body: str) -> str:
    """``body`` with s0 = tid, s1 = this thread's 64 output words, s2 = a 64-byte buffer (in
    global, shared or local memory by thread)."""
    return f"""
_start:
    csrr s0, tid
    la   s1, out
    slli t0, s0, 6
    add  s1, s1, t0
    andi t0, s0, 3
    li   s2, 0x40000000          # shared memory
    beqz t0, 1f
    addi s2, sp, -64             # local memory
    li   t1, 1
    beq  t0, t1, 1f
    la   s2, buffer              # global memory
    add  s2, s2, s1
    la   t1, out
    sub  s2, s2, t1
1:
    {body}
    li a0, 0
    {EXIT}
    .data
out:    .space 4096
buffer: .space 4096
"""


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(body=st.one_of(arithmetic(), memory_ops()), warp=st.sampled_from([4, 16]))
def test_random_operands_compute_alike(body: str, warp: int) -> None:
    both(assemble(operand_program(body), "operands.S"), config_for(warp, block=16)).check()


# ----------------------------------------------------------------------------------------------
# Faults: the compiled loop stops before the faulting instruction and the reference raises it

FAULTS = {
    "misaligned load": "li t0, 0x80000001\n    lw t1, 0(t0)",
    "misaligned store in one lane": "csrr t0, tid\n    la t1, out\n    add t1, t1, t0\n"
    "    sw t0, 0(t1)",
    "unmapped store past shared": "csrr t0, tid\n    slli t0, t0, 14\n    li t1, 0x40000000\n"
    "    add t1, t1, t0\n    sw t0, 0(t1)",
    "misaligned amo": "la t0, out\n    addi t0, t0, 2\n    amoadd.w t1, t0, (t0)",
    "illegal word": ".word 0xffffffff",
    "csr write": "csrw tid, t0",
    "unknown csr": "csrr t0, 0xcc7",
    "unknown syscall": "li a7, 64\n    ecall",
    "ebreak": "ebreak",
    "fetch outside global memory": "li t0, 0x10\n    jr t0",
    "misaligned jump": "li t0, 0x80000002\n    jalr t0",
    "barrier after an early exit": "csrr t0, tid\n    bnez t0, 1f\n    li a0, 0\n    "
    + EXIT
    + "1:\n    bar",
    "endless loop": "1:\n    j 1b",
}


@pytest.mark.parametrize("name", FAULTS)
@pytest.mark.parametrize("block", [4, 8])
def test_every_fault_is_the_references(name: str, block: int) -> None:
    source = f"""
_start:
    li   s0, 5
1:  addi s0, s0, -1              # some work first, on the compiled loop
    bnez s0, 1b
    {FAULTS[name]}
    li a0, 0
    {EXIT}
    .data
out: .space 64
"""
    result = both(assemble(source, "fault.S"), config_for(block=block, step_limit=500))
    assert result.fault is not None


def test_stores_into_code_are_executed() -> None:
    """The decoded entry of a word is stale once the word is written: the next fetch decodes
    the new word (the instruction at ``patch`` adds 1 on the first pass, 100 on the second)."""
    source = f"""
_start:
    li   a0, 0
    li   s0, 2
loop:
patch:
    addi a0, a0, 1
    la   t0, patch
    lw   t1, template
    sw   t1, 0(t0)
    addi s0, s0, -1
    bnez s0, loop
    la   t0, out
    csrr t1, tid
    slli t1, t1, 2
    add  t0, t0, t1
    sw   a0, 0(t0)
    li   a0, 0
    {EXIT}
template:
    addi a0, a0, 100
    .data
out: .space 64
"""
    image = assemble(source, "patch.S")
    result = both(image, config_for(block=4)).check()
    assert result.memory.read_words(image.symbols["out"], 4).tolist() == [101] * 4
    both(image, config_for(block=8)).check()  # a second warp runs the patched word first


def test_progress_reports_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(functional, "EVERY", 97)
    launch, case = suite()["bfs"].launch()
    config = launch.config(case.grid, case.block, geometry=Geometry(8, 4))
    reports: dict[str, list[tuple[int, int]]] = {}
    for engine in ("reference", "compiled"):
        seen = reports[engine] = []
        run(launch.image, config, progress=lambda *a, seen=seen: seen.append(a), engine=engine)
    assert reports["compiled"] == reports["reference"]
    assert len(reports["compiled"]) > 3


def test_engines_are_named_and_the_observer_needs_the_reference() -> None:
    image = assemble(f"_start:\n    li a0, 0\n    {EXIT}", "exit.S")
    with pytest.raises(ValueError, match="engine 'fast' is not one of auto, compiled, reference"):
        run(image, config_for(), engine="fast")
    with pytest.raises(ValueError, match="calls no observer"):
        run(image, config_for(), observer=lambda *_: None, engine="compiled")
    seen: list[int] = []
    run(image, config_for(), observer=lambda _b, _w, pc, *_: seen.append(pc)).check()
    assert len(seen) == 3  # auto with an observer: the reference, every instruction


def test_a_fresh_cache_builds_the_library_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    monkeypatch.setenv("RECONVERGE_CACHE", str(tmp_path))
    library = build.build()
    assert library.parent == build.cache_dir() and library.is_file()
    built = library.stat().st_mtime_ns
    assert build.build() == library and library.stat().st_mtime_ns == built  # cached
    assert [p.name for p in library.parent.iterdir()] == [library.name]  # no leftovers
    _uncached()
    assert build.available()  # loads that library


def test_a_missing_compiler_is_a_clear_error_and_auto_falls_back(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    monkeypatch.setenv("RECONVERGE_CACHE", str(tmp_path))
    monkeypatch.setenv("CC", "/nonexistent/cc")
    _uncached()  # the library this process loaded before
    with pytest.raises(
        build.NativeUnavailable, match="cannot run the C compiler '/nonexistent/cc'"
    ):
        build.build()
    with pytest.raises(build.NativeUnavailable, match="cannot run the C compiler"):
        functional.choose_engine("compiled")
    assert functional.choose_engine("auto") == "reference"
    monkeypatch.setenv("CC", "cc -include /nonexistent.h")  # runs, but fails
    with pytest.raises(build.NativeUnavailable, match=r"compiling block\.c failed"):
        build.build()
    monkeypatch.setenv("CC", "cc")
    monkeypatch.setenv("RECONVERGE_CACHE", "/proc/reconverge")  # cannot be written
    with pytest.raises(build.NativeUnavailable, match="cannot build in /proc/reconverge/native"):
        build.build()


@pytest.fixture(autouse=True)
def _fresh_library_after_each_test() -> object:
    """The library is looked up once per process: forget a lookup made under a test's
    environment."""
    yield
    _uncached()


def _uncached() -> None:
    build.load.cache_clear()
    build.available.cache_clear()


def test_code_table_decodes_lazily_and_marks_what_the_reference_executes() -> None:
    source = (
        "_start:\n    csrr t0, tid\n    csrw tid, t0\n    .word 0xffffffff\n    lr.w t0, (t0)\n"
    )
    image = assemble(source, "table.S")
    memory = run(image, config_for(), engine="reference").memory
    table = CodeTable(memory)
    entries = []
    for i in range(4):
        table.fill(image.entry + 4 * i)
        entries.append(table.entries[(image.entry - memory.base) // 4 + i])
    assert [int(e["op"]) for e in entries] == [
        build.OP_CSR_READ, build.OP_PYTHON, build.OP_PYTHON, build.OPS["lr.w"]
    ]  # fmt: skip
    assert int(entries[0]["imm"]) == 0  # tid: the first row of the CSR table
    assert not table.entries["valid"][(image.entry - memory.base) // 4 + 4 :].any()
