"""The SM on the command line, one set of options for every command that runs or builds it
(``run``, ``compare``, ``demo``, ``cosim``, ``power``, ``verilog``, ``synth``, ``bitstream``).

An SM is a *base* — a named configuration of :data:`reconverge.golden.params.CONFIGS`
(``--config NAME``, docs/architecture.md) or, for the golden commands without ``--config``, the
command's own W and L with every other field the dataclasses' default — and the options given,
each replacing one field of the base. An option not given keeps the base's value; ``--warp-size``
alone also caps the base's L at the new W. The commands that build the hardware SM start from
the named machine's hardware (:meth:`~reconverge.golden.params.Machine.hardware`: golden's
caches left out), and refuse a cache given with ``--icache`` or ``--l1d``.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict, fields, replace
from typing import Any

from reconverge.golden import cli
from reconverge.golden.config import Cache, Latencies, Scheduler, ScoreboardKind, SMConfig
from reconverge.golden.geometry import Geometry
from reconverge.golden.memmap import MemoryMap
from reconverge.golden.params import CONFIGS, SMParams
from reconverge.golden.policies import HARDWARE, variant

#: The longest latency of the hardware SM, in cycles: its write-back delay lines hold a stage
#: per cycle (the evaluation configuration's longest is global memory's 220).
MAX_HARDWARE_LATENCY = 1024

#: Geometry fields a command-line option of the same name overrides.
GEOMETRY_OPTIONS = tuple(f.name for f in fields(Geometry) if f.name != "regs")


def add_sm_options(
    p: argparse.ArgumentParser,
    *,
    config: str | None = None,
    warp_size: int = Geometry.warp_size,
    simd_width: int = Geometry.simd_width,
) -> None:
    """``--config`` (default ``config``; None: the base is ``warp_size`` x ``simd_width`` and
    the defaults), the geometry, scheduler, scoreboard, latency, memory and watchdog options.
    The launch options (``cli.add_launch_options``, with ``--warp-size``) must be added with
    ``warp=None``."""
    p.add_argument(
        "--config", choices=sorted(CONFIGS), default=config,
        help="the named SM configuration the other options modify"
        + (f" (default {config})" if config else f" (default: W={warp_size} L={simd_width})"),
    )  # fmt: skip
    p.add_argument("--simd-width", type=cli.parse_int, help="lanes L (at most W)")
    p.add_argument("--warps", type=cli.parse_int, help="warp slots of the SM")
    p.add_argument("--stack-depth", type=cli.parse_int)
    p.add_argument("--split-table", type=cli.parse_int)
    p.add_argument("--reconv-table", type=cli.parse_int)
    p.add_argument("--scheduler", choices=[s.value for s in Scheduler])
    p.add_argument("--scoreboard", choices=[s.value for s in ScoreboardKind])
    p.add_argument(
        "--scoreboard-entries", type=cli.parse_int,
        help="scoreboard entries per warp (seed 002 Fig 8; default: never full)",
    )  # fmt: skip
    p.add_argument(
        "--latency", action="append", default=[], metavar="NAME=CYCLES", help="e.g. global=40"
    )
    p.add_argument("--line-bytes", type=cli.parse_int)
    for name, what in (("icache", "instruction cache"), ("l1d", "L1 data cache")):
        p.add_argument(
            f"--{name}", metavar="off|NAME=VALUE,...",
            help=f"golden's {what} (docs/architecture.md, rules 7 and 8): off, or the base's "
            f"with fields replaced ({', '.join(CACHE_FIELDS)}; all but hit without one)",
        )  # fmt: skip
    p.add_argument("--shared-banks", type=cli.parse_int)
    p.add_argument("--max-cycles", type=cli.parse_int)
    p.set_defaults(sm_base=(warp_size, simd_width))


def _override(value: Any, **changes: Any) -> Any:
    """``dataclasses.replace`` with only the changes that were given (not None)."""
    return replace(value, **{k: v for k, v in changes.items() if v is not None})


#: The fields of ``--icache`` and ``--l1d`` (those of :class:`Cache`; ``line`` its line size).
CACHE_FIELDS = {"size": "size", "ways": "ways", "line": "line_bytes", "mshrs": "mshrs",
                "hit": "hit"}  # fmt: skip


def _base(ns: argparse.Namespace, hardware: bool = False) -> tuple[Geometry, SMConfig]:
    """The base's geometry and configuration (``hardware``: without golden's caches)."""
    if ns.config is not None:
        named = CONFIGS[ns.config]
        return named.geometry, named.config.uncached() if hardware else named.config
    warp_size, simd_width = ns.sm_base
    return Geometry(warp_size=warp_size, simd_width=simd_width), SMConfig()


def cache_of(option: str, spec: str | None, base: Cache | None) -> Cache | None:
    """The cache of ``--icache``/``--l1d`` (``option``) ``spec``: ``off`` (None), or ``base``
    with the fields given (without a base, every field but ``hit``); not given: ``base``."""
    if spec is None:
        return base
    if spec == "off":
        return None
    values: dict[str, int] = {}
    for pair in spec.split(","):
        key, _, value = pair.partition("=")
        if key not in CACHE_FIELDS or not value:
            raise cli.UsageError(
                f"--{option} takes off or NAME=VALUE,... with NAME one of "
                f"{', '.join(CACHE_FIELDS)}, not {pair!r}"
            )
        try:
            values[CACHE_FIELDS[key]] = cli.parse_int(value)
        except argparse.ArgumentTypeError as exc:
            raise cli.UsageError(f"--{option} {pair}: {exc}") from None
    try:
        if base is not None:
            return replace(base, **values)
        return Cache(**values)
    except TypeError:
        missing = [k for k, f in CACHE_FIELDS.items() if f not in values and k != "hit"]
        raise cli.UsageError(
            f"--{option} {spec}: the base has no {option}, so give {', '.join(missing)} too"
        ) from None
    except ValueError as exc:
        raise cli.UsageError(f"--{option} {spec}: {exc}") from None


def latencies_of(pairs: list[str], base: Latencies) -> Latencies:
    """``base`` with each ``NAME=CYCLES`` of ``--latency`` applied."""
    names = {n.rstrip("_"): n for n in Latencies.__dataclass_fields__}
    values: dict[str, int] = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        if key not in names or not value:
            raise cli.UsageError(
                f"--latency takes NAME=CYCLES with NAME one of {', '.join(sorted(names))}, "
                f"not {pair!r}"
            )
        values[names[key]] = cli.parse_int(value)
        if values[names[key]] > cli.MAX_LAUNCH:
            raise cli.UsageError(f"--latency {pair}: at most {cli.MAX_LAUNCH} cycles")
    try:
        return replace(base, **values)
    except ValueError as exc:
        raise cli.UsageError(str(exc)) from None


def geometry_of(ns: argparse.Namespace) -> Geometry:
    """The base's geometry with the geometry options given."""
    base, _ = _base(ns)
    changes = {name: getattr(ns, name) for name in GEOMETRY_OPTIONS}
    if ns.warp_size is not None and ns.simd_width is None:
        changes["simd_width"] = min(base.simd_width, ns.warp_size)
    try:
        return _override(base, **changes)
    except ValueError as exc:
        raise cli.UsageError(str(exc)) from None


def config_of(ns: argparse.Namespace, *, hardware: bool = False, **switches: Any) -> SMConfig:
    """The base's configuration with the options given and the policy ``switches`` (fields of
    :class:`SMConfig`; None keeps the base's); ``hardware``: the base without its caches."""
    _, base = _base(ns, hardware)
    caches = {
        "icache": cache_of("icache", ns.icache, base.icache),
        "l1d": cache_of("l1d", ns.l1d, base.l1d),
    }
    try:
        return _override(
            replace(base, icache=None, l1d=None),  # the caches are set with the line size
            scheduler=None if ns.scheduler is None else Scheduler(ns.scheduler),
            scoreboard=None if ns.scoreboard is None else ScoreboardKind(ns.scoreboard),
            latencies=latencies_of(ns.latency, base.latencies),
            line_bytes=ns.line_bytes,
            shared_banks=ns.shared_banks,
            max_cycles=ns.max_cycles,
            **switches,
            **caches,
        )
    except ValueError as exc:
        raise cli.UsageError(str(exc)) from None


def memmap_of(ns: argparse.Namespace) -> MemoryMap | None:
    """The named configuration's memory windows (None without ``--config``: the default)."""
    return None if ns.config is None else CONFIGS[ns.config].memmap


def add_hardware_options(p: argparse.ArgumentParser, config: str) -> None:
    """The SM options of the commands that build the hardware SM (:func:`params_of`): the
    policy and its switches, and the instruction store, on the named configuration ``config``."""
    p.add_argument(
        "--policy", choices=[v.name for v in HARDWARE], default=None,
        help=f"the policy variant (default: --config {config}'s)",
    )  # fmt: skip
    p.add_argument("--hws", action="store_true", help="hybrid warp size (seed 001)")
    p.add_argument(
        "--hints", action=argparse.BooleanOptionalAction, default=None,
        help="ppc: explicit (with reconvergence PCs) or implicit (--no-hints: ppc-implicit)",
    )  # fmt: skip
    p.add_argument("--imem-words", type=cli.parse_int, default=None,
                   help="32-bit words of the instruction store")  # fmt: skip
    add_sm_options(p, config=config)


def params_of(ns: argparse.Namespace) -> SMParams:
    """The hardware SM of the options of :func:`add_hardware_options`; an invalid combination
    is a one-line usage error (:class:`SMParams` and its parts validate)."""
    chosen = None if ns.policy is None else variant(ns.policy)
    config = config_of(
        ns,
        hardware=True,
        policy=None if chosen is None else chosen.policy,
        hws=ns.hws or None,
        hints=ns.hints if chosen is None or chosen.hints else False,
    )
    for name, cycles in asdict(config.latencies).items():
        if cycles > MAX_HARDWARE_LATENCY:
            raise cli.UsageError(
                f"--latency {name.rstrip('_')}={cycles}: the hardware SM takes at most "
                f"{MAX_HARDWARE_LATENCY} cycles (its delay lines hold a stage per cycle)"
            )
    try:
        return _override(
            CONFIGS[ns.config].hardware(),
            geometry=geometry_of(ns),
            config=config,
            imem_words=ns.imem_words,
        )
    except ValueError as exc:
        raise cli.UsageError(str(exc)) from None
