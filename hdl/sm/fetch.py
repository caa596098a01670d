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
each feeding that slot's *instruction buffer*: each cycle the buffer takes the entry at the PC
the top presents for that slot (``pc[index]``), tagged with that PC, so it holds the
instruction of the PC asked for in the previous cycle. The top presents a slot's current PC,
PC + 4 while the slot's instruction is in its passes (the continuation, prefetched), or the
entry PC while the warp is being dispatched. A PC outside the store is marked
``in_range = 0``: fetching it is a fetch fault.
"""

from __future__ import annotations

from collections.abc import Sequence

from amaranth.hdl import Module, Signal
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
    """The instruction store, with one read port and one buffer per split slot of each warp
    slot. ``init``: (word, RPC) entries the store holds from reset (a board top's program),
    else it starts empty and is filled through ``load``."""

    def __init__(self, params: SMParams, init: Sequence[tuple[int, int]] = ()) -> None:
        if len(init) > params.imem_words:
            raise ValueError(
                f"{len(init)} instruction words do not fit the store of {params.imem_words}"
            )
        self.params = params
        self.init = [{"word": word, "rpc": rpc, "pre": predecode(word)} for word, rpc in init]
        self.buffers = params.geometry.warps * sm_unit(params).slots
        super().__init__(
            {
                "load": In(load_signature(params)),
                "pc": In(data.ArrayLayout(PC_WIDTH, self.buffers)),
                "buffer": Out(data.ArrayLayout(BUFFER, self.buffers)),
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
            offset = Signal(PC_WIDTH, name=f"offset{i}")
            in_range = Signal(name=f"in_range{i}")
            m.d.comb += [
                offset.eq(self.pc[i] - GLOBAL_BASE),
                in_range.eq((offset >> 2) < p.imem_words),
                read.addr.eq(offset[2:]),
            ]
            tag = Signal(PC_WIDTH, name=f"tag{i}")
            tag_in_range = Signal(name=f"tag_in_range{i}")
            m.d.sync += [tag.eq(self.pc[i]), tag_in_range.eq(in_range)]
            buffer = self.buffer[i]
            m.d.comb += [
                buffer.pc.eq(tag),
                buffer.word.eq(read.data.word),
                buffer.rpc.eq(read.data.rpc),
                buffer.pre.eq(read.data.pre),
                buffer.in_range.eq(tag_in_range),
            ]
        return m
