"""Configuration of the cycle-level SM: the divergence policy and its switches, the warp
scheduler, the latencies and the memory system. The sizes (W, L, warps, table sizes) are the
launch's :class:`~reconverge.golden.geometry.Geometry`.

The policies and their variants are :mod:`reconverge.golden.policies`'s.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace

from reconverge.golden.isa import XLEN
from reconverge.golden.policies import Mechanism, Policy, Variant, WarpFormation, variant_of


class Scheduler(enum.Enum):
    """Warp schedulers: loose round robin, and greedy-then-oldest (seed 002 Sec 5)."""

    LRR = "lrr"
    GTO = "gto"


class ScoreboardKind(enum.Enum):
    """Per-warp scoreboard (seed 002 Fig 8a) or masked scoreboard with R-masks (Fig 8b)."""

    PLAIN = "plain"
    MASKED = "masked"


#: The latencies of instruction classes: one write-back delay line each in the hardware
#: (``hdl/sm/writeback.py``).
WRITEBACK_LATENCIES = ("alu", "mul", "div", "shared", "global_")


#: The SM's pipeline behind the issue stage (docs/sm-hardware.md, "The pipeline"): a pass
#: issued in cycle t is decoded in t + 1, which registers its register file read address,
#: reads its registers in t + ``PIPELINE_READ`` and executes in t + ``PIPELINE_EXECUTE`` (the
#: lanes compute, write their results and hand addresses to the LSU at the end of that
#: cycle); the outcome of an instruction whose next PCs or exit the lanes compute is
#: registered, the divergence unit groups its threads' next PCs in the next cycle (the resolve
#: stage) and takes the update from registers the cycle after: ``PIPELINE_RESOLVE`` cycles
#: after its last pass. The defaults of :class:`Latencies`; the HDL builds exactly these.
PIPELINE_READ = 2
PIPELINE_EXECUTE = PIPELINE_READ + 1
PIPELINE_RESOLVE = PIPELINE_EXECUTE + 2
#: The least latency of a result in the pipeline: written at the end of the execute stage, it
#: is read by an instruction that issued ``RESULT_LATENCY`` cycles after it (whose decode
#: stage's read address the block RAM samples at that edge, transparent for the write).
RESULT_LATENCY = PIPELINE_EXECUTE - PIPELINE_READ + 1
#: The fetch stage ahead of the issue stage: the instruction store is read in the cycle a PC
#: is asked for and its word registered into the split slot's instruction buffer the cycle
#: after, from which it issues. A PC that shows in cycle V issues from V + ``FETCH_LATENCY``:
#: the least ``branch`` latency (counted from V - 1) is ``FETCH_LATENCY + 1``.
FETCH_LATENCY = 2
LEAST_BRANCH = FETCH_LATENCY + 1


@dataclass(frozen=True)
class Latencies:
    """Cycles from the issue of an instruction's last pass until a dependent instruction may
    issue (``alu``, ``mul``, ``div``, ``shared``, ``global_``: the memory latencies count from
    the last LSU cycle), from the cycle before a unit's update has settled until a split it
    redirected may issue (``branch``: resolution and refetch), plus ``arbiter`` cycles under
    stack-less (0: the PC arbitration is the control's own tree clock, in the unit's c; more
    model a slower arbiter) and the hws squeezer (``squeeze``), which add to ``branch`` when
    they apply (docs/architecture.md, "Timing", rules 2 and 3). ``div_interval`` is the
    divider's initiation interval: after a division's last pass, the next division waits that
    many cycles (rule 6; GPGPU-Sim's ``-ptx_opcode_initiation_int``).

    ``execute`` and ``resolve`` are the pipeline's (rules 1 and 3): a pass executes
    ``execute`` cycles after its issue, so a memory instruction's LSU cycles start that much
    after its passes; a branch, jump or exit (and under stack-less a write to sp) reaches the
    divergence unit ``resolve`` cycles after its last pass, the others in it. The hardware's
    are :data:`PIPELINE_EXECUTE` and :data:`PIPELINE_RESOLVE`; 0 and 0 model the idealised
    machines of the seeds' worked examples, which resolve a branch as it issues."""

    alu: int = 1
    mul: int = 4
    div: int = 16
    shared: int = 4
    global_: int = 20
    branch: int = 2
    arbiter: int = 0
    squeeze: int = 1
    div_interval: int = 8
    execute: int = PIPELINE_EXECUTE
    resolve: int = PIPELINE_RESOLVE

    def __post_init__(self) -> None:
        for name in (*WRITEBACK_LATENCIES, "branch", "div_interval"):
            if getattr(self, name) < 1:
                raise ValueError(f"latency {name.rstrip('_')} must be at least 1")
        for name in ("arbiter", "squeeze", "execute", "resolve"):
            if getattr(self, name) < 0:
                raise ValueError(f"latency {name} must not be negative")
        if self.div < 2:
            raise ValueError("latency div must be at least 2: the divider registers its operands")
        if self.div <= self.execute:
            raise ValueError(
                f"latency div ({self.div}) must exceed execute ({self.execute}): the divider "
                "takes its operands in the execute stage"
            )

    @property
    def pipelined(self) -> bool:
        """The hardware's pipeline (not the idealised machine of ``execute`` = ``resolve`` =
        0): its divergence units update as their HDL blocks do, the split tables inserting in
        the cycles after an operation (``golden.blocks.split_tables``); the idealised machine's
        tables update at once, as the seeds' figures draw them."""
        return bool(self.execute or self.resolve)

    @property
    def div_steps(self) -> int:
        """Restoring steps per cycle of the hardware divider: the fewest that finish the 32
        steps of a division within ``min(div_interval, div - gap)`` cycles (1 is radix 2, 2
        radix 4), so that its result, written after the execute stage, is there when a
        dependent instruction reads its registers (``gap`` = :data:`RESULT_LATENCY` behind
        the pipeline, 1 without one), and it is idle again when the next division may issue."""
        gap = min(max(self.execute, 1), RESULT_LATENCY)
        return -(-XLEN // min(self.div_interval, self.div - gap))

    @property
    def div_cycles(self) -> int:
        """Cycles a thread's division occupies its divider (:func:`division_cycles`)."""
        return division_cycles(self.div_steps)

    def outcome_delay(self, resolved: bool) -> int:
        """Cycles from an instruction's last pass until its outcome reaches the divergence
        unit: ``resolve`` if the lanes compute it, else 0 (rule 1)."""
        return self.resolve if resolved else 0


def division_cycles(steps: int) -> int:
    """Cycles of an iterative divider doing ``steps`` restoring steps per cycle: the 32 steps
    of a division, rounded up to whole cycles."""
    return -(-XLEN // steps)


@dataclass(frozen=True)
class Cache:
    """One cache of the golden SM (docs/architecture.md, "Timing", rules 7 and 8; the hardware
    SM has none): ``size`` bytes in sets of ``ways`` lines of ``line_bytes``, least recently
    used replacement, at most ``mshrs`` missing lines in flight (its miss status holding
    registers). A hit's data is there ``hit`` cycles after the access (the L1 data cache: in
    place of the ``global_`` latency; the instruction cache: cycles a hit adds to the fetch,
    0 when the fetch stage of rule 2 covers it); a miss's line arrives ``global_`` cycles after
    its request leaves."""

    size: int
    ways: int
    line_bytes: int
    mshrs: int
    hit: int = 0

    def __post_init__(self) -> None:
        if self.line_bytes < 4 or self.line_bytes & (self.line_bytes - 1):
            raise ValueError(f"cache line size {self.line_bytes} must be a power of two >= 4")
        if self.ways < 1 or self.mshrs < 1 or self.hit < 0:
            raise ValueError(
                f"a cache needs at least 1 way and 1 MSHR and a hit latency of at least 0, not "
                f"{self.ways} ways, {self.mshrs} MSHRs, hit {self.hit}"
            )
        if self.size < 1 or self.size % (self.line_bytes * self.ways):
            raise ValueError(
                f"cache size {self.size} must be a positive multiple of line x ways "
                f"({self.line_bytes} x {self.ways} = {self.line_bytes * self.ways} bytes)"
            )

    def describe(self) -> str:
        """One line of text: ``16 KB, 4-way, 128-byte lines, 2 MSHRs, hit 0``."""
        size = f"{self.size >> 10} KB" if self.size % 1024 == 0 else f"{self.size} B"
        return (
            f"{size}, {self.ways}-way, {self.line_bytes}-byte lines, {self.mshrs} MSHRs, "
            f"hit {self.hit}"
        )

    @property
    def sets(self) -> int:
        """Sets of ``ways`` lines (a line's set is its line number modulo this)."""
        return self.size // (self.line_bytes * self.ways)

    def line(self, addr: int) -> int:
        """The line number of byte address ``addr``."""
        return addr // self.line_bytes


@dataclass(frozen=True)
class SMConfig:
    """Everything that selects one SM configuration. ``hints`` only matters for ``ppc``
    (explicit with hints, implicit without); ``scoreboard`` defaults to masked for the
    policies that run several splits of a warp concurrently (mp, mp-orec, dps) and plain
    otherwise."""

    policy: Policy = Policy.SPS
    hws: bool = False
    #: with hws, whether the squeeze moves threads between quarter-warps (seed 001 Sec 4.1);
    #: without it hws only leaves out the empty quarter-warps, its warp scaling alone (the
    #: baseline of Sec 6.2, Fig 6.1). Golden only: the hardware's hws always squeezes.
    squeeze: bool = True
    hints: bool = True
    warp_formation: WarpFormation = WarpFormation.STATIC
    scheduler: Scheduler = Scheduler.GTO
    scoreboard: ScoreboardKind | None = None
    latencies: Latencies = field(default_factory=Latencies)
    line_bytes: int = 64  # global memory transaction (cache line) size
    shared_banks: int = 32  # 4-byte shared memory banks
    max_cycles: int = 5_000_000  # watchdog: a run that does not finish by then is a fault
    #: the golden SM's instruction cache and L1 data cache (None: none, as in the hardware:
    #: every fetch hits, every global and local access pays ``global_``)
    icache: Cache | None = None
    l1d: Cache | None = None

    def __post_init__(self) -> None:
        if self.line_bytes < 4 or self.line_bytes & (self.line_bytes - 1):
            raise ValueError(f"line size {self.line_bytes} must be a power of two >= 4")
        if self.l1d is not None:
            if self.l1d.line_bytes != self.line_bytes:
                raise ValueError(
                    f"the L1 data cache's lines ({self.l1d.line_bytes} bytes) must be the "
                    f"memory transactions' (line size {self.line_bytes}): the load/store unit "
                    "coalesces a warp's accesses into one transaction per cache line"
                )
            if self.l1d.hit < 1:
                raise ValueError("the L1 data cache's hit latency must be at least 1")
        if self.shared_banks < 1 or self.shared_banks & (self.shared_banks - 1):
            raise ValueError(f"shared banks {self.shared_banks} must be a power of two")
        if self.max_cycles < 1:
            raise ValueError("max_cycles must be positive")

    @property
    def squeezes(self) -> bool:
        """The squeezer acts: hws with its squeeze (seed 001 Sec 4.1)."""
        return self.hws and self.squeeze

    @classmethod
    def of(cls, variant: Variant, **fields: object) -> SMConfig:
        """The configuration of a variant (its policy, hints and warp formation), the other
        fields as given."""
        return cls(
            policy=variant.policy,
            hints=variant.hints,
            warp_formation=variant.formation,
            **fields,  # type: ignore[arg-type]
        )

    def with_mechanism(self, mechanism: Mechanism) -> SMConfig:
        """This configuration under another mechanism (its variant and hws), the rest kept."""
        v = mechanism.variant
        return replace(
            self, policy=v.policy, hints=v.hints, warp_formation=v.formation, hws=mechanism.hws
        )

    @property
    def variant(self) -> Variant:
        """The policy variant this configuration runs (:mod:`reconverge.golden.policies`)."""
        return variant_of(self.policy, self.hints, self.warp_formation)

    @property
    def mechanism(self) -> Mechanism:
        """The variant and the hws switch (:class:`~reconverge.golden.policies.Mechanism`)."""
        return Mechanism(self.variant, self.hws)

    @property
    def label(self) -> str:
        """The variant's name, `` +hws`` with hws: what tables and reports call it."""
        return self.mechanism.label

    @property
    def cached(self) -> bool:
        """Whether the golden SM has an instruction or L1 data cache (the hardware has none)."""
        return self.icache is not None or self.l1d is not None

    def uncached(self) -> SMConfig:
        """This configuration without its caches: what the hardware SM builds of it."""
        return replace(self, icache=None, l1d=None)

    @property
    def scoreboard_kind(self) -> ScoreboardKind:
        if self.scoreboard is not None:
            return self.scoreboard
        return ScoreboardKind.MASKED if self.policy.concurrent else ScoreboardKind.PLAIN

    @property
    def dynamic(self) -> bool:
        """Whether warps are formed dynamically (dwf, en-dwf)."""
        return self.warp_formation is not WarpFormation.STATIC

    @property
    def explicit(self) -> bool:
        """Whether the policy consumes reconvergence PCs (ppc only in explicit mode; dynamic
        warp formation never)."""
        return self.variant.explicit
