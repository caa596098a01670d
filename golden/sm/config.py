"""Configuration of the cycle-level SM: the divergence policy and its switches, the warp
scheduler, the latencies and the memory system. The sizes (W, L, warps, table sizes) are the
launch's :class:`~reconverge.golden.geometry.Geometry`.

Policy names are defined here once (DESIGN.md, Policies) and used by the CLI, the HDL and the
testbenches alike.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Policy(enum.Enum):
    """Divergence policies (DESIGN.md). A policy never changes what a kernel computes."""

    SPS = "sps"  # IPDOM reconvergence stack (seed 002 Sec 2.2)
    STACKLESS = "stackless"  # per-thread PC and SP, common PC = min(SP:PC) (seed 000 Sec 3, 4)
    DPS = "dps"  # dual-path stack (seed 002 Sec 7, seed 003 Sec III)
    PPC = "ppc"  # dual-path stack with paired-path comparison (seed 003 Fig 4, 5)
    MP = "mp"  # warp split table + reconvergence table (seed 002 Sec 3)
    MP_OREC = "mp-orec"  # MP with opportunistic early reconvergence (seed 002 Sec 4)

    @property
    def uses_hints(self) -> bool:
        """Whether the policy needs reconvergence PCs (from ``rhint`` or the binary's IPDOMs);
        ``ppc`` needs them only with hints on (explicit mode)."""
        return self in (Policy.SPS, Policy.DPS, Policy.MP, Policy.MP_OREC)


POLICY_NAMES: tuple[str, ...] = tuple(p.value for p in Policy)

#: What each column label of a comparison means (``reconverge demo`` prints this legend).
LEGEND: dict[str, str] = {
    "sps": "IPDOM reconvergence stack (seed 002 Sec 2.2), the baseline",
    "stackless": "per-thread PC and SP, common PC = min(SP:PC) (seed 000)",
    "dps": "dual-path stack (seed 003)",
    "ppc": "dual-path stack with paired-path comparison, with hints (seed 003)",
    "ppc (implicit)": "paired-path comparison without hints (seed 003)",
    "mp": "multi-path: split table + reconvergence table (seed 002 Sec 3)",
    "mp-orec": "multi-path with opportunistic early reconvergence (seed 002 Sec 4)",
    "dwf": "dynamic warp formation (seed 001 Sec 3.6), instead of a policy",
    "en-dwf": "enhanced dynamic warp formation (seed 001 Sec 4.4)",
    "+hws": "hybrid warp size: squeeze active threads into fewer issue passes (seed 001)",
}


def parse_policy(name: str) -> Policy:
    try:
        return Policy(name)
    except ValueError:
        raise ValueError(f"unknown policy {name!r} (known: {', '.join(POLICY_NAMES)})") from None


class Scheduler(enum.Enum):
    """Warp schedulers: loose round robin, and greedy-then-oldest (seed 002 Sec 5)."""

    LRR = "lrr"
    GTO = "gto"


class WarpFormation(enum.Enum):
    """Static warps (each with its divergence unit), or dynamic warp formation in golden:
    DWF (seed 001 Sec 3.6) and en-DWF (Sec 4.4), which replace the per-warp policy."""

    STATIC = "static"
    DWF = "dwf"
    EN_DWF = "en-dwf"


class ScoreboardKind(enum.Enum):
    """Per-warp scoreboard (seed 002 Fig 8a) or masked scoreboard with R-masks (Fig 8b)."""

    PLAIN = "plain"
    MASKED = "masked"


@dataclass(frozen=True)
class Latencies:
    """Cycles from the issue of an instruction's last pass until a dependent instruction may
    issue (``alu``, ``mul``, ``div``, ``shared``, ``global_``: the memory latencies count from
    the last LSU cycle), from the cycle before a unit's update has settled until a split it
    redirected may issue (``branch``: resolution and refetch), plus the stack-less PC
    arbitration (``arbiter``) and the hws squeezer (``squeeze``), which add to ``branch`` when
    they apply (docs/architecture.md, "Timing", rules 2 and 3)."""

    alu: int = 1
    mul: int = 4
    div: int = 16
    shared: int = 4
    global_: int = 20
    branch: int = 2
    arbiter: int = 1
    squeeze: int = 1

    def __post_init__(self) -> None:
        for name in ("alu", "mul", "div", "shared", "global_", "branch"):
            if getattr(self, name) < 1:
                raise ValueError(f"latency {name.rstrip('_')} must be at least 1")
        for name in ("arbiter", "squeeze"):
            if getattr(self, name) < 0:
                raise ValueError(f"latency {name} must not be negative")


@dataclass(frozen=True)
class SMConfig:
    """Everything that selects one SM configuration. ``hints`` only matters for ``ppc``
    (explicit with hints, implicit without); ``scoreboard`` defaults to masked for the
    policies that run several splits of a warp concurrently (mp, mp-orec, dps) and plain
    otherwise."""

    policy: Policy = Policy.SPS
    hws: bool = False
    hints: bool = True
    warp_formation: WarpFormation = WarpFormation.STATIC
    scheduler: Scheduler = Scheduler.GTO
    scoreboard: ScoreboardKind | None = None
    latencies: Latencies = field(default_factory=Latencies)
    line_bytes: int = 64  # global memory transaction (cache line) size
    shared_banks: int = 32  # 4-byte shared memory banks
    max_cycles: int = 5_000_000  # watchdog: a run that does not finish by then is a fault

    def __post_init__(self) -> None:
        if self.line_bytes < 4 or self.line_bytes & (self.line_bytes - 1):
            raise ValueError(f"line size {self.line_bytes} must be a power of two >= 4")
        if self.shared_banks < 1 or self.shared_banks & (self.shared_banks - 1):
            raise ValueError(f"shared banks {self.shared_banks} must be a power of two")
        if self.max_cycles < 1:
            raise ValueError("max_cycles must be positive")

    @property
    def scoreboard_kind(self) -> ScoreboardKind:
        if self.scoreboard is not None:
            return self.scoreboard
        concurrent = (Policy.MP, Policy.MP_OREC, Policy.DPS)
        return ScoreboardKind.MASKED if self.policy in concurrent else ScoreboardKind.PLAIN

    @property
    def dynamic(self) -> bool:
        """Whether warps are formed dynamically (dwf, en-dwf)."""
        return self.warp_formation is not WarpFormation.STATIC

    @property
    def explicit(self) -> bool:
        """Whether the policy consumes reconvergence PCs (ppc only in explicit mode; dynamic
        warp formation never)."""
        if self.warp_formation is not WarpFormation.STATIC:
            return False
        return self.policy.uses_hints or (self.policy is Policy.PPC and self.hints)
