"""The divergence policies and their variants: the one registry that golden, the HDL, the
testbenches, the evaluation and the command line read (DESIGN.md, "Policies").

A *policy* (:class:`Policy`) is a reconvergence mechanism of the seeds. A *variant*
(:class:`Variant`) is what a user chooses and what every table, co-simulation cell and file
names: a policy in one of its modes (``ppc`` with hints, ``ppc-implicit`` without) or dynamic
warp formation in place of a policy (``dwf``, ``en-dwf``: golden only). Each variant has one
spelling, :attr:`Variant.name`, the same on the command line, in tables, in JSON and in the
documents; :attr:`Mechanism.label` appends `` +hws`` for the hybrid-warp-size switch (seed 001).

A static variant names its divergence unit by the block name the golden twins and the HDL
registry share (``sps_stack``, ``stackless``, ``dual_path_stack``, ``split_tables``) and the
unit parameters the variant fixes (:attr:`Variant.unit_params`): golden's SM builds its unit
from them (``golden.blocks.units``) and so does the HDL SM (``hdl/sm/divergence.py``).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
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

    @property
    def concurrent(self) -> bool:
        """Whether several splits of a warp may have instructions in flight at once, so the
        scoreboard must tell their threads apart (the masked scoreboard, seed 002 Sec 3.3.2)."""
        return self in (Policy.MP, Policy.MP_OREC, Policy.DPS)


class WarpFormation(enum.Enum):
    """Static warps (each with its divergence unit), or dynamic warp formation in golden:
    DWF (seed 001 Sec 3.6) and en-DWF (Sec 4.4), which replace the per-warp policy."""

    STATIC = "static"
    DWF = "dwf"
    EN_DWF = "en-dwf"


@dataclass(frozen=True)
class Variant:
    """One divergence mechanism as a user picks it (module docstring)."""

    name: str
    policy: Policy
    #: One line: what it is and where the seeds describe it (``reconverge demo``'s legend).
    summary: str
    hints: bool = True
    formation: WarpFormation = WarpFormation.STATIC
    #: The block name of its divergence unit ("" under dynamic warp formation: golden only).
    unit: str = ""
    #: The unit's parameters this variant fixes (field name -> value of the block's params).
    unit_params: Mapping[str, object] = field(default_factory=dict)

    def __hash__(self) -> int:
        return hash(self.name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Variant) and other.name == self.name

    @property
    def hardware(self) -> bool:
        """Whether the HDL SM elaborates it (every static variant)."""
        return bool(self.unit)

    @property
    def dynamic(self) -> bool:
        """Whether warps are formed dynamically (dwf, en-dwf)."""
        return self.formation is not WarpFormation.STATIC

    @property
    def explicit(self) -> bool:
        """Whether it consumes reconvergence PCs (hints or the binary's IPDOMs): ppc only in
        explicit mode, dynamic warp formation never."""
        if self.dynamic:
            return False
        return self.policy.uses_hints or (self.policy is Policy.PPC and self.hints)


def _dual(policy: Policy, hints: bool) -> Mapping[str, object]:
    return {"policy": policy, "hints": hints}


#: Every variant, in the order tables list them.
VARIANTS: tuple[Variant, ...] = (
    Variant("sps", Policy.SPS, "IPDOM reconvergence stack (seed 002 Sec 2.2), the baseline",
            unit="sps_stack"),
    Variant("stackless", Policy.STACKLESS,
            "per-thread PC and SP, common PC = min(SP:PC) (seed 000)", unit="stackless"),
    Variant("dps", Policy.DPS, "dual-path stack (seed 003)", unit="dual_path_stack",
            unit_params=_dual(Policy.DPS, True)),
    Variant("ppc", Policy.PPC,
            "dual-path stack with paired-path comparison, with hints (seed 003)",
            unit="dual_path_stack", unit_params=_dual(Policy.PPC, True)),
    Variant("ppc-implicit", Policy.PPC, "paired-path comparison without hints (seed 003)",
            hints=False, unit="dual_path_stack", unit_params=_dual(Policy.PPC, False)),
    Variant("mp", Policy.MP, "multi-path: split table + reconvergence table (seed 002 Sec 3)",
            unit="split_tables", unit_params={"orec": False}),
    Variant("mp-orec", Policy.MP_OREC,
            "multi-path with opportunistic early reconvergence (seed 002 Sec 4)",
            unit="split_tables", unit_params={"orec": True}),
    Variant("dwf", Policy.SPS, "dynamic warp formation (seed 001 Sec 3.6), instead of a policy",
            formation=WarpFormation.DWF),
    Variant("en-dwf", Policy.SPS, "enhanced dynamic warp formation (seed 001 Sec 4.4)",
            formation=WarpFormation.EN_DWF),
)  # fmt: skip
#: The variants the HDL SM elaborates.
HARDWARE: tuple[Variant, ...] = tuple(v for v in VARIANTS if v.hardware)
NAMES: tuple[str, ...] = tuple(v.name for v in VARIANTS)
#: What `` +hws`` means in a label (the legend's last line).
HWS_SUMMARY = "hybrid warp size: squeeze active threads into fewer issue passes (seed 001)"
_BY_NAME = {v.name: v for v in VARIANTS}


def variant(name: str) -> Variant:
    """The variant of a name; ValueError naming the known ones."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown policy {name!r} (known: {', '.join(NAMES)})") from None


def variant_of(
    policy: Policy, hints: bool = True, formation: WarpFormation = WarpFormation.STATIC
) -> Variant:
    """The variant of a policy, its hints switch and the warp formation (the hints switch
    only matters for ppc, the policy not at all under dynamic warp formation)."""
    for v in VARIANTS:
        if v.formation is formation and (
            formation is not WarpFormation.STATIC
            or (v.policy is policy and (v.hints == hints or policy is not Policy.PPC))
        ):
            return v
    raise AssertionError(f"no variant of {policy}, hints {hints}, {formation}")


@dataclass(frozen=True)
class Mechanism:
    """A divergence mechanism as a comparison names it: a policy variant with the hybrid warp
    size switch off or on (seed 001). One column of ``reconverge compare``, one SM of
    docs/area.md, one build of the co-simulation."""

    variant: Variant
    hws: bool = False

    @property
    def label(self) -> str:
        """The variant's name, with `` +hws`` when the hybrid warp size is on."""
        return self.variant.name + (" +hws" if self.hws else "")


#: What ``--hws`` of a comparison takes: the hws settings it crosses the variants with.
HWS_CHOICES: dict[str, tuple[bool, ...]] = {"off": (False,), "on": (True,), "both": (False, True)}


def mechanisms(names: str, hws: str = "off") -> list[Mechanism]:
    """``all`` or a comma list of variant names, crossed with hws ``off``, ``on`` or
    ``both`` (hws the outer loop); ValueError naming a bad name or setting."""
    chosen = VARIANTS if names == "all" else tuple(variant(n.strip()) for n in names.split(","))
    if hws not in HWS_CHOICES:
        raise ValueError(f"hws must be off, on or both, not {hws!r}")
    return [Mechanism(v, h) for h in HWS_CHOICES[hws] for v in chosen]
