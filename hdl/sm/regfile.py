"""The SM's register file (docs/sm-hardware.md, "Register file"): one bank per thread
position j (0..W-1) holding the 32 registers of position j of every warp slot, so the lanes
of a pass, and the writes of a whole warp, reach their threads' registers in parallel: the
banked register file of seed 001 (Sec 3.6, Fig 5.3), one bank per lane position, which is why
the squeeze keeps every thread in its lane (Sec 4.1, rule 1).

Storage: a bank is a *live-value table* multi-ported memory (LaForest and Steffan, FPGA
2010): for each write port and each read port, an Amaranth ``lib.memory.Memory`` of warps x
32 words with one write port and one synchronous read port — what an FPGA's block RAM (the
ECP5's DP16KD in its 512 x 36 pseudo-dual-port mode) provides, so synthesis maps each copy to
one block RAM instead of LUT RAM and its multiplexers (docs/sm-hardware.md: the LUT-RAM file
was a fifth of the co-simulation SM). The copies are explicit: one memory per write port with
two read ports, left to Yosys to replicate, made the register file twice as large (docs/hdl.md).
A port writes its own copies; the live-value table (:class:`LiveValueTable`), two bits per
(slot, register) of a position in flip-flops, records which port wrote a row last, or that
nobody has since the slot's launch, and a read takes that port's copy or the register's
initial value (``golden.functional.initial_registers``: sp = top of local memory, gp and
a0..a7 from the ``init`` inputs, everything else 0): a launch marks a whole slot unwritten in
one cycle, so dispatching a warp costs no cycles.

Timing: the read port takes its slot and registers in one cycle and gives the words in the
next, as a block RAM does; a write in the cycle of the read address is seen (each copy's read
port is transparent for its write port: synthesis adds the bypass around the block RAM), so a
read returns every write up to and including its address cycle, and an unwritten register
the initial value for the ``init`` inputs of that cycle. Of several ports writing the
same (slot, register) of a position in one cycle the last of ``write_lane``, ``write_div``,
``write_lsu`` wins (the earlier ones' enables are dropped). Writes to x0 are dropped. A write
to a slot in the cycle it is launched belongs to the slot's previous warp and is lost. Reset
marks every register unwritten.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value, unsigned
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from reconverge.golden.functional import GLOBAL_POINTER_SYMBOL, LaunchConfig, initial_registers
from reconverge.golden.geometry import bits_for
from reconverge.golden.image import Image
from reconverge.golden.isa import NUM_REGS
from reconverge.golden.memmap import MemoryMap
from reconverge.golden.params import ARG_REGS, SMParams
from reconverge.golden.params import REGFILE_WRITE_PORTS as WRITE_PORTS
from reconverge.hdl.blocks.common import mux_tree, or_tree
from reconverge.hdl.sm.decode import REG
from reconverge.hdl.sm.lanes import WORD

#: Yosys's memory attribute for block RAM (``memory_libmap``): the copies would otherwise go to
#: LUT RAM with flip-flops behind it where a bank is small (``--config synth``: 32 rows).
BLOCK_RAM = {"ram_style": "block"}
Source = tuple[str, int]  # ("const", value), ("gp", 0) or ("arg", index)


def initial_sources(memmap: MemoryMap) -> dict[int, Source]:
    """Where each register's initial value comes from, found by running
    ``golden.functional.initial_registers`` on two launches with different gp and arguments:
    what changes with them comes from them, the rest is a constant (sp, zeros)."""

    def probe(base: int) -> list[int]:
        image = Image(entry=0, segments=(), symbols={GLOBAL_POINTER_SYMBOL: base})
        args = tuple(base + 1 + i for i in range(ARG_REGS))
        config = LaunchConfig(grid=1, block=1, memmap=memmap, args=args)
        return [int(v) for v in initial_registers(1, image, config)[0]]

    first, second = probe(0x1000), probe(0x2000)
    sources: dict[int, Source] = {}
    for reg, (a, b) in enumerate(zip(first, second, strict=True)):
        if a == b:
            sources[reg] = ("const", a)
        elif a == 0x1000:
            sources[reg] = ("gp", 0)
        else:
            sources[reg] = ("arg", a - 0x1001)
    return sources


def read_signature(params: SMParams) -> wiring.Signature:
    """The read port, from the reader's side: slot and registers out, one word per position in
    the next cycle."""
    words = data.ArrayLayout(WORD, params.geometry.warp_size)
    slot = unsigned(params.warp_bits)
    return wiring.Signature(
        {
            "warp": Out(slot),
            "rs1": Out(REG),
            "rs2": Out(REG),
            "rs1_data": In(words),
            "rs2_data": In(words),
        }
    )


def write_signature(params: SMParams) -> wiring.Signature:
    """A write port, from the writer's side: position mask, slot, register, one word per
    position."""
    width = params.geometry.warp_size
    return wiring.Signature(
        {
            "en": Out(width),
            "warp": Out(unsigned(params.warp_bits)),
            "rd": Out(REG),
            "data": Out(data.ArrayLayout(WORD, width)),
        }
    )


def launch_signature(params: SMParams) -> wiring.Signature:
    """The warp slots launched this cycle (one bit each: a block's warps launch together)."""
    return wiring.Signature({"slots": Out(params.geometry.warps)})


def init_signature() -> wiring.Signature:
    """The launch's initial gp and a0..a7 (a0 first), held for the whole run."""
    return wiring.Signature({"gp": Out(WORD), "args": Out(data.ArrayLayout(WORD, ARG_REGS))})


def _decoded(m: Module, name: str, row: Value, rows: int) -> Signal:
    """``row`` one-hot over ``rows`` bits."""
    one_hot = Signal(rows, name=name)
    m.d.comb += one_hot.eq(Const(1, rows) << row)
    return one_hot


class LiveValueTable(wiring.Component):
    """The live-value table of every thread position (LaForest and Steffan, FPGA 2010): per
    (position, slot, register) which copy holds the register's value, in flip-flops: 0 for
    none (the register is unwritten and reads its initial value), ``k + 1`` for write port k's.
    ``write``: per write port the row it writes and the positions it writes it for (a later
    port's write wins); ``clear``: the slots a launch marks unwritten (a launch wins over a
    write). ``row``: the rows the read ports ask for; ``live``: in the next cycle, each read
    row's entry per position, as the copies' synchronous read ports give their words: the
    lookup is registered, and a write or launch in the address cycle is in it (the entry's
    next value), so that the select behind the copies starts at flip-flops. Its own module,
    so that synthesis builds each lookup once instead of once per data bit of the copies it
    selects."""

    def __init__(self, params: SMParams, reads: int) -> None:
        self.width = params.geometry.warp_size
        self.slots = params.geometry.warps
        self.rows = self.slots * NUM_REGS
        row = unsigned(REG.width + params.warp_bits)
        entries = data.ArrayLayout(unsigned(bits_for(len(WRITE_PORTS))), self.width)
        write = data.StructLayout({"row": row, "en": self.width})
        super().__init__(
            {
                "write": In(data.ArrayLayout(write, len(WRITE_PORTS))),
                "clear": In(self.slots),
                "row": In(data.ArrayLayout(row, reads)),
                "live": Out(data.ArrayLayout(entries, reads)),
            }
        )

    def elaborate(self, platform: object) -> Module:
        m = Module()
        ports = range(len(WRITE_PORTS))
        sets = [_decoded(m, f"{WRITE_PORTS[k]}_row", self.write[k].row, self.rows) for k in ports]
        hits = [_decoded(m, f"read{k}_row", row, self.rows) for k, row in enumerate(self.row)]
        # per read port, whether each write port writes its row this cycle, and whether a
        # launch clears it (compares shared by the positions)
        same = [[Signal(name=f"read{k}_{WRITE_PORTS[p]}") for p in ports] for k in range(len(hits))]
        cleared = [Signal(name=f"read{k}_cleared") for k in range(len(hits))]
        for k, row in enumerate(self.row):
            m.d.comb += [same[k][p].eq(self.write[p].row == row) for p in ports]
            m.d.comb += cleared[k].eq(self.clear.bit_select(row[REG.width :], 1))
        for j in range(self.width):
            table = [
                Signal(range(len(WRITE_PORTS) + 1), name=f"live{j}_{r}") for r in range(self.rows)
            ]
            for r, entry in enumerate(table):
                m.d.sync += entry.eq(
                    self._next(entry, [s[r] for s in sets], j, self.clear[r // NUM_REGS])
                )
            for k, hit in enumerate(hits):
                terms = [entry & hit[r].replicate(len(entry)) for r, entry in enumerate(table)]
                found = Signal.like(table[0], name=f"read{k}_live{j}")  # before this cycle
                m.d.comb += found.eq(or_tree(terms))
                m.d.sync += self.live[k][j].eq(self._next(found, same[k], j, cleared[k]))
        return m

    def _next(self, entry: Value, written: list[Value], j: int, cleared: Value) -> Value:
        """An entry's value after this cycle: the last port that writes it for position j,
        unless a launch clears it."""
        for k, row in enumerate(written):
            entry = Mux(row & self.write[k].en[j], k + 1, entry)
        return Mux(cleared, 0, entry)


class RegisterFile(wiring.Component):
    """Registers of every thread of every warp slot of ``params``: ports ``read``,
    ``write_lane``, ``write_div``, ``write_lsu``, ``launch``, ``init`` (module docstring)."""

    def __init__(self, params: SMParams) -> None:
        self.params = params
        members = {"read": In(read_signature(params))}
        members.update({name: In(write_signature(params)) for name in WRITE_PORTS})
        members["launch"] = In(launch_signature(params))
        members["init"] = In(init_signature())
        super().__init__(wiring.Signature(members))

    def elaborate(self, platform: object) -> Module:
        m = Module()
        geometry = self.params.geometry
        width, slots = geometry.warp_size, geometry.warps
        rows = slots * NUM_REGS
        ports = [getattr(self, name) for name in WRITE_PORTS]
        enables = [self._write_enable(m, i, ports) for i in range(len(ports))]
        read = self.read
        reads = ((read.rs1, read.rs1_data), (read.rs2, read.rs2_data))
        m.submodules.live = table = LiveValueTable(self.params, len(reads))
        m.d.comb += table.clear.eq(self.launch.slots)
        write_rows = [Cat(port.rd, port.warp) for port in ports]
        for k, (row, enable) in enumerate(zip(write_rows, enables, strict=True)):
            m.d.comb += [table.write[k].row.eq(row), table.write[k].en.eq(enable)]
        addresses = [Cat(reg, read.warp) for reg, _ in reads]
        m.d.comb += [table.row[k].eq(address) for k, address in enumerate(addresses)]
        # the initial values of the registers read, found in the address cycle and
        # registered as the memories register their words (the live-value lookup registers
        # its own result), so that the select behind the memories starts at flip-flops
        initial = []
        for k, (reg, _) in enumerate(reads):
            registered = Signal(WORD, name=f"init_rs{k + 1}_reg")
            m.d.sync += registered.eq(self._initial(m, f"init_rs{k + 1}", reg))
            initial.append(registered)
        for j in range(width):
            for k, ((_, out), address) in enumerate(zip(reads, addresses, strict=True)):
                copies = []
                for w, (port, write_row) in enumerate(zip(ports, write_rows, strict=True)):
                    copy = Memory(shape=WORD, depth=rows, init=[], attrs=BLOCK_RAM)
                    m.submodules[f"bank{j}_{WRITE_PORTS[w]}_{k}"] = copy
                    writer = copy.write_port()
                    reader = copy.read_port(transparent_for=(writer,))
                    m.d.comb += [
                        writer.addr.eq(write_row),
                        writer.data.eq(port.data[j]),
                        writer.en.eq(enables[w][j]),
                        reader.addr.eq(address),
                    ]
                    copies.append(reader.data)
                value = Signal(WORD, name=f"value{j}_read{k}")
                m.d.comb += value.eq(mux_tree([initial[k], *copies], table.live[k][j]))
                m.d.comb += out[j].eq(value)
        return m

    def _write_enable(self, m: Module, index: int, ports: list[wiring.PureInterface]) -> Signal:
        """The positions port ``index`` writes: its enables for a register other than x0,
        minus the positions a later port writes to the same (slot, register)."""
        port = ports[index]
        name = WRITE_PORTS[index]
        enable = Signal(len(port.en), name=f"{name}_en")
        lost = []
        for later, other in enumerate(ports[index + 1 :], index + 1):
            same = Signal(name=f"{name}_same_as_{WRITE_PORTS[later]}")
            m.d.comb += same.eq((other.warp == port.warp) & (other.rd == port.rd))
            lost.append(other.en & same.replicate(len(port.en)))
        taken = or_tree(lost, len(port.en))
        m.d.comb += enable.eq(Mux(port.rd != 0, port.en & ~taken, 0))
        return enable

    def _initial(self, m: Module, name: str, reg: Value) -> Signal:
        """The initial value of register ``reg`` (:func:`initial_sources`)."""
        value = Signal(WORD, name=name)
        with m.Switch(reg):
            for r, (kind, arg) in initial_sources(self.params.memmap).items():
                if kind == "const" and arg == 0:
                    continue  # the default
                with m.Case(r):
                    if kind == "const":
                        m.d.comb += value.eq(arg)
                    elif kind == "gp":
                        m.d.comb += value.eq(self.init.gp)
                    else:
                        m.d.comb += value.eq(self.init.args[arg])
        return value
