"""Everything that selects one SM as hardware: the geometry, the configuration (policy,
switches, latencies, memory system), the address map and the size of the instruction store.
The HDL SM (``reconverge.hdl.sm``) is elaborated from an :class:`SMParams`, the golden model
runs with its parts, and the co-simulation holds the two to each other: one definition.

The named configurations (:data:`CONFIGS`, each a :class:`Machine`) are documented in
docs/architecture.md; a machine's golden-only caches are left out of its hardware SM
(:meth:`Machine.hardware`), which refuses them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from reconverge.golden.config import (
    LEAST_BRANCH,
    PIPELINE_EXECUTE,
    PIPELINE_RESOLVE,
    RESULT_LATENCY,
    Cache,
    Latencies,
    SMConfig,
)
from reconverge.golden.geometry import Geometry, bits_for
from reconverge.golden.memmap import GLOBAL_BASE, MemoryMap
from reconverge.golden.policies import Policy, Variant, WarpFormation

#: PC and SP bits of the hardware (a full RV32 address).
PC_WIDTH = 32
SP_WIDTH = 32
#: Launch arguments the SM takes (a0..a7).
ARG_REGS = 8
#: Bits of the hardware SM's cycle and event counters (status, trace, LSU metrics).
COUNTER = 32
#: Bits of a warp's age in the hardware (its dispatch number: the GTO scheduler's order).
AGE_BITS = 32
#: Bits of a split's ready timer and of a warp's count of pending write-backs in the hardware.
TIMER_BITS = 8
PENDING_BITS = 8
#: The hardware register file's write ports (the lanes, the divider, the LSU), lowest priority
#: first.
REGFILE_WRITE_PORTS = ("write_lane", "write_div", "write_lsu")


def _power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


def hardware_config(config: SMConfig) -> SMConfig:
    """``config`` with ``alu`` and ``mul`` raised to the pipeline's least result latency and
    ``branch`` to its fetch stage's least, the least the hardware's pipeline keeps (a golden
    machine may forward a result the hardware writes a cycle later, or fetch a new PC sooner;
    the other latencies stay)."""
    lat = config.latencies
    least = {k: max(getattr(lat, k), RESULT_LATENCY) for k in ("alu", "mul")}
    least["branch"] = max(lat.branch, LEAST_BRANCH)
    return replace(config, latencies=replace(lat, **least))


@dataclass(frozen=True)
class Machine:
    """A named machine (:data:`CONFIGS`): the geometry, the configuration, the address map and
    the size of the instruction store. Its configuration may hold the golden model's caches
    (``SMConfig.icache``, ``SMConfig.l1d``: the evaluation machine's); :meth:`hardware` is the
    SM the HDL builds of it, the same without them."""

    geometry: Geometry = field(default_factory=Geometry)
    config: SMConfig = field(default_factory=lambda: hardware_config(SMConfig()))
    memmap: MemoryMap = field(default_factory=MemoryMap)
    #: 32-bit words of the instruction store (code is fetched from global memory at
    #: GLOBAL_BASE .. GLOBAL_BASE + 4 * imem_words)
    imem_words: int = 1024

    def hardware(self) -> SMParams:
        """The hardware SM of this machine: its geometry, latencies and memories, no caches
        (the RTL keeps its memory port; a ``ValueError`` names what else it cannot build)."""
        return SMParams(self.geometry, self.config.uncached(), self.memmap, self.imem_words)

    def to_json(self) -> dict[str, Any]:
        """Every parameter, as the JSON of ``cosim``, ``power``, ``verilog`` and ``synth``
        reports it (``variant``: the policy variant's one name; ``icache`` and ``l1d`` only
        where the machine has caches)."""
        config = self.config
        caches = (
            {"icache": _cache_json(config.icache), "l1d": _cache_json(config.l1d)}
            if config.cached
            else {}
        )
        return {
            "geometry": asdict(self.geometry),
            "variant": config.variant.name,
            "policy": config.policy.value,
            "hws": config.hws,
            "hints": config.hints,
            "scheduler": config.scheduler.value,
            "scoreboard": config.scoreboard_kind.value,
            "latencies": {k.rstrip("_"): v for k, v in asdict(config.latencies).items()},
            "line_bytes": config.line_bytes,
            "shared_banks": config.shared_banks,
            **caches,
            "memmap": asdict(self.memmap),
            "imem_words": self.imem_words,
        }


def _cache_json(cache: Cache | None) -> dict[str, int] | None:
    return None if cache is None else asdict(cache)


@dataclass(frozen=True)
class SMParams(Machine):
    """One hardware SM. Validates what the HDL needs beyond what golden accepts: no caches
    (golden's instruction and L1 data caches have no RTL: its memory port stays), static warps
    (dynamic warp formation is golden only), the pipeline's minimum latencies
    (docs/architecture.md, "The SM in hardware"), power-of-two memories."""

    def __post_init__(self) -> None:
        if self.config.cached:
            raise ValueError(
                "the hardware SM has no instruction cache or L1 data cache: the golden "
                "model's caches have no RTL (the SM keeps its memory port)"
            )
        if self.config.warp_formation is not WarpFormation.STATIC:
            raise ValueError("dynamic warp formation (dwf, en-dwf) exists in golden only")
        if not self.config.squeeze:
            raise ValueError("hws without its squeeze exists in golden only (the hardware's "
                             "squeezer always squeezes)")  # fmt: skip
        lat = self.config.latencies
        if lat.branch < LEAST_BRANCH:
            raise ValueError(
                f"the hardware needs branch latency >= {LEAST_BRANCH} (a new PC is read from the "
                "instruction store the cycle it shows and issues from the instruction buffer "
                f"two cycles later), not {lat.branch}"
            )
        for name in ("global_", "shared"):
            if getattr(lat, name) < 2:
                raise ValueError(
                    f"the hardware needs {name.rstrip('_')} latency >= 2 (the response arrives "
                    "the cycle after the request and is written the cycle after)"
                )
        built = {"execute": PIPELINE_EXECUTE, "resolve": PIPELINE_RESOLVE}
        for name, cycles in built.items():
            if getattr(lat, name) != cycles:
                raise ValueError(
                    f"the hardware's pipeline has {name} {cycles}, not {getattr(lat, name)}"
                )
        for name in ("alu", "mul"):
            if getattr(lat, name) < RESULT_LATENCY:
                raise ValueError(
                    f"the hardware needs {name} latency >= {RESULT_LATENCY} (a result is "
                    "written in the execute stage; a dependent instruction's decode stage "
                    f"gives the read address the cycle after its issue), not {getattr(lat, name)}"
                )
        if not _power_of_two(self.imem_words) or not 16 <= self.imem_words <= 1 << 20:
            raise ValueError(f"imem_words={self.imem_words} must be a power of two in 16..2^20")
        if self.config.line_bytes > 128:
            raise ValueError(f"line size {self.config.line_bytes} above 128 bytes")
        for name in ("shared_size", "local_size"):
            if not _power_of_two(getattr(self.memmap, name)):
                raise ValueError(f"{name}={getattr(self.memmap, name):#x} must be a power of two")

    @classmethod
    def for_program(
        cls, geometry: Geometry, config: SMConfig, memmap: MemoryMap, code_end: int
    ) -> SMParams:
        """The hardware SM that runs a golden run's configuration: static warps (the SM of a
        dynamic-warp-formation run without its warp pool), a split table of at most W entries
        (a split holds at least one thread, so a larger table is never used and the run is the
        same), an instruction store that just holds code ending at byte address ``code_end``,
        ``alu`` and ``mul`` of at least the pipeline's result latency (the SM that would run
        the program: a golden machine may forward results the hardware's pipeline writes a
        cycle later). A ``ValueError`` names what the hardware cannot do (caches among it: a
        run with them is not timed as the hardware runs)."""
        words = max(16, -(-(code_end - GLOBAL_BASE) // 4))
        static = hardware_config(replace(config, warp_formation=WarpFormation.STATIC))
        tables = replace(geometry, split_table=min(geometry.split_table, geometry.warp_size))
        return cls(tables, static, memmap, imem_words=1 << (words - 1).bit_length())

    def hardware(self) -> SMParams:
        return self

    # -- derived sizes ----------------------------------------------------------------------

    @property
    def policy(self) -> Policy:
        return self.config.policy

    @property
    def variant(self) -> Variant:
        return self.config.variant

    @property
    def warp_bits(self) -> int:
        """Bits of a warp slot number."""
        return bits_for(self.geometry.warps)

    @property
    def imem_bits(self) -> int:
        """Bits of an instruction-store word index."""
        return bits_for(self.imem_words)

    @property
    def line_key_bits(self) -> int:
        """Bits of a line number (a byte address without its offset in the line): the keys
        the memory arbiter compares (seed 000 Sec 4.2)."""
        return 32 - (self.config.line_bytes.bit_length() - 1)

    @property
    def line_bits(self) -> int:
        """Bits of the data port (one cache line)."""
        return 8 * self.config.line_bytes


#: The co-simulation configuration: a small SM whose Verilog simulates in seconds (W = 8 on
#: L = 4 lanes, 4 warp slots: a suite block of 32 threads fits), short latencies, small
#: tables and windows; a radix-4 divider per thread (16 cycles a division, one division every
#: 16 cycles); an ALU result two cycles after its issue, what the pipeline needs (a dependent
#: instruction reads its registers the cycle after its issue, the result is written in the
#: execute stage, docs/sm-hardware.md); a redirected split issues two cycles after its PC shows
#: (``branch`` 3: the fetch stage registers the instruction store's word).
COSIM = SMParams(
    geometry=Geometry(
        warp_size=8,
        simd_width=4,
        warps=4,
        stack_depth=16,
        split_table=8,
        reconv_table=16,
        scoreboard_entries=8,
    ),
    config=SMConfig(
        latencies=Latencies(alu=2, mul=2, div=18, shared=2, global_=3, branch=3, div_interval=16),
        line_bytes=32,
        shared_banks=8,
    ),
    memmap=MemoryMap(global_size=1 << 20, shared_size=1 << 10, local_size=1 << 10),
    imem_words=1024,
)

#: The synthesis configuration's latencies: the co-simulation's, with the divider one restoring
#: step a cycle (``Latencies.div_steps`` 1: 32 cycles a division; a dependent instruction issues
#: 34 cycles after it, one division every 32).
SYNTH_DIVISION = replace(COSIM.config.latencies, div=34, div_interval=32)

#: The synthesis configuration (``reconverge synth sm``, docs/area.md): the smallest SM that
#: still diverges and squeezes — one warp slot of W = 4 threads on L = 2 lanes (two passes, so
#: hws has something to squeeze), 4-entry stacks, tables and scoreboard, a 256-word instruction
#: store, the co-simulation latencies but a radix-2 divider (a division in 32 cycles, one every
#: 32: :data:`SYNTH_DIVISION`; 128 LUT4 fewer a thread position than radix 4), 16-byte lines —
#: so that it fits an ECP5 LFE5U-85F under every policy. With two warp slots the SM needed
#: about 95k LUT4 while its register file was flip-flops; with the file in LUT RAM one slot
#: takes 47k (docs/hdl.md, "The synthesis configuration"), two slots are not measured yet.
SYNTH = SMParams(
    geometry=Geometry(
        warp_size=4,
        simd_width=2,
        warps=1,
        stack_depth=4,
        split_table=4,
        reconv_table=4,
        scoreboard_entries=4,
    ),
    config=SMConfig(latencies=SYNTH_DIVISION, line_bytes=16, shared_banks=4),
    memmap=MemoryMap(global_size=16 << 10, shared_size=1 << 10, local_size=1 << 10),
    imem_words=256,
)

#: The evaluation machine's instruction cache: the 16 KB per core of seed 002 (Sec 5 and
#: 6.4: GPGPU-Sim's GTX 480 configuration "but with 16KB instruction cache per core"), in
#: GPGPU-Sim's GTX 480 geometry (``-gpgpu_cache:il1 4:128:4,...,A:2:32``: 128-byte lines, 4
#: ways, 2 MSHRs); a hit costs no more than the fetch stage (rule 2).
EVAL_ICACHE = Cache(size=16 << 10, ways=4, line_bytes=128, mshrs=2, hit=0)
#: The instruction cache GPGPU-Sim's GTX 480 file itself gives a core (4 sets of 4 lines of
#: 128 bytes: 2 KB), which seed 002 enlarged to 16 KB (Sec 6.4: with it the effect of
#: instruction misses is negligible).
GPGPU_SIM_ICACHE = Cache(size=2 << 10, ways=4, line_bytes=128, mshrs=2, hit=0)
#: The evaluation machine's L1 data cache: the 32 KB of seed 002's Fig 17 ("32KB D$"), in
#: GPGPU-Sim's GTX 480 geometry (``-gpgpu_cache:dl1 ...:128:4,...,A:32:8``: 128-byte lines,
#: 4 ways, 32 MSHRs); a hit costs the shared-memory latency (24), Fermi's L1 and shared
#: memory being one array.
EVAL_L1D = Cache(size=32 << 10, ways=4, line_bytes=128, mshrs=32, hit=24)

#: The evaluation configuration (docs/evaluation.md): one SM of the GeForce GTX 480 that
#: seed 002 Sec 5 simulates with GPGPU-Sim 3.1, with the numbers of GPGPU-Sim's distributed
#: GTX 480 configuration: 48 warp slots of W = 32 (1536 threads), a warp instruction per cycle
#: (GPGPU-Sim runs the core at half the 1.4 GHz shader clock so that a warp takes one cycle on
#: Fermi's 16-wide pipelines: L = 32 here), greedy-then-oldest, 8 scoreboard entries per warp
#: (seed 002 Sec 6.6), ST entries = W (Sec 3.2), integer latencies add 4, mul 4, div 145 with
#: a division every 8 cycles (``-ptx_opcode_initiation_int``), branch 3 (the hardware's fetch),
#: 128-byte lines, 32 shared banks, and global memory at the DRAM path's 120 (ROP) + 100 (DRAM)
#: cycles, which an instruction or L1 data cache miss pays (this SM has no L2); the golden
#: model's caches :data:`EVAL_ICACHE` and :data:`EVAL_L1D` (the hardware SM of this machine,
#: :meth:`Machine.hardware`, has none). Shared-memory latency is not a parameter of that file;
#: 24 cycles is of its class (Fermi microbenchmarks).
EVAL = Machine(
    geometry=Geometry(
        warp_size=32,
        simd_width=32,
        warps=48,
        stack_depth=32,
        split_table=32,
        reconv_table=32,
        scoreboard_entries=8,
    ),
    config=SMConfig(
        latencies=Latencies(
            alu=4, mul=4, div=145, shared=24, global_=220, branch=3, div_interval=8
        ),
        line_bytes=128,
        shared_banks=32,
        max_cycles=50_000_000,
        icache=EVAL_ICACHE,
        l1d=EVAL_L1D,
    ),
    memmap=MemoryMap(global_size=64 << 20, shared_size=64 << 10, local_size=4 << 10),
    imem_words=1 << 14,
)

#: Seed 001's machine (its Table 5.1): a compute-capability 1.x SM of 24 warp slots of W = 32
#: on L = 8 lanes (four quarter-warps: what hws squeezes), perfect memory (here the hardware's
#: minimum of 2 cycles), no caches; the other sizes as :data:`EVAL`.
EVAL_TESLA = SMParams(
    geometry=replace(EVAL.geometry, simd_width=8, warps=24),
    config=replace(
        EVAL.config.uncached(),
        latencies=replace(EVAL.config.latencies, shared=2, global_=2),
        shared_banks=16,
    ),
    memmap=replace(EVAL.memmap, shared_size=16 << 10),
    imem_words=EVAL.imem_words,
)

#: Named configurations (``--config NAME``): the co-simulated and synthesised ones, and
#: seed 001's, are hardware SMs as they stand; the evaluation machine has golden's caches.
CONFIGS: dict[str, Machine] = {
    "cosim": COSIM,
    "synth": SYNTH,
    "eval": EVAL,
    "eval-tesla": EVAL_TESLA,
}
