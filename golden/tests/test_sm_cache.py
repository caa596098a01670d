"""Golden's instruction and L1 data caches (docs/architecture.md, "Timing", rules 7-9; seed 002
Sec 5 and 6.4): the cache model against a plain reference on random access streams, the issue
cycles of small programs derived by hand from the rules, the metrics they feed, the hardware
SM's refusal of caches, and every policy computing the same with caches as without."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconverge.golden import cli
from reconverge.golden.asm import assemble
from reconverge.golden.config import Cache, Latencies, SMConfig
from reconverge.golden.functional import LaunchConfig
from reconverge.golden.geometry import Geometry
from reconverge.golden.memmap import GLOBAL_BASE
from reconverge.golden.params import CONFIGS, COSIM, EVAL, SYNTH, SMParams
from reconverge.golden.policies import Policy
from reconverge.golden.sm.cache import CacheModel
from reconverge.golden.sm.core import SMResult
from reconverge.golden.sm.metrics import mpki
from reconverge.golden.sm.run import run_sm
from reconverge.kernels.tests.test_suite_sm import CONFIGS as VARIANTS
from reconverge.kernels.tests.test_suite_sm import check

EXIT = "li   a7, 93\n    ecall\n"
W4 = Geometry(warp_size=4, simd_width=4, warps=2)  # one pass per instruction
#: The idealised pipeline (no execute or resolve stage), which keeps the derivations short.
IDEAL = {"execute": 0, "resolve": 0}


class ReferenceCache:
    """A set-associative LRU cache written plainly: per set a list of [line, arrival], least
    recently used first, and ``mshrs`` servers each free from a cycle (rules 7-9)."""

    def __init__(self, sets: int, ways: int, hit: int, miss: int, mshrs: int) -> None:
        self.sets: list[list[list[int]]] = [[] for _ in range(sets)]
        self.ways, self.hit, self.miss = ways, hit, miss
        self.mshr_free = [0] * mshrs

    def read(self, line: int, cycle: int) -> tuple[int, bool]:
        lines = self.sets[line % len(self.sets)]
        for entry in lines:
            if entry[0] == line:
                lines.remove(entry)
                lines.append(entry)
                return max(cycle + self.hit, entry[1]), False
        first = min(range(len(self.mshr_free)), key=lambda i: self.mshr_free[i])
        sent = max(cycle, self.mshr_free[first])
        self.mshr_free[first] = sent + self.miss
        if len(lines) == self.ways:
            lines.pop(0)
        lines.append([line, sent + self.miss])
        return sent + self.miss, True

    def write(self, line: int, keep: bool) -> None:
        lines = self.sets[line % len(self.sets)]
        for entry in lines:
            if entry[0] == line:
                lines.remove(entry)
                if keep:
                    lines.append(entry)
                return

    def contents(self) -> list[list[int]]:
        return [[line for line, _ in lines] for lines in self.sets]


ACCESS = st.tuples(
    st.sampled_from(["read", "read", "read", "global store", "local store"]),
    st.integers(0, 23),  # a line
    st.integers(0, 60),  # cycles since the previous access
)


@settings(max_examples=300, deadline=None)
@given(
    sets=st.sampled_from([1, 2, 3, 4]),
    ways=st.integers(1, 4),
    hit=st.integers(0, 4),
    miss=st.integers(1, 80),
    mshrs=st.integers(1, 3),
    accesses=st.lists(ACCESS, max_size=80),
)
def test_the_cache_agrees_with_a_plain_lru_reference(
    sets: int, ways: int, hit: int, miss: int, mshrs: int,
    accesses: list[tuple[str, int, int]],
) -> None:  # fmt: skip
    cache = CacheModel(Cache(sets * ways * 16, ways, 16, mshrs, hit), miss)
    reference = ReferenceCache(sets, ways, hit, miss, mshrs)
    cycle = 0
    for kind, line, gap in accesses:
        cycle += gap
        if kind == "read":
            assert cache.read(line, cycle) == reference.read(line, cycle), (kind, line, cycle)
        else:
            cache.write(line, keep=kind == "local store")
            reference.write(line, kind == "local store")
    assert [list(s) for s in cache.sets] == reference.contents()


def test_cache_sizes_must_fill_whole_sets() -> None:
    assert Cache(16 << 10, 4, 128, 2).sets == 32
    assert EVAL.config.icache == Cache(16 << 10, 4, 128, 2)
    assert EVAL.config.l1d is not None and EVAL.config.l1d.sets == 64
    for bad, says in (
        ({"size": 1000}, "must be a positive multiple of line x ways (128 x 4 = 512 bytes)"),
        ({"line_bytes": 96}, "must be a power of two"),
        ({"ways": 0}, "at least 1 way"),
        ({"mshrs": 0}, "1 MSHR"),
        ({"hit": -1}, "hit latency of at least 0"),
    ):
        with pytest.raises(ValueError, match=re.escape(says)):
            Cache(**{"size": 2048, "ways": 4, "line_bytes": 128, "mshrs": 2, **bad})
    with pytest.raises(ValueError, match="lines \\(128 bytes\\) must be the memory transactions'"):
        SMConfig(line_bytes=64, l1d=Cache(2048, 4, 128, 2, 3))
    with pytest.raises(ValueError, match="hit latency must be at least 1"):
        SMConfig(line_bytes=128, l1d=Cache(2048, 4, 128, 2, 0))


def test_the_hardware_sm_refuses_caches_and_the_cosim_machines_have_none() -> None:
    for params in (COSIM, SYNTH, CONFIGS["eval-tesla"]):
        assert isinstance(params, SMParams) and not params.config.cached
        assert params.hardware() is params
    assert EVAL.config.cached and not isinstance(EVAL, SMParams)
    hardware = EVAL.hardware()
    assert (hardware.geometry, hardware.config.latencies) == (EVAL.geometry, EVAL.config.latencies)
    assert not hardware.config.cached and "l1d" not in hardware.to_json()
    assert EVAL.to_json()["icache"] == {"size": 16 << 10, "ways": 4, "line_bytes": 128,
                                        "mshrs": 2, "hit": 0}  # fmt: skip
    with pytest.raises(ValueError, match="the hardware SM has no instruction cache"):
        replace(COSIM, config=replace(COSIM.config, icache=Cache(256, 1, 16, 1)))
    with pytest.raises(ValueError, match="the hardware SM has no instruction cache"):
        SMParams.for_program(EVAL.geometry, EVAL.config, EVAL.memmap, GLOBAL_BASE + 64)


def test_the_cache_options_of_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    """``--icache``/``--l1d`` edit the base's cache, ``off`` removes it; the commands that
    build the hardware SM take the machine's hardware and refuse a cache."""
    args = ["run", "ifElse", "--config", "eval", "--json"]
    assert cli.main([*args, "--icache", "off", "--l1d", "size=8192,hit=30"]) == 0
    out = capsys.readouterr().out
    assert '"icache_accesses": 0' in out and '"l1d_accesses": 0' not in out
    for option, says in (
        (["--l1d", "bogus=1"], "--l1d takes off or NAME=VALUE,... with NAME one of size"),
        (["--l1d", "size=1000"], "must be a positive multiple of line x ways"),
        (["--icache", "size=x"], "--icache size=x: not an integer"),
        (["--line-bytes", "64"], "the L1 data cache's lines (128 bytes) must be"),
    ):
        assert cli.main([*args[:-1], *option]) == cli.EXIT_USAGE, option
        assert says in capsys.readouterr().err
    assert cli.main(["run", "ifElse", "--icache", "size=256"]) == cli.EXIT_USAGE
    assert "the base has no icache, so give ways, line, mshrs too" in capsys.readouterr().err
    assert cli.main(["verilog", "sm", "--config", "cosim", "--l1d", "size=256,ways=1,line=32,"
                     "mshrs=1,hit=2", "-o", "/dev/null"]) == cli.EXIT_USAGE  # fmt: skip
    assert "the hardware SM has no instruction cache or L1 data cache" in capsys.readouterr().err


# -- hand-derived cycles ---------------------------------------------------------------------


def run_cached(
    source: str, *, icache: Cache | None = None, l1d: Cache | None = None,
    geometry: Geometry = W4, block: int = 4, policy: Policy = Policy.SPS, **latencies: int,
) -> SMResult:  # fmt: skip
    config = SMConfig(policy=policy, latencies=Latencies(**latencies), icache=icache, l1d=l1d)
    launch = LaunchConfig(grid=1, block=block, geometry=geometry)
    result = run_sm(assemble(source, "cache.S"), launch, config, trace=True)
    assert result.fault is None, result.fault
    return result


def issues(result: SMResult) -> list[tuple[int, int]]:
    """(cycle, instruction index from the entry) per issue."""
    return [(r.cycle, (r.pc - GLOBAL_BASE) // 4) for r in result.trace]


LOADS = f"""
_start:
    csrr t0, tid          # 0
    slli t0, t0, 2        # 1: 4 bytes apart: the 4 threads on one 64-byte line
    la   t1, data         # 2, 3
    add  t1, t1, t0       # 4
    lw   a0, 0(t1)        # 5: misses
    lw   a1, 0(t1)        # 6: hits the line in flight
    add  a2, a1, a1       # 7
    lw   a3, 0(t1)        # 8: hits
    add  a4, a3, a3       # 9
    sw   a4, 0(t1)        # 10: a global store evicts the line
    lw   a5, 0(t1)        # 11: misses again
    add  a6, a5, a5       # 12
    li   a0, 0            # 13
    {EXIT}                # 14, 15
    .data
    .balign 64
data: .space 64
"""
L1D = Cache(size=256, ways=2, line_bytes=64, mshrs=2, hit=3)


def test_l1d_hits_and_misses_take_the_cycles_of_rule_8() -> None:
    """W = 4 (one pass), global = 20, alu = 1, the idealised pipeline: a memory instruction
    issued at t has its one LSU cycle at t + 1. The lw at 5 misses in LSU cycle 6 (its line
    arrives at 26: a0 released at 26); the LSU is idle from 7, when the second lw issues: its
    LSU cycle 8 finds the line in flight, so a1 is there at max(8 + 3, 26) = 26 and the add
    issues at 26. The third lw (27, LSU 28) hits: a3 at 31, its add at 31. The sw at 32
    evicts the line (LSU 33, done at 53); the lw at 34 misses in LSU cycle 35 (a5 at 55),
    its add at 55. li a7 and the ecall (57, 58) end the run at 59 (the store was done at
    53). Without the L1 every load pays 20 after its LSU cycle."""
    cached = run_cached(LOADS, l1d=L1D, global_=20, **IDEAL)
    cycles = [0, 1, 2, 3, 4, 5, 7, 26, 27, 31, 32, 34, 55, 56, 57, 58]
    assert issues(cached) == list(zip(cycles, range(16), strict=True))
    assert cached.metrics is not None
    c = cached.metrics.counters
    assert (c.l1d_accesses, c.l1d_misses, c.icache_accesses) == (4, 2, 0)
    assert cached.metrics.cycles == 59
    json = cached.metrics.to_json()
    assert json["l1d_mpki"] == pytest.approx(mpki(2, c.thread_instructions)) == 2000 / 64
    plain = run_cached(LOADS, global_=20, **IDEAL)
    cycles = [0, 1, 2, 3, 4, 5, 7, 28, 29, 50, 51, 53, 74, 75, 76, 77]
    assert issues(plain) == list(zip(cycles, range(16), strict=True))
    assert plain.metrics is not None and plain.metrics.counters.l1d_accesses == 0


STRAIGHT = f"""
_start:
    nop                   # 0: line 0 (16-byte lines: 4 instructions)
    nop
    nop
    nop
    nop                   # 4: line 1
    li   a0, 0            # 5
    {EXIT}                # 6, 7
"""
ICACHE = Cache(size=64, ways=2, line_bytes=16, mshrs=1, hit=0)


def test_an_instruction_miss_holds_its_split_until_the_line_arrives() -> None:
    """One warp, global = 20, branch = 3: the split first asks for instruction 0 in cycle 0,
    misses and is ready when the line arrives at 20; instructions 1-3 hit (21-23); instruction
    4 misses in cycle 24 (ready at 44); 5-7 follow. Two warps: warp 1 looks up the same line
    in cycle 0 while warp 0's miss is in flight (a hit: it waits for the arrival); from 20 the
    older warp 0 issues 0-3 (greedy), warp 1 issues 24-27 while warp 0's miss of line 1 is in
    flight (asked in 24), and finds that line in flight in 28: the two lines cost two misses."""
    one = run_cached(STRAIGHT, icache=ICACHE, global_=20, branch=3, **IDEAL)
    assert issues(one) == list(zip([20, 21, 22, 23, 44, 45, 46, 47], range(8), strict=True))
    assert one.metrics is not None
    assert (one.metrics.counters.icache_accesses, one.metrics.counters.icache_misses) == (8, 2)
    two = run_cached(STRAIGHT, icache=ICACHE, block=8, global_=20, branch=3, **IDEAL)
    assert [(r.cycle, r.warp, (r.pc - GLOBAL_BASE) // 4) for r in two.trace] == [
        (20, 0, 0), (21, 0, 1), (22, 0, 2), (23, 0, 3),
        (24, 1, 0), (25, 1, 1), (26, 1, 2), (27, 1, 3),
        (44, 1, 4), (45, 1, 5), (46, 1, 6), (47, 1, 7),
        (48, 0, 4), (49, 0, 5), (50, 0, 6), (51, 0, 7),
    ]  # fmt: skip
    assert two.metrics is not None
    assert (two.metrics.counters.icache_accesses, two.metrics.counters.icache_misses) == (16, 2)


def test_an_mshr_bounds_the_misses_in_flight() -> None:
    """One MSHR, two warps at different lines: warp 1 (thread 4 on) jumps to line 1 while
    warp 0's miss of line 0 is in flight, so its request leaves when that line arrives."""
    cache = CacheModel(ICACHE, 20)
    assert cache.read(0, 0) == (20, True)
    assert cache.read(1, 5) == (40, True)  # waits for the one MSHR
    assert cache.read(0, 6) == (20, False)  # in flight: merged
    assert cache.read(1, 41) == (41, False)


# -- metrics ---------------------------------------------------------------------------------

IF_ELSE = f"""
_start:
    csrr t0, tid          # 0
    andi t1, t0, 1        # 1
    rhint D               # 2
    beqz t1, E            # 3: even threads to E
    addi a1, a1, 1        # 4
    addi a1, a1, 1
    addi a1, a1, 1
    j    D
E:  addi a1, a1, 2
    addi a1, a1, 2
    addi a1, a1, 2
D:  li   a0, 0
    {EXIT}
"""


def test_tlp_is_one_without_divergence_and_higher_under_mp() -> None:
    """Seed 002 Fig 4: without divergence every live thread is in the one split; when the warp
    splits, SPS exposes one path's threads, MP both."""
    uniform = run_cached(STRAIGHT)
    assert uniform.metrics is not None and uniform.metrics.tlp == 1.0
    sps, mp = (run_cached(IF_ELSE, policy=p).metrics for p in (Policy.SPS, Policy.MP))
    assert sps is not None and mp is not None
    assert 0.5 < sps.tlp < mp.tlp <= 1.0
    assert sps.to_json()["tlp"] == sps.tlp and sps.warp_json(sps.warps[0])["tlp"] == sps.tlp


# -- results -------------------------------------------------------------------------------

#: Small caches on a small SM, so that lines are evicted and MSHRs run out.
SMALL = SMConfig(
    line_bytes=32,
    icache=Cache(size=128, ways=2, line_bytes=32, mshrs=1),
    l1d=Cache(size=256, ways=2, line_bytes=32, mshrs=2, hit=2),
)


@pytest.mark.parametrize("name", ["loopBreak", "memcached", "bfs", "raytrace"])
def test_every_policy_computes_the_same_with_caches(name: str) -> None:
    """No policy and no cache changes what a kernel computes: every variant, with and without
    hws, on an SM with small caches matches the oracle, and its caches were used."""
    configs = [
        replace(v, hws=hws, line_bytes=SMALL.line_bytes, icache=SMALL.icache, l1d=SMALL.l1d)
        for v in VARIANTS
        for hws in (False, True)
    ]
    geometry = Geometry(warp_size=8, simd_width=4, warps=4)
    for config, result in zip(configs, check(name, geometry, configs, "linear", 16), strict=True):
        assert result.metrics is not None
        counters = result.metrics.counters
        assert counters.icache_misses > 0 and counters.l1d_accesses > 0, config.label
