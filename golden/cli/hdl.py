"""``reconverge verilog``, ``synth``, ``area`` and ``bitstream``: the HDL blocks and the SM from
the command line.

    reconverge verilog BLOCK [--param k=v ...] [-o FILE.v] [--json]
    reconverge verilog sm [FILE|KERNEL] [SM options] [-o FILE.v] [--json]
    reconverge synth BLOCK|sm [...] [--no-pnr] [--keep DIR] [--device auto|25k|45k|85k] [--json]
    reconverge bitstream --board ulx3s-85f|icebreaker FILE|KERNEL [SM options] [-o FILE]
        [--stop-after synth|pnr] [--divider N] [--keep DIR] [--json]

``sm`` without a program is the bare SM (``hdl.sm.top.SM``, the ports of docs/sm-hardware.md);
with an ELF, ``.S`` file or suite kernel it is the board top (``hdl.sm.system.SMSystem``: the SM
with that program and its data in block RAM), the kernel compiled and bound to its inputs as
``reconverge run`` and ``cosim`` do. The SM options are cosim's (``--config``, ``--policy``,
``--hws``, ``--no-hints``, geometry, latencies; :func:`reconverge.golden.cli.options.params_of`).

Amaranth and the synthesis tools are imported only when one of these commands runs.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from reconverge.golden import cli
from reconverge.golden.blocks.base import BlockParams
from reconverge.golden.cli.command import EXIT_OK, Command
from reconverge.golden.cli.options import add_hardware_options, params_of
from reconverge.golden.cli.sm import add_kernel_options, workload_of
from reconverge.golden.cost.sm import stage_luts
from reconverge.golden.output import check_output, write_output
from reconverge.golden.params import SMParams
from reconverge.hdl.registry import BLOCKS, BlockSpec, lookup
from reconverge.hdl.tools.sm_design import SM_NAME, SMDesign, bare_sm, synth_sm

#: Named configuration ``verilog sm`` / ``synth sm`` start from.
DEFAULT_CONFIG = {"verilog": "cosim", "synth": "synth", "area": "synth", "bitstream": "synth"}


def _blocks_epilog() -> str:
    lines = ["blocks (parameters with defaults):"]
    lines += [f"  {b.name}: {b.describe()} — {b.help}" for b in BLOCKS.values()]
    lines += [
        f"  {SM_NAME} [FILE|KERNEL]: the whole SM (docs/sm-hardware.md), configured by the SM "
        "options; with a program, the board top with the program and its data in block RAM"
    ]
    return "\n".join(lines)


def _configure_design(p: argparse.ArgumentParser, command: str) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = _blocks_epilog()
    p.add_argument(
        "design", metavar="BLOCK", help="block name (" + ", ".join(BLOCKS) + f") or {SM_NAME}"
    )
    p.add_argument("program", nargs="?", help=f"{SM_NAME}: ELF file, .S assembly or suite kernel")
    p.add_argument("--param", action="append", default=[], metavar="K=V", help="block parameter")
    _add_sm_options(p, command)


def _add_sm_options(p: argparse.ArgumentParser, command: str) -> None:
    """The SM options (cosim's), each defaulting to the named configuration's value."""
    first_sm_action = len(p._actions)
    cli.add_launch_options(p, grid=None, block=None, warp=None)
    add_kernel_options(p)
    add_hardware_options(p, config=DEFAULT_CONFIG[command])
    # the SM options, to tell which were given (argparse keeps no groups of its own)
    sm_actions = [a for a in p._actions[first_sm_action:] if a.dest != "json"]
    p.set_defaults(sm_actions=sm_actions)


def _sm_design(ns: argparse.Namespace) -> SMDesign:
    """The bare SM or, with a program, the board top (program bound as cosim binds it)."""
    params = params_of(ns)
    if ns.program is None:
        given = [a.option_strings[0] for a in ns.sm_actions if a.dest in _LAUNCH_DESTS
                 and getattr(ns, a.dest) != a.default]  # fmt: skip
        if given:
            need = "needs" if len(given) == 1 else "need"
            raise cli.UsageError(f"{', '.join(given)} {need} a program (FILE or KERNEL)")
        return bare_sm(params, ns.config)
    from reconverge.golden.memory import GlobalMemory
    from reconverge.golden.sm.program import Program
    from reconverge.testbench.rtl import instruction_store, launch_args

    hints = params.config.explicit
    work = workload_of(ns, ns.program)
    launch = work.sm_launch(params, ns.step_limit)
    image = work.image_for(hints)
    instruction_store(Program(image), params)  # code outside the store: one line
    try:
        GlobalMemory(params.memmap).load_image(image)
    except ValueError as exc:  # an image outside the configuration's global memory
        raise cli.UsageError(str(exc)) from None
    g = params.geometry
    warps = -(-launch.block // g.warp_size)
    if warps > g.warps:
        raise cli.UsageError(
            f"a block of {launch.block} threads needs {warps} warps of {g.warp_size}, more than "
            f"the {g.warps} warp slots of the SM (--size, --block, --warps)"
        )
    args = launch_args(launch)

    def board() -> Any:
        from reconverge.hdl.sm.system import SMSystem

        return SMSystem(params, image, launch.grid, launch.block, args)

    return SMDesign(params, ns.config, work.source, board, f"{SM_NAME}_system")


#: Options that bind a program to its launch (meaningless for the bare SM).
_LAUNCH_DESTS = ("grid", "block", "arg", "allocator", "regs", "size", "seed", "step_limit")


def _design(ns: argparse.Namespace) -> tuple[BlockSpec, BlockParams] | SMDesign:
    """The block with its parameters, or the SM; options of the other kind are a usage
    error."""
    if ns.design == SM_NAME:
        if ns.param:
            raise cli.UsageError(f"--param is for blocks; {SM_NAME} takes the SM options")
        return _sm_design(ns)
    given = [a.option_strings[0] for a in ns.sm_actions if getattr(ns, a.dest) != a.default]
    if ns.program is not None or given:
        extra = ", ".join(([ns.program] if ns.program else []) + given)
        raise cli.UsageError(f"{extra}: only for {SM_NAME}, not for the block {ns.design}")
    spec = lookup(ns.design)
    return spec, spec.parse(ns.param)


def verilog(params: BlockParams) -> tuple[str, Any]:
    """(Verilog text, component) of a block with these parameters."""
    from reconverge.hdl.tools.verilog import to_verilog

    component = lookup(params.name).build(params)
    return to_verilog(component, params.name), component


def component_ports(component: Any) -> list[dict[str, Any]]:
    """Name (Verilog, ``group__member``), direction and width of every port of a component."""
    from amaranth.hdl import Value
    from amaranth.lib.wiring import In

    return [
        {
            "name": "__".join(str(part) for part in path),
            "direction": "in" if member.flow is In else "out",
            "bits": len(Value.cast(value)),
        }
        for path, member, value in component.signature.flatten(component)
    ]


def check_buildable(params: SMParams) -> Any:
    """A usage error when a block the SM needs cannot be built with the parameters these
    options derive (its parameter dataclass refuses them). The blocks are derived as the area
    model derives them (golden/cost/sm.py, from the Geometry's own derivations), in
    milliseconds, where the HDL finds out only while elaborating the SM (a minute)."""
    from reconverge.golden.cost.sm import sm

    try:
        return sm(params)  # the SM's inventory, which the area command prices
    except ValueError as exc:
        raise cli.UsageError(f"the SM of these options cannot be built: {exc}") from None


def buildable(design: SMDesign) -> Any:
    """The elaboratable of ``design``, after :func:`check_buildable`."""
    check_buildable(design.params)
    return design.build()


def _configure_verilog(p: argparse.ArgumentParser) -> None:
    _configure_design(p, "verilog")
    p.add_argument("-o", "--output", help="Verilog file to write (default: standard output)")


def _cmd_verilog(ns: argparse.Namespace) -> int:
    from reconverge.hdl.tools.verilog import to_verilog

    if ns.output:
        check_output(ns.output)  # before the generation, which takes seconds for an SM
    design = _design(ns)
    if isinstance(design, SMDesign):
        component = buildable(design)
        text, module = to_verilog(component, design.module), design.module
        info = {"block": SM_NAME, "params": design.json(), "module": module}
        ports = component_ports(component)
    else:
        spec, params = design
        text, _ = verilog(params)
        module = spec.name
        info = {"block": spec.name, "params": params.values(), "module": module}
        info["latency"] = params.latency
        ports = [{"name": p.name, "direction": p.direction, "bits": p.bits}
                 for p in params.flat_ports]  # fmt: skip
    if ns.output:
        write_output(ns.output, text)
    elif not ns.json:
        print(text, end="")
    if ns.json:
        info.update({"file": ns.output, "ports": ports, "lines": text.count("\n")})
        print(json.dumps(info, indent=1))
    elif ns.output:
        print(f"{ns.output}: module {module} ({text.count(chr(10))} lines)")
    return EXIT_OK


def _configure_synth(p: argparse.ArgumentParser) -> None:
    from reconverge.hdl.tools.synth import DEVICES

    _configure_design(p, "synth")
    p.add_argument("--no-pnr", action="store_true", help="skip nextpnr (no Fmax)")
    p.add_argument("--keep", metavar="DIR", type=cli.parse_folder,
                   help="keep the intermediate files in DIR")  # fmt: skip
    p.add_argument(
        "--device",
        choices=("auto", *DEVICES),
        default="auto",
        help="ECP5 part (LFE5U, CABGA381); auto: the smallest the design fits",
    )
    p.add_argument(
        "--pnr-seed", type=int, default=1, metavar="N",
        help="nextpnr's placer seed (another seed when placement or routing stalls)",
    )  # fmt: skip


def format_synth(r: dict[str, Any]) -> str:
    g, e = r["generic"], r["ecp5"]
    title = r.get("label") or f"{r['block']} (" + ", ".join(
        f"{k}={v}" for k, v in r["params"].items()
    ) + ")"  # fmt: skip
    lines = [
        title,
        f"  generic: {g['cells']} cells, {g['flip_flops']} flip-flops, "
        f"~{g['transistors']}{'+' if g['transistors_lower_bound'] else ''} transistors (CMOS)",
    ]
    if g.get("memories"):
        lines.append(
            f"  memories (not in the cells or the transistors): {len(g['memories'])}, "
            f"{g['memory_bits']} bits"
        )
    ram = "".join(
        f", {e[key]} {name}"
        for key, name in (("ebr", "EBR"), ("lutram", "DPR16X4"), ("dsp", "MULT18X18D"))
        if e.get(key)
    )
    harness = f"; harness {e['harness_flip_flops']} flip-flops" if e["harness_flip_flops"] else ""
    lines.append(
        f"  {e['device']}: {e['luts']} LUT4 (incl. 2 per CCU2C), {e['flip_flops']} flip-flops"
        f"{ram} in the {'block' if harness else 'design'}{harness}"
    )
    for name, sub in e.get("submodules", {}).items():
        lines.append(f"    {name}: {sub['luts']} LUT4, {sub['flip_flops']} FFs, {sub['ebr']} EBR")
    slow = e.get("slow_paths")
    if slow and slow["over"]:
        lines.append(
            f"  estimated before place and route: {slow['over']} of {slow['endpoints']} "
            f"endpoints over {slow['period_ns']:g} ns (latest {slow['latest_ns']} ns); "
            "the latest from each start:"
        )
        lines += [
            f"    {p['arrival_ns']} ns: {p['start']} -> {p['endpoint']} ({p['cells']} cells)"
            for p in slow["by_start"]
        ]
    if "fmax_mhz" in e:
        used = ", ".join(f"{k} {v}" for k, v in e["utilization"].items())
        lines.append(f"  placed and routed: {used}; Fmax {e['fmax_mhz']} MHz")
        if e.get("critical_path"):
            path = e["critical_path"]
            lines.append(
                f"  critical path: {path['from']} to {path['to']}, {path['ns']} ns through "
                f"{path['logic_cells']} logic cells"
            )
    lines.append(f"  {r['seconds']} s")
    return "\n".join(lines)


def _cmd_synth(ns: argparse.Namespace) -> int:
    from reconverge.hdl.tools.synth import synth

    design = _design(ns)
    options = {
        "place_and_route": not ns.no_pnr,
        "workdir": ns.keep,
        "part": ns.device,
        "seed": ns.pnr_seed,
    }
    if isinstance(design, SMDesign):
        check_buildable(design.params)
        result = synth_sm(design, **options)
    else:
        result = synth(design[1], **options)
    print(json.dumps(result, indent=1) if ns.json else format_synth(result))
    return EXIT_OK


def _configure_area(p: argparse.ArgumentParser) -> None:
    _configure_design(p, "area")
    p.add_argument(
        "--synth", action="store_true",
        help="also synthesise the design (Yosys, no place and route) and show model / synthesis",
    )  # fmt: skip


def model_area(design: tuple[BlockSpec, BlockParams] | SMDesign) -> dict[str, Any]:
    """The analytical model's area (golden/cost) of a block or of the bare SM, per part."""
    from reconverge.golden.cost.blocks import inventory
    from reconverge.golden.cost.model import area, coefficients

    if isinstance(design, SMDesign):
        inv, label = check_buildable(design.params), design.label()
        info: dict[str, Any] = {"block": SM_NAME, "params": design.json()}
    else:
        spec, params = design
        inv, label = inventory(params), f"{spec.name} ({params.describe()})"
        info = {"block": spec.name, "params": params.values()}
    fitted = coefficients().provenance
    return {
        **info,
        "label": label,
        "model": {part: a.json() for part, a in area(inv).items()},
        "primitives": inv.json(),
        "coefficients": {"fitted": fitted["fitted"], "tools": fitted["tools"]},
    }


def format_area(r: dict[str, Any]) -> str:
    model, synth = r["model"], r.get("synth")
    lines = [
        r["label"],
        f"  area model (golden/cost; coefficients fitted {r['coefficients']['fitted']} to "
        f"{r['coefficients']['tools']}):",
    ]
    header = f"  {'part':<22}{'transistors':>12}{'LUT4':>9}{'FFs':>7}{'RAM bits':>10}"
    if synth:
        header += f"{'synth LUT4':>12}{'model/synth':>13}"
    lines.append(header)
    for part, a in model.items():
        line = f"  {part:<22}{a['transistors']:>12}{a['luts']:>9}{a['ffs']:>7}{a['ram_bits']:>10}"
        found = synth and synth["luts"].get(part)
        if found:
            line += f"{found:>12}{a['luts'] / found:>13.2f}"
        lines.append(line)
    if synth:
        t = model["total"]["transistors"]
        lines.append(
            f"  synthesis: {synth['transistors']} transistors (model / synthesis "
            f"{t / synth['transistors']:.2f}), {synth['flip_flops']} flip-flops"
        )
    return "\n".join(lines)


def _synth_by_part(design: tuple[BlockSpec, BlockParams] | SMDesign) -> dict[str, Any]:
    """Synthesis figures to set beside the model: transistors, flip-flops, LUT4s in total and
    (for the SM) per stage, named as the model's parts."""
    from reconverge.hdl.tools.synth import synth

    if isinstance(design, SMDesign):
        r = synth_sm(design, place_and_route=False)
        luts = stage_luts(r["ecp5"]["submodules"])
    else:
        r, luts = synth(design[1], place_and_route=False), {}
    luts["total"] = r["ecp5"]["luts"]
    return {
        "transistors": r["generic"]["transistors"],
        "flip_flops": r["ecp5"]["flip_flops"],
        "luts": luts,
    }


def _cmd_area(ns: argparse.Namespace) -> int:
    if ns.design == SM_NAME and ns.program is not None:
        raise cli.UsageError(f"area models the bare {SM_NAME}: give no program")
    design = _design(ns)
    result = model_area(design)
    if ns.synth:
        result["synth"] = _synth_by_part(design)
    print(json.dumps(result, indent=1) if ns.json else format_area(result))
    return EXIT_OK


def _configure_bitstream(p: argparse.ArgumentParser) -> None:
    from reconverge.hdl.tools.bitstream import STEPS
    from reconverge.hdl.tools.boards import BOARDS

    p.add_argument("--board", required=True, choices=BOARDS, help="the board to build for")
    p.add_argument("program", help="ELF file, .S assembly or suite kernel")
    _add_sm_options(p, "bitstream")
    p.add_argument("-o", "--output", help="bitstream file (default: build/PROGRAM-BOARD.bit|bin)")
    p.add_argument("--stop-after", choices=STEPS, help="stop after synthesis or place and route")
    p.add_argument(
        "--divider", type=cli.parse_positive, default=None,
        help="oscillator cycles per SM cycle (the SM's clock enable; default: the board's)",
    )  # fmt: skip
    p.add_argument("--keep", metavar="DIR", type=cli.parse_folder,
                   help="keep the intermediate files in DIR")  # fmt: skip


def _cmd_bitstream(ns: argparse.Namespace) -> int:
    from pathlib import Path

    from reconverge.golden.cost.model import area
    from reconverge.hdl.tools.bitstream import build, format_result, refuse_estimate
    from reconverge.hdl.tools.boards import BOARDS

    board = BOARDS[ns.board]
    if ns.output:
        output = check_output(ns.output)
    else:
        output = Path("build") / f"{Path(ns.program).stem}-{board.name}.{board.family.bitstream}"
        output.parent.mkdir(exist_ok=True)
    design = _sm_design(ns)
    refuse_estimate(area(check_buildable(design.params))["total"].luts, board)
    result = build(
        design.build,
        board,
        divider=ns.divider,
        output=output,
        stop_after=ns.stop_after,
        workdir=Path(ns.keep) if ns.keep else None,
    )
    result = {"label": design.label(), "params": design.json(), **result}
    print(json.dumps(result, indent=1) if ns.json else format_result(result, design.label()))
    return EXIT_OK


COMMANDS = (
    Command("verilog", _configure_verilog, _cmd_verilog),
    Command("synth", _configure_synth, _cmd_synth),
    Command("area", _configure_area, _cmd_area),
    Command("bitstream", _configure_bitstream, _cmd_bitstream),
)
