"""The word-level inventory of a design: what the HDL builds, counted in the area model's
primitives (:class:`reconverge.golden.cost.inventory.Kind`) from Yosys's word-level cells
after ``proc``, ``flatten`` and ``opt`` (before any technology mapping).

The analytical model counts the same primitives from the geometry alone; this is how the
tests hold its counts to the HDL, part by part of the structure (docs/area.md, "The model").

A memory counts a copy of its bits per read port, as synthesis replicates it into one-read-port
RAMs. Constants are not logic: an equality with a constant is an AND over the bits (each bit or its
complement, no XNOR), and the equalities of one value with several constants are a decoder
(:func:`~reconverge.golden.cost.inventory.decode`); a multiplexer between two constants is
its select or nothing, per bit."""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from reconverge.golden.cost.inventory import Kind, decode
from reconverge.hdl.tools.synth import yosys_script
from reconverge.hdl.tools.verilog import rtlil_text

SCRIPT = """read_rtlil block.il
hierarchy -check -top {top}
proc
{flatten}
opt
memory -nomap
opt_clean
delete t:$scopeinfo
write_json -compat-int words.json
"""

_FF = {"$dff", "$adff", "$sdff", "$dffe", "$adffe", "$sdffe", "$sdffce", "$dffsr", "$dffsre",
       "$aldff", "$aldffe"}  # fmt: skip
_EQ = {"$eq", "$ne", "$eqx", "$nex"}
_ADD = {"$lt", "$le", "$gt", "$ge", "$add", "$sub", "$neg", "$alu", "$lcu"}
_GATE = {"$and", "$or", "$xor", "$xnor"}
_REDUCE = {"$reduce_and", "$reduce_or", "$reduce_xor", "$reduce_xnor", "$reduce_bool",
           "$logic_not"}  # fmt: skip
_SHIFT = {"$shl", "$shr", "$sshl", "$sshr", "$shift"}
_FREE = {"$not", "$pos", "$scopeinfo"}
_DIV = {"$div", "$mod", "$divfloor", "$modfloor"}


def _int(p: dict[str, Any], key: str) -> int:
    value = p[key]
    return value if isinstance(value, int) else int(str(value), 2)


def cell_counts(kind: str, p: dict[str, Any]) -> Counter[Kind]:
    """The primitives of one Yosys word-level cell of type ``kind`` with parameters ``p``."""
    out: Counter[Kind] = Counter()
    if kind in _FF:
        out[Kind.FF] = _int(p, "WIDTH")
    elif kind == "$mux":
        out[Kind.MUX] = _int(p, "WIDTH")
    elif kind == "$pmux":
        out[Kind.MUX] = _int(p, "WIDTH") * _int(p, "S_WIDTH")
    elif kind == "$bmux":
        out[Kind.MUX] = _int(p, "WIDTH") * ((1 << _int(p, "S_WIDTH")) - 1)
    elif kind == "$shiftx":  # a variable part-select: one of A/Y windows
        y = _int(p, "Y_WIDTH")
        out[Kind.MUX] = max(0, _int(p, "A_WIDTH") // max(1, y) - 1) * y
    elif kind in _SHIFT:  # a barrel shifter: a level of Y multiplexers per shift bit
        out[Kind.MUX] = _int(p, "Y_WIDTH") * _int(p, "B_WIDTH")
    elif kind in _EQ:
        out[Kind.EQ] = max(_int(p, "A_WIDTH"), _int(p, "B_WIDTH"))
    elif kind in _ADD:
        widths = [_int(p, k) for k in ("A_WIDTH", "B_WIDTH", "Y_WIDTH") if k in p]
        out[Kind.ADD] = max(widths) if kind not in {"$lt", "$le", "$gt", "$ge"} else max(widths[:2])
    elif kind in _GATE:
        out[Kind.GATE] = _int(p, "Y_WIDTH")
    elif kind in _REDUCE:
        out[Kind.GATE] = max(0, _int(p, "A_WIDTH") - 1)
    elif kind in {"$logic_and", "$logic_or"}:
        out[Kind.GATE] = _int(p, "A_WIDTH") + _int(p, "B_WIDTH") - 1
    elif kind == "$mul":
        out[Kind.MUL] = _int(p, "A_WIDTH") * _int(p, "B_WIDTH")
    elif kind in _DIV:
        out[Kind.ADD] = _int(p, "A_WIDTH") * _int(p, "B_WIDTH")
    elif kind == "$mem_v2":  # a copy per read port: an FPGA RAM has one (LUT RAM) read port
        out[Kind.RAM] = _int(p, "WIDTH") * _int(p, "SIZE") * max(_int(p, "RD_PORTS"), 1)
    elif kind not in _FREE:
        raise ValueError(f"no model primitive for the Yosys cell {kind}")
    return out


def _constant(bits: list[Any]) -> bool:
    """Whether a Yosys JSON connection is all constant bits (``"0"``/``"1"``, not net ids)."""
    return all(isinstance(b, str) for b in bits)


def word_inventory(design: Any, top: str) -> Counter[Kind]:
    """The primitives of an elaboratable ``design`` (named ``top`` in the netlist)."""
    return word_inventories(design, top, depth=0)[""]


def word_inventories(design: Any, top: str, depth: int = 2) -> dict[str, Counter[Kind]]:
    """The primitives of ``design`` per submodule down to ``depth`` levels (Amaranth names
    them ``parent.child``; ``""`` is the whole design), each with its submodules counted in."""

    with tempfile.TemporaryDirectory(prefix=f"reconverge-words-{top}-") as tmp:
        work = Path(tmp)
        (work / "block.il").write_text(rtlil_text(design, top))
        yosys_script(SCRIPT.format(top=top, flatten="flatten" if depth == 0 else ""), work, "words")
        modules = json.loads((work / "words.json").read_text())["modules"]
    own: dict[str, Counter[Kind]] = {}
    for name, module in modules.items():
        counts: Counter[Kind] = Counter()
        decoders: Counter[tuple[Any, ...]] = Counter()  # variable operand -> its constants
        for cell in module["cells"].values():
            kind, ports = cell["type"], cell["connections"]
            if kind in modules:
                continue
            if kind in _EQ and any(map(_constant, (ports["A"], ports["B"]))):
                decoders[tuple(ports["B"] if _constant(ports["A"]) else ports["A"])] += 1
            elif kind != "$mux" or not (_constant(ports["A"]) and _constant(ports["B"])):
                counts.update(cell_counts(kind, cell["parameters"]))
        counts[Kind.GATE] += sum(decode(len(bits), n) for bits, n in decoders.items())
        own[name] = counts
    out: dict[str, Counter[Kind]] = {}
    for name, counts in own.items():
        rel = "" if name == top else name.removeprefix(top + ".")
        parts = [] if rel == "" else rel.split(".")
        for level in range(min(len(parts), depth) + 1):
            out.setdefault(".".join(parts[:level]), Counter()).update(counts)
    return out
