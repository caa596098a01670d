"""Fetch: the instruction store and the instruction buffers (docs/sm-hardware.md, "Instruction
store and buffers").

The store holds ``imem_words`` entries of the code window that starts at GLOBAL_BASE: each the
instruction word, the RPC of the instruction at that PC (`golden.sm.program.Program.rpc`, all
ones for none) and the word's *predecode* bits (``golden.sm.decode.issue_fields``: the
registers the scoreboard looks up, whether it needs the LSU or the divider, whether it faults
at issue), computed by one :class:`~reconverge.hdl.sm.decode.Predecoder` as the word is written,
so the issue logic needs no decoder per candidate. It is filled through the ``load`` port
before a run. The store is one memory with one synchronous read port per split slot of every
warp slot (``index = warp * slots + slot``; synthesis replicates it into one-read-port RAMs),
each feeding that slot's *instruction buffer* of two entries:

* **A**, the read port's output, tagged with the address it was read from (a register);
* **B**, a registered copy of A, taken whenever A holds the PC the top asks for (``pc[index]``).

Each cycle the port reads ``pc + 4`` when A or B holds ``pc`` (``hit``: the next instruction is
prefetched, so a split that continues after issuing finds it in A the next cycle while B keeps
the one that did not issue yet), else ``pc`` itself (found in A the next cycle). The read
address thus comes from registers and the asked-for PC only, never from the issue stage's
selection, and the buffer (``buffer[index]``: A when it hits, else B) holds a PC asked for since
the cycle before. Both entries are outputs as well (``a``, ``b``, with ``hit_a``, ``hit_b``): the
issue stage checks each against the scoreboard from its registers, in parallel with the hit
compare, and takes the check of the entry that hits. The top asks for a slot's current PC (the
split's, the snapshot's while its unit updates); ``dispatch`` reads ``entry`` instead (the
slot's warp is dispatched: the dispatch decision stays out of ``hit``, which the issue stage
waits for). A PC outside the store is marked ``in_range = 0``: fetching it is a fetch fault.
``after`` is ``pc + 4`` (the prefetch address, and the PC after the instruction that issues
from the buffer when it hits).
Loading the store empties every buffer.
"""

from __future__ import annotations

from collections.abc import Sequence

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, memory, wiring
from amaranth.lib.wiring import In, Out

from reconverge.golden.blocks.units import sm_unit
from reconverge.golden.memmap import GLOBAL_BASE
from reconverge.golden.params import PC_WIDTH, SMParams
from reconverge.golden.sm.decode import predecode
from reconverge.hdl.sm.decode import PREDECODED, Predecoder

#: One entry of the instruction store.
ENTRY = data.StructLayout({"word": 32, "rpc": PC_WIDTH, "pre": PREDECODED})
#: An instruction buffer: the entry of the PC it was filled from.
BUFFER = data.StructLayout(
    {"pc": PC_WIDTH, "word": 32, "rpc": PC_WIDTH, "pre": PREDECODED, "in_range": 1}
)


def load_signature(params: SMParams) -> wiring.Signature:
    """The instruction-store write port (the SM's ``load`` port)."""
    return wiring.Signature(
        {
            "valid": Out(1),
            "addr": Out(params.imem_bits),
            "word": Out(32),
            "rpc": Out(PC_WIDTH),
        }
    )


class Fetch(wiring.Component):
    """The instruction store, with one read port and one two-entry buffer per split slot of
    each warp slot. ``init``: (word, RPC) entries the store holds from reset (a board top's
    program), else it starts empty and is filled through ``load``."""

    def __init__(self, params: SMParams, init: Sequence[tuple[int, int]] = ()) -> None:
        if len(init) > params.imem_words:
            raise ValueError(
                f"{len(init)} instruction words do not fit the store of {params.imem_words}"
            )
        self.params = params
        # an entry never written holds word 0 (illegal) with its predecode bits, so that
        # fetching it faults at issue as it would loaded
        entries = [*init, *[(0, 0)] * (params.imem_words - len(init))]
        self.init = [{"word": word, "rpc": rpc, "pre": predecode(word)} for word, rpc in entries]
        self.buffers = params.geometry.warps * sm_unit(params).slots
        super().__init__(
            {
                "load": In(load_signature(params)),
                "pc": In(data.ArrayLayout(PC_WIDTH, self.buffers)),
                "dispatch": In(self.buffers),
                "entry": In(PC_WIDTH),
                "a": Out(data.ArrayLayout(BUFFER, self.buffers)),
                "b": Out(data.ArrayLayout(BUFFER, self.buffers)),
                "hit_a": Out(self.buffers),
                "hit_b": Out(self.buffers),
                "buffer": Out(data.ArrayLayout(BUFFER, self.buffers)),
                "hit": Out(self.buffers),
                "after": Out(data.ArrayLayout(PC_WIDTH, self.buffers)),
            }
        )

    def elaborate(self, platform: object) -> Module:
        m = Module()
        p = self.params
        m.submodules.store = store = memory.Memory(shape=ENTRY, depth=p.imem_words, init=self.init)
        m.submodules.predecoder = predecoder = Predecoder()
        write = store.write_port()
        m.d.comb += [
            predecoder.word.eq(self.load.word),
            write.en.eq(self.load.valid),
            write.addr.eq(self.load.addr),
            write.data.word.eq(self.load.word),
            write.data.rpc.eq(self.load.rpc),
            write.data.pre.eq(predecoder.fields),
        ]
        for i in range(self.buffers):
            read = store.read_port(domain="sync")
            wanted = self.pc[i]
            # A: the port's output, tagged with the address it was read from (registered)
            address = Signal(PC_WIDTH, name=f"address{i}")
            offset = Signal(PC_WIDTH, name=f"offset{i}")
            in_range = Signal(name=f"in_range{i}")
            tag = Signal(PC_WIDTH, name=f"a{i}_tag")
            tag_in_range = Signal(name=f"a{i}_in_range")
            a_valid = Signal(name=f"a{i}_valid")
            m.d.sync += [
                tag.eq(address),
                tag_in_range.eq(in_range),
                a_valid.eq(~self.load.valid),
            ]
            a = self.a[i]
            m.d.comb += [
                a.pc.eq(tag),
                a.in_range.eq(tag_in_range),
                a.word.eq(read.data.word),
                a.rpc.eq(read.data.rpc),
                a.pre.eq(read.data.pre),
            ]
            # B: A's entry kept while A moves on to the next PC
            b = Signal(BUFFER, name=f"b{i}")
            b_valid = Signal(name=f"b{i}_valid")
            hit_a, hit_b = self.hit_a[i], self.hit_b[i]
            m.d.comb += [
                hit_a.eq(a_valid & (a.pc == wanted)),
                hit_b.eq(b_valid & (b.pc == wanted)),
            ]
            with m.If(self.load.valid):
                m.d.sync += b_valid.eq(0)
            with m.Elif(hit_a):
                m.d.sync += [b.eq(a), b_valid.eq(1)]
            hit = hit_a | hit_b
            m.d.comb += self.after[i].eq(wanted + 4)
            next_pc = Mux(hit, self.after[i], wanted)
            m.d.comb += [
                address.eq(Mux(self.dispatch[i], self.entry, next_pc)),
                offset.eq(address - GLOBAL_BASE),
                in_range.eq((offset >> 2) < p.imem_words),
                read.addr.eq(offset[2:]),
                self.b[i].eq(b),
                self.buffer[i].eq(Mux(hit_a, a, b)),
                self.hit[i].eq(hit),
            ]
        return m
