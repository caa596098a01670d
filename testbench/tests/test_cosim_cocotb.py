"""The co-simulation's cocotb plumbing on Icarus Verilog, and a tiny program on the SM.

The plumbing (job file, reset, instruction-store load, launch, memory port, trace and exit
events, status counters, watchdog, results, comparison) is tested with a test-only Verilog
module written here: it has the SM's port list (docs/sm-hardware.md, "Ports of SM"), checks
what the testbench loads and launches, and plays a fixed little script (trace events, one store
and one load through the data port, an exit event, done). The script is golden's run of a tiny
program, so a faithful transport reaches agreement level 4, and every deliberate deviation is
reported at its level. The suite on the SM: test_cosim_sm.py.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from reconverge.golden.asm import assemble
from reconverge.golden.blocks.divergence import NEVER
from reconverge.golden.blocks.units import sm_unit
from reconverge.golden.faults import FaultCode
from reconverge.golden.functional import LaunchConfig
from reconverge.golden.image import Image
from reconverge.golden.isa import IllegalInstruction, decode
from reconverge.golden.memmap import GLOBAL_BASE
from reconverge.golden.params import COSIM, SMParams
from reconverge.golden.policies import variant
from reconverge.golden.sm.core import IssueRecord, SMResult
from reconverge.golden.sm.program import Program
from reconverge.golden.sm.run import run_sm
from reconverge.testbench import build as build_module
from reconverge.testbench.amaranth_sim import run_simulator
from reconverge.testbench.build import Design, build, longest_statement
from reconverge.testbench.cosim import METRICS, CosimReport, cosim, metrics_json
from reconverge.testbench.cosim_plan import COSIM_GEOMETRY, build_group
from reconverge.testbench.memory_model import Backpressure
from reconverge.testbench.rtl import instruction_store, launch_args, loaded_entries

TINY = """
    .text
    .globl _start
_start:
    la      t0, data
    li      t1, 0x1234567
    bnez    t1, 1f
    nop
1:  sw      t1, 4(t0)
    lw      a0, 4(t0)
    li      a7, 93
    ecall
    .data
    .align  4
data:
    .word   0x11111111, 0
"""
STORED = 0x1234567
LAUNCH = LaunchConfig(1, 2, args=(7, 0xFFFF_FFFF))
FAULT_FIELDS = ("pc", "block", "thread")
KINDS = {"trace": 1, "store": 2, "load": 3, "wait": 4, "exit": 5, "done": 6, "fault": 7, "hang": 8}


@dataclass
class Step:
    kind: str
    fields: dict[str, int] = field(default_factory=dict)


@dataclass
class Script:
    """What the mock checks (instruction-store entries by index, how many entries are loaded,
    launch inputs) and plays."""

    steps: list[Step]
    checks: dict[int, tuple[int, int]]
    loads: int
    launch: dict[str, int]
    counters: dict[str, int]


def _select(width: int, steps: list[Step], key: str, kinds: tuple[str, ...]) -> str:
    """A Verilog expression: the field ``key`` of the current step if its kind is one of
    ``kinds``, else 0."""
    arms = [
        f"(step == 16'd{i}) ? {width}'h{s.fields[key]:x}"
        for i, s in enumerate(steps)
        if s.kind in kinds and key in s.fields
    ]
    return " : ".join([*arms, f"{width}'h0"])


def _chain(name: str, width: int, steps: list[Step], key: str, kinds: tuple[str, ...]) -> str:
    return f"    assign {name} = {_select(width, steps, key, kinds)};"


def mock_verilog(params: SMParams, script: Script) -> str:
    """A module ``sm`` with the SM's ports that plays ``script`` (test only)."""
    g = params.geometry
    w, lb = g.warp_size, params.config.line_bytes
    ports = [
        ("input", 1, "clk"), ("input", 1, "rst"),
        ("input", 1, "load__valid"), ("input", params.imem_bits, "load__addr"),
        ("input", 32, "load__word"), ("input", 32, "load__rpc"),
        ("input", 1, "launch__start"), ("input", 32, "launch__grid"),
        ("input", 32, "launch__block"), ("input", 32, "launch__entry"),
        ("input", 32, "launch__gp"), ("input", 256, "launch__args"),
        ("output", 1, "mem__req_valid"), ("input", 1, "mem__req_ready"),
        ("output", 32, "mem__req_addr"), ("output", 2, "mem__req_op"),
        ("output", 5, "mem__req_amo"), ("output", lb, "mem__req_be"),
        ("output", 8 * lb, "mem__req_wdata"), ("input", 1, "mem__resp_valid"),
        ("input", 8 * lb, "mem__resp_rdata"),
        ("output", 1, "trace__valid"), ("output", 32, "trace__cycle"),
        ("output", params.warp_bits, "trace__slot"), ("output", 32, "trace__block"),
        ("output", 8, "trace__warp"), ("output", sm_unit(params).sid_bits, "trace__sid"),
        ("output", 32, "trace__pc"), ("output", w, "trace__mask"), ("output", 8, "trace__passes"),
        ("output", 1, "exit__valid"), ("output", 32, "exit__block"), ("output", 8, "exit__warp"),
        ("output", w, "exit__mask"), ("output", 32 * w, "exit__codes"),
        ("output", 1, "status__running"), ("output", 1, "status__done"),
        ("output", 1, "status__fault"), ("output", 4, "status__fault_code"),
        ("output", 32, "status__fault_pc"), ("output", 32, "status__fault_block"),
        ("output", 32, "status__fault_thread"), ("output", 32, "status__cycles"),
        ("output", 32, "status__idle_cycles"), ("output", 32, "status__transactions"),
        ("output", 32, "status__shared_cycles"), ("output", 32, "status__bank_conflicts"),
        ("output", 32, "status__stalls"),
    ]  # fmt: skip
    decl = ",\n".join(f"    {d} wire [{n - 1}:0] {name}" for d, n, name in ports)
    steps = script.steps
    kind = [f"(step == 16'd{i}) ? 4'd{KINDS[s.kind]}" for i, s in enumerate(steps)]
    loads = " || ".join(
        f"(load__addr == {params.imem_bits}'d{i} && (load__word != 32'h{word:x} || "
        f"load__rpc != 32'h{rpc:x}))"
        for i, (word, rpc) in script.checks.items()
    )
    launch_ok = " && ".join([f"loads == 32'd{script.loads}"] + [
        f"launch__{k} == {256 if k == 'args' else 32}'h{v:x}" for k, v in script.launch.items()
    ])  # fmt: skip
    trace = (
        ("cycle", 32),
        ("slot", params.warp_bits),
        ("block", 32),
        ("warp", 8),
    )
    trace += ("sid", sm_unit(params).sid_bits), ("pc", 32), ("mask", w), ("passes", 8)
    lines = [
        f"module sm (\n{decl}\n);",
        "    reg [15:0] step; reg running, done, fault, bad; reg [31:0] word, stalls, loads;",
        "    wire [3:0] kind = " + " : ".join([*kind, "4'd8"]) + ";",
        "    wire active = running & ~bad;",
        "    wire is_req = kind == 4'd2 || kind == 4'd3;",
        "    wire advance = active & (kind == 4'd1 || kind == 4'd5 || (is_req & mem__req_ready)"
        " || (kind == 4'd4 & mem__resp_valid));",
        "    wire stall = active & ((is_req & ~mem__req_ready)"
        " | (kind == 4'd4 & ~mem__resp_valid));",
        f"    wire load_bad = load__valid && ({loads});",
        f"    wire launch_ok = {launch_ok};",
        f"    wire [7:0] wait_word = {_select(8, steps, 'word', ('wait',))};",
        "    always @(posedge clk) begin",
        "        if (rst) begin",
        "            step <= 0; running <= 0; done <= 0; fault <= 0; bad <= 0; word <= 0;",
        "            stalls <= 0; loads <= 0;",
        "        end else begin",
        "            if (load_bad) bad <= 1;",
        "            if (load__valid) loads <= loads + 1;",
        "            if (launch__start) begin running <= 1; if (!launch_ok) bad <= 1; end",
        "            if (running & bad) begin fault <= 1; running <= 0; end",
        "            if (advance) step <= step + 1;",
        "            if (stall) stalls <= stalls + 1;",
        "            if (active & kind == 4'd4 & mem__resp_valid)",
        "                word <= mem__resp_rdata >> (32 * wait_word);",
        "            if (active & kind == 4'd6) begin done <= 1; running <= 0; end",
        "            if (active & kind == 4'd7) begin fault <= 1; running <= 0; end",
        "        end",
        "    end",
        "    assign trace__valid = active & kind == 4'd1;",
        *(_chain(f"trace__{n}", b, steps, n, ("trace",)) for n, b in trace),
        "    assign mem__req_valid = active & is_req;",
        "    assign mem__req_op = kind == 4'd2 ? 2'd1 : 2'd0;",
        "    assign mem__req_amo = 5'd0;",
        _chain("mem__req_addr", 32, steps, "addr", ("store", "load")),
        _chain("mem__req_be", lb, steps, "be", ("store",)),
        _chain("mem__req_wdata", 8 * lb, steps, "wdata", ("store",)),
        "    assign exit__valid = active & kind == 4'd5;",
        _chain("exit__block", 32, steps, "block", ("exit",)),
        _chain("exit__warp", 8, steps, "warp", ("exit",)),
        _chain("exit__mask", w, steps, "mask", ("exit",)),
        f"    assign exit__codes = {{{w}{{word}}}};",
        "    assign status__running = running;",
        "    assign status__done = done;",
        "    assign status__fault = fault;",
        "    assign status__fault_code = bad ? 4'd15 : "
        + _chain("", 4, steps, "code", ("fault",)).split("= ", 1)[1],
        *(
            _chain(f"status__fault_{n}", 32, steps, n, ("fault",))
            for n in ("pc", "block", "thread")
        ),
        *(f"    assign status__{n} = 32'd{v};" for n, v in script.counters.items()),
        "    assign status__stalls = stalls;",
        "endmodule",
    ]
    return "\n".join(lines) + "\n"


def mock_design(params: SMParams, script: Script) -> Design:
    text = mock_verilog(params, script)
    digest = hashlib.sha256(text.encode()).hexdigest()
    return Design("sm", f"mock-{digest[:16]}", digest, lambda: text)


def tiny(params: SMParams = COSIM) -> tuple[Image, LaunchConfig, SMResult]:
    """The tiny program, its launch on ``params`` and golden's run of it."""
    image = assemble(TINY, "tiny.S")
    launch = replace(LAUNCH, geometry=params.geometry, memmap=params.memmap)
    return image, launch, run_sm(image, launch, params.config, trace=True)


def _word(image: Image, pc: int) -> int:
    word = image.read_word(pc)
    assert word is not None
    return word


def golden_script(params: SMParams = COSIM) -> Script:
    """The mock's script from golden's run of the tiny program: its issue records, the
    store and load of ``data + 4`` as line requests, the exit of both threads, golden's
    counters; and the values the testbench must load and launch, from the image itself."""
    image, launch, golden = tiny(params)
    assert golden.metrics is not None and golden.fault is None
    width, line_bytes = params.geometry.warp_size, params.config.line_bytes
    per_block = -(-launch.block // width)
    addr = image.symbols["data"] + 4
    line, offset = addr - addr % line_bytes, addr % line_bytes
    steps = []
    for r in golden.trace:
        block, warp = divmod(r.warp, per_block)
        steps.append(Step("trace", {"cycle": r.cycle, "slot": r.warp, "block": block,
                                    "warp": warp, "sid": r.split, "pc": r.pc, "mask": r.mask,
                                    "passes": r.passes}))  # fmt: skip
        name = decode(_word(image, r.pc)).name
        if name == "sw":
            steps.append(
                Step("store", {"addr": line, "be": 0xF << offset, "wdata": STORED << 8 * offset})
            )
        elif name == "lw":
            steps += [Step("load", {"addr": line}), Step("wait", {"word": offset // 4})]
        elif name == "ecall":
            steps.append(Step("exit", {"block": block, "warp": warp, "mask": r.mask}))
    steps.append(Step("done"))
    branch = next(pc for pc in range(image.entry, image.entry + 40, 4)
                  if decode(_word(image, pc)).name == "bne")  # fmt: skip
    target = branch + decode(_word(image, branch)).imm  # bnez t1, 1f: both paths reach 1f
    index = (branch - GLOBAL_BASE) // 4
    last = (image.symbols["data"] - GLOBAL_BASE) // 4  # the last word that is not 0: data[0]
    checks = {
        0: (_word(image, image.entry), 0xFFFF_FFFF),
        index: (_word(image, branch), target),
        last: (0x11111111, 0xFFFF_FFFF),
    }
    args = sum(a << 32 * i for i, a in enumerate(LAUNCH.args))
    counters = golden.metrics.counters
    return Script(
        steps,
        checks,
        last + 1,
        {"grid": 1, "block": 2, "entry": image.entry, "gp": 0, "args": args},
        {
            "cycles": golden.metrics.cycles,
            "idle_cycles": golden.metrics.idle_cycles,
            "transactions": counters.memory_transactions,
            "shared_cycles": counters.shared_transactions,
            "bank_conflicts": counters.bank_conflicts,
        },
    )


def run_mock(script: Script, **options: object) -> CosimReport:
    image, _, _ = tiny()
    return cosim(image, LAUNCH, COSIM, design=mock_design(COSIM, script), **options)  # type: ignore[arg-type]


@pytest.mark.rtl
def test_faithful_mock_reaches_level_4() -> None:
    """A DUT that emits exactly golden's events through the ports reaches level 4: the load
    port carried the instruction store and its RPCs, the launch inputs their values (the mock
    checks both and faults otherwise), the store and the load went through the memory model,
    the exit codes are the loaded word, and the counters arrive as the RTL metrics."""
    report = run_mock(golden_script())
    assert report.run.stopped == "done", report.run.message
    assert (report.reached, report.difference) == (4, None)
    assert report.ok
    assert metrics_json(report.rtl.metrics) == metrics_json(report.golden.metrics)
    image, _, _ = tiny()
    assert int(report.rtl.memory.read_words(image.symbols["data"] + 4, 1)[0]) == STORED
    assert report.rtl.exit_codes.tolist() == [[STORED, STORED]]
    assert report.run.counters["stalls"] == 0
    assert report.to_json()["rtl"]["stalls"] == 0
    assert "level 4 reached" in report.format()


@pytest.mark.rtl
@pytest.mark.parametrize("seed", [1, 2])
def test_backpressure_stalls_but_agrees(seed: int) -> None:
    """With a memory that drops req_ready and answers late, the DUT stalls (its stall counter
    counts the cycles it waited) and still agrees: stalls are excluded from the SM's cycles."""
    report = run_mock(golden_script(), backpressure=Backpressure(0.3, 4, seed))
    assert report.reached == 4, report.difference
    assert report.run.counters["stalls"] > 0
    assert report.run.clocks > len(golden_script().steps)


def _mutate(script: Script, index: int, **changes: int) -> Script:
    steps = list(script.steps)
    steps[index] = Step(steps[index].kind, {**steps[index].fields, **changes})
    return replace(script, steps=steps)


def _trace_steps(script: Script) -> list[int]:
    return [i for i, s in enumerate(script.steps) if s.kind == "trace"]


@pytest.mark.rtl
@pytest.mark.parametrize(
    ("change", "reached"), [("pc", 1), ("sid", 2), ("cycle", 3)], ids=["pc", "sid", "cycle"]
)
def test_deviating_trace_is_reported_at_its_level(change: str, reached: int) -> None:
    """One trace event differs from golden in its pc (a thread's path: level 2), split (a
    warp's issue stream: level 3) or cycle (level 4): the report reaches the level below and
    names that event on both sides."""
    script = golden_script()
    position = 3
    index = _trace_steps(script)[position]
    fields = script.steps[index].fields
    changed = fields[change] ^ (4 if change == "pc" else 1)
    report = run_mock(_mutate(script, index, **{change: changed}))
    difference = report.difference
    assert report.reached == reached and difference is not None
    assert difference.level == reached + 1
    assert difference.cycle == fields["cycle"] or change == "cycle"
    golden_record = report.golden.trace[position]
    assert difference.golden == golden_record.to_json()
    assert (
        difference.rtl is not None
        and difference.rtl[{"pc": "pc", "sid": "split", "cycle": "cycle"}[change]] == changed
    )
    assert not report.ok


@pytest.mark.rtl
def test_wrong_store_enables_differ_at_level_1() -> None:
    """A store that writes three bytes instead of four: the load returns another word, so the
    exit codes differ (level 1), named by block and thread with each side's code."""
    script = golden_script()
    index = next(i for i, s in enumerate(script.steps) if s.kind == "store")
    be = script.steps[index].fields["be"]
    report = run_mock(_mutate(script, index, be=be & (be << 1)))
    assert report.reached == 0 and report.difference is not None
    assert report.difference.what == "block 0 thread 0 exits differently"
    assert report.difference.golden["exit_code"] == STORED
    assert report.difference.rtl["exit_code"] == STORED & ~0xFF  # byte 0 keeps its 0


@pytest.mark.rtl
@pytest.mark.parametrize("what", ["imem word", "imem rpc", "imem entries", "launch"])
def test_mock_checks_what_the_testbench_loads(what: str) -> None:
    """The mock faults (FaultCode.INTERNAL) when the load port or the launch inputs carry
    other values than it expects, or another number of entries is loaded: so the faithful run
    above proves they were right, and the fault travels through the status port into a level-1
    difference."""
    script = golden_script()
    checks = dict(script.checks)
    launch = dict(script.launch)
    loads = script.loads
    index = next(i for i, (_, rpc) in checks.items() if rpc != 0xFFFF_FFFF)
    word, rpc = checks[index]
    if what == "imem word":
        checks[index] = (word ^ 1, rpc)
    elif what == "imem rpc":
        checks[index] = (word, rpc + 4)
    elif what == "imem entries":
        loads += 1
    else:
        launch["args"] ^= 1 << 32  # a1
    report = run_mock(replace(script, checks=checks, launch=launch, loads=loads))
    assert report.run.stopped == "fault"
    assert report.reached == 0 and report.difference is not None
    assert report.difference.what == "the faults differ"
    assert report.difference.rtl["kind"] == FaultCode.INTERNAL.kind
    assert report.difference.golden is None


@pytest.mark.rtl
def test_watchdog_names_the_last_issue() -> None:
    """A DUT that never completes is stopped by the cycle watchdog with a message naming the
    last issue; the report fails at level 1."""
    script = golden_script()
    steps = [*script.steps[:5], Step("hang")]
    report = run_mock(replace(script, steps=steps), max_cycles=200)
    last = steps[4].fields
    assert report.run.stopped == "watchdog"
    assert f"pc {last['pc']:#010x}" in report.run.message
    assert "no completion within 200 cycles" in report.run.message
    assert report.reached == 0 and report.difference is not None
    assert report.difference.what.startswith("the RTL did not finish: watchdog")


@pytest.mark.rtl
def test_broken_memory_request_stops_with_an_error() -> None:
    """A request that breaks the memory contract (an address that is not line-aligned) stops
    the run with a message saying so, never a hang or a silently wrong memory."""
    script = golden_script()
    index = next(i for i, s in enumerate(script.steps) if s.kind == "store")
    report = run_mock(_mutate(script, index, addr=script.steps[index].fields["addr"] + 4))
    assert report.run.stopped == "error"
    assert "not line-aligned" in report.run.message
    assert report.reached == 0


@pytest.mark.rtl
def test_waves_are_recorded(tmp_path: Path) -> None:
    """``waves=FILE.fst`` records an FST waveform of the run."""
    waves = tmp_path / "run.fst"
    report = run_mock(golden_script(), waves=waves)
    assert report.reached == 4
    assert waves.exists() and waves.stat().st_size > 0


@pytest.mark.rtl
@pytest.mark.usefixtures("verilator")
def test_verilator_runs_the_same_plumbing(tmp_path: Path) -> None:
    """The same faithful script under Verilator, with a VCD waveform and a stalling memory:
    level 4, the stalls counted, the port names readable in the waveform."""
    waves = tmp_path / "run.vcd"
    report = run_mock(golden_script(), sim="verilator", waves=waves,
                      backpressure=Backpressure(0.3, 4, 1))  # fmt: skip
    assert report.reached == 4, report.difference
    assert report.run.counters["stalls"] > 0
    assert "trace__pc" in waves.read_text()


@pytest.mark.rtl
@pytest.mark.usefixtures("verilator")
def test_verilator_runtime_is_compiled_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two designs built with the same options: the first compiles Verilator's run-time
    library and keeps it, the second links that copy (its log shows no run-time source) and
    runs."""
    monkeypatch.setenv("RECONVERGE_BUILD", str(tmp_path))
    logs = []
    for width in (1, 2):
        text = f"module sm(input clk, output [{width - 1}:0] q); assign q = 0; endmodule\n"
        _, directory = build(Design("sm", f"counter{width}", text, lambda t=text: t), "verilator")
        assert (directory / "sm").exists()
        logs.append((directory / "build.log").read_text())
    assert "include/verilated.cpp" in logs[0]
    assert "verilated.cpp" not in logs[1] and "verilator.cpp" in logs[1]
    (kept,) = (tmp_path / "cosim" / "verilator-runtime").iterdir()
    assert {"verilated.o", "verilated_vpi.o", "verilated_threads.o"} <= {
        f.name for f in kept.iterdir()
    }


def test_longest_statement_counts_the_every_cycle_code(tmp_path: Path) -> None:
    """The longest run of lines that ends no statement or block, over the every-cycle files
    (``__Slow`` files, run once and compiled unoptimised anyway, do not count)."""
    (tmp_path / "Vtop___024root__0.cpp").write_text(
        "void f() {\n    a = (b\n         | c\n         | d);\n    e = 1;\n}\n"
    )
    (tmp_path / "Vtop___024root__0__Slow.cpp").write_text("x = (\n" * 50 + "0);\n")
    (tmp_path / "Vtop.cpp").write_text("y = (\n" * 50 + "0);\n")
    assert longest_statement(tmp_path) == 3


#: The model's own C++ (a small model is one ``__ALL`` file), not Verilator's run-time library.
MODEL_SOURCES = (" Vtop.cpp", " Vtop__ALL.cpp")


@pytest.mark.rtl
@pytest.mark.usefixtures("verilator")
def test_a_model_with_a_long_statement_is_compiled_unoptimised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The optimisation follows the longest statement: a tiny design (its statements of one
    line) is compiled at -O1, and with the threshold below its longest at -O0; both run."""
    monkeypatch.setenv("RECONVERGE_BUILD", str(tmp_path))
    flags = []
    for name, threshold in (("quick", 10_000), ("unoptimised", 0)):
        monkeypatch.setattr(build_module, "LONG_STATEMENT_LINES", threshold)
        text = "module sm(input clk, input [3:0] a, output [3:0] q); assign q = a + 1; endmodule\n"
        _, directory = build(Design("sm", name, text, lambda t=text: t), "verilator")
        assert (directory / "sm").exists()
        log = (directory / "build.log").read_text()
        model = [line for line in log.splitlines() if line.endswith(MODEL_SOURCES)]
        flags.append({flag for flag in ("-O0", "-O1") for line in model if f"c++ {flag} " in line})
    assert flags == [{"-O1"}, {"-O0"}]


# ----------------------------------------------------------------------------------------------
# End to end on the SM of hdl/sm/top.py


@pytest.mark.rtl
@pytest.mark.xdist_group(build_group(COSIM_GEOMETRY, variant("sps"), False))
def test_tiny_program_on_the_sm_with_backpressure() -> None:
    """The tiny program (a store, a load, a branch, exit codes) on the SM, once with block-RAM
    timing and once with a stalling memory: both reach level 3 or better, and with the stalls
    excluded, the issue cycles are the same."""
    image, _, _ = tiny()
    plain = cosim(image, LAUNCH, COSIM, level=3)
    stalled = cosim(image, LAUNCH, COSIM, level=3, backpressure=Backpressure(0.5, 2, 0))
    assert plain.ok and stalled.ok, (plain.format(), stalled.format())
    assert [r.cycle for r in plain.rtl.trace] == [r.cycle for r in stalled.rtl.trace]


def test_instruction_store_of_the_tiny_program() -> None:
    """The store: the image's words, NEVER for every non-control word, the branch's
    postdominator as its RPC (worked out from its target here), (0, NEVER) past the image. The
    testbench loads it up to the image's last non-zero word (data[0]); what it leaves out is
    word 0, which is no instruction, so its RPC (NEVER, or 0 after reset) is never read."""
    image, _, _ = tiny()
    store = instruction_store(Program(image), COSIM)
    script = golden_script()
    assert len(store) == COSIM.imem_words
    for index, expected in script.checks.items():
        assert store[index] == expected
    loaded = loaded_entries(store)
    assert loaded == store[: script.loads]
    assert set(store[script.loads :]) == {(0, NEVER)}
    with pytest.raises(IllegalInstruction):
        decode(0)
    assert loaded_entries([(0, NEVER)] * 4) == ()
    assert loaded_entries([(0, NEVER), (0, 8), (0, NEVER)]) == ((0, NEVER), (0, 8))
    assert launch_args(LAUNCH) == (7, 0xFFFF_FFFF, 0, 0, 0, 0, 0, 0)
    assert set(METRICS) <= set(metrics_json(tiny()[2].metrics))


def test_an_entry_not_loaded_holds_zeros() -> None:
    """The premise of :func:`loaded_entries`: the SM's instruction store (hdl/sm/fetch.py)
    holds (0, 0) in every entry the load port did not write, and the loaded ones as written."""
    from amaranth.hdl import ClockDomain, Module
    from amaranth.sim import Simulator

    from reconverge.hdl.sm.fetch import Fetch

    params = replace(COSIM, geometry=replace(COSIM.geometry, warps=1), imem_words=16)
    fetch = Fetch(params)
    top = Module()
    top.domains.sync = ClockDomain("sync")
    top.submodules.fetch = fetch
    sim = Simulator(top)
    sim.add_clock(1e-8)
    seen: dict[int, tuple[int, int]] = {}

    async def bench(ctx) -> None:  # type: ignore[no-untyped-def]
        ctx.set(fetch.load.valid, 1)
        ctx.set(fetch.load.addr, 3)
        ctx.set(fetch.load.word, 0x1234_5678)
        ctx.set(fetch.load.rpc, 0x8000_0040)
        await ctx.tick()
        ctx.set(fetch.load.valid, 0)
        for index in (2, 3, 15):
            # read the cycle it is asked for, in the buffer the cycle after that
            ctx.set(fetch.pc[0], GLOBAL_BASE + 4 * index)
            await ctx.tick().repeat(2)
            assert ctx.get(fetch.hit[0]), index
            ctx.set(fetch.rpc_index, index)
            word = ctx.get(fetch.buffer[0].word)
            await ctx.tick()
            seen[index] = (word, ctx.get(fetch.rpc))

    sim.add_testbench(bench)
    run_simulator(sim)
    assert seen == {2: (0, 0), 3: (0x1234_5678, 0x8000_0040), 15: (0, 0)}


__all__ = ["IssueRecord"]
