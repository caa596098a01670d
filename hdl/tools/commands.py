"""``reconverge verilog`` and ``reconverge synth``: the HDL blocks from the command line.

    reconverge verilog BLOCK [--param k=v ...] [-o FILE.v] [--json]
    reconverge synth BLOCK [--param k=v ...] [--no-pnr] [--keep DIR] [--json]

Amaranth and the synthesis tools are imported only when one of these commands runs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from reconverge.golden.blocks.base import BlockParams
from reconverge.golden.command import EXIT_OK, Command
from reconverge.golden.errors import UserError
from reconverge.hdl.registry import BLOCKS, BlockSpec, lookup


def _blocks_epilog() -> str:
    lines = ["blocks (parameters with defaults):"]
    lines += [f"  {b.name}: {b.describe()} — {b.help}" for b in BLOCKS.values()]
    return "\n".join(lines)


def _configure_block(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = _blocks_epilog()
    p.add_argument("block", help="block name: " + ", ".join(BLOCKS))
    p.add_argument("--param", action="append", default=[], metavar="K=V", help="block parameter")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _block(ns: argparse.Namespace) -> tuple[BlockSpec, BlockParams]:
    spec = lookup(ns.block)
    return spec, spec.parse(ns.param)


def verilog(params: BlockParams) -> tuple[str, Any]:
    """(Verilog text, component) of a block with these parameters."""
    from reconverge.hdl.tools.verilog import to_verilog

    component = lookup(params.name).build(params)
    return to_verilog(component, params.name), component


def _configure_verilog(p: argparse.ArgumentParser) -> None:
    _configure_block(p)
    p.add_argument("-o", "--output", help="Verilog file to write (default: standard output)")


def _cmd_verilog(ns: argparse.Namespace) -> int:
    spec, params = _block(ns)
    text, _ = verilog(params)
    if ns.output:
        try:
            Path(ns.output).write_text(text)
        except OSError as exc:
            raise UserError(f"{ns.output}: {exc.strerror or exc}") from None
    elif not ns.json:
        print(text, end="")
    if ns.json:
        ports = [
            {"name": p.name, "direction": p.direction, "bits": p.bits} for p in params.flat_ports
        ]
        info = {
            "block": spec.name,
            "params": params.values(),
            "module": spec.name,
            "file": ns.output,
            "latency": params.latency,
            "ports": ports,
            "lines": text.count("\n"),
        }
        print(json.dumps(info, indent=1))
    elif ns.output:
        print(f"{ns.output}: module {spec.name} ({text.count(chr(10))} lines)")
    return EXIT_OK


def _configure_synth(p: argparse.ArgumentParser) -> None:
    _configure_block(p)
    p.add_argument("--no-pnr", action="store_true", help="skip nextpnr (no Fmax)")
    p.add_argument("--keep", metavar="DIR", help="keep the intermediate files in DIR")


def format_synth(r: dict[str, Any]) -> str:
    g, e = r["generic"], r["ecp5"]
    params = ", ".join(f"{k}={v}" for k, v in r["params"].items())
    lines = [
        f"{r['block']} ({params})",
        f"  generic: {g['cells']} cells, {g['flip_flops']} flip-flops, "
        f"~{g['transistors']}{'+' if g['transistors_lower_bound'] else ''} transistors (CMOS)",
        f"  {e['device']}: {e['luts']} LUT4 (incl. 2 per CCU2C), {e['flip_flops']} flip-flops "
        f"in the block; harness {e['harness_flip_flops']} flip-flops",
    ]
    if "fmax_mhz" in e:
        used = ", ".join(f"{k} {v}" for k, v in e["utilization"].items())
        lines.append(f"  placed and routed: {used}; Fmax {e['fmax_mhz']} MHz")
    return "\n".join(lines)


def _cmd_synth(ns: argparse.Namespace) -> int:
    from reconverge.hdl.tools.synth import synth

    _, params = _block(ns)
    result = synth(params, place_and_route=not ns.no_pnr, workdir=ns.keep)
    print(json.dumps(result, indent=1) if ns.json else format_synth(result))
    return EXIT_OK


HDL_COMMANDS = (
    Command("verilog", "generate the Verilog of an HDL block", _configure_verilog, _cmd_verilog),
    Command(
        "synth",
        "synthesise an HDL block: Yosys cell counts and transistors, ECP5 LUTs/FFs/Fmax",
        _configure_synth,
        _cmd_synth,
    ),
)
