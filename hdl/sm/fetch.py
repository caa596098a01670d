"""Fetch: the instruction store and the instruction buffers (docs/sm-hardware.md, "Instruction
store and buffers").

The store holds ``imem_words`` entries of the code window that starts at GLOBAL_BASE: each the
instruction word, the RPC of the instruction at that PC (`golden.sm.program.Program.rpc`, all
ones for none) and the word's *predecode* bits (``golden.sm.decode.issue_fields``: the
registers the scoreboard looks up, whether it needs the LSU or the divider, whether it faults
at issue), computed by one :class:`~reconverge.hdl.sm.decode.Predecoder` as the word is written,
so the issue logic needs no decoder per candidate. It is filled through the ``load`` port
before a run. The store is one memory with one synchronous read port per split slot of every
warp slot (``index = warp * slots + slot``; synthesis replicates it into one-read-port RAMs).
Its output, *R* (tagged with the address it was read from), goes only into registers: each
slot's *instruction buffer* of two entries, so that the issue stage starts at flip-flops, never
at a block RAM's output:

* **A** takes the entry of the PC the slot is asked for (``pc[index]``; the kernel's entry PC
  while the slot is idle): from A, B, R or the *entry register* (below), whichever holds it;
  a slot dispatched while its previous warp still held it takes the entry register's;
* **B** takes the entry of the PC after it: from B or R.

Each cycle the port reads the asked-for PC when no entry holds it, else the PC after it when
neither B nor R holds that, else the one after that (two ahead: R is registered into the
buffer the cycle after it is read). So a PC asked for two cycles in a row is in the buffer
the cycle after (a redirected split is ready two cycles after it shows: ``branch`` >= 3), and
a slot that issues from its buffer finds the next PC there the next cycle (straight-line code
issues back to back). The read address comes from registers and the asked-for PC only, never
from the issue stage's selection, and the dispatch decision only picks at the end. The
*entry register* keeps the entry of the kernel's entry PC, taken from slot 0's R when it holds
it (every idle slot is asked for the entry PC, so before the first dispatch each port reads
it), so that a slot dispatched in the cycle its previous warp left issues its first
instruction the cycle after, as an idle slot does.

Both entries are outputs (``a``, ``b``, with ``hit_a``, ``hit_b``: the entry holds the slot's
``pc``): the issue stage checks each against the scoreboard from its registers, in parallel
with the hit compare, and takes the check of the entry that hits (``buffer``: A when it hits,
else B; ``hit``: one does). A PC outside the store is marked ``in_range = 0``: fetching it is a
fetch fault. ``after`` is ``pc + 4`` (the PC after the instruction that issues from the buffer).
Loading the store empties every buffer and the entry register.
"""

from __future__ import annotations

from collections.abc import Sequence

from amaranth.hdl import Module, Mux, Signal, Value
from amaranth.lib import data, memory, wiring
from amaranth.lib.wiring import In, Out

from reconverge.golden.blocks.units import sm_unit
from reconverge.golden.memmap import GLOBAL_BASE
from reconverge.golden.params import PC_WIDTH, SMParams
from reconverge.golden.sm.decode import predecode
from reconverge.hdl.sm.decode import PREDECODED, Predecoder

#: One entry of the instruction store.
ENTRY = data.StructLayout({"word": 32, "rpc": PC_WIDTH, "pre": PREDECODED})
#: An instruction buffer entry: the store's entry of the PC it was read from.
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


class _Held:
    """A buffer entry with its valid bit."""

    def __init__(self, name: str) -> None:
        self.entry = Signal(BUFFER, name=name)
        self.valid = Signal(name=f"{name}_valid")

    def holds(self, pc: Value) -> Value:
        return self.valid & (self.entry.pc == pc)


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
                "idle": In(self.buffers),
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
        loading = self.load.valid
        entry = _Held("entry_buffer")
        window = p.imem_bits + 2  # the store's window is aligned to its size

        def inside(pc: Value) -> Value:
            return pc[window:] == GLOBAL_BASE >> window

        # a re-dispatched slot's read, the same for every slot: the entry register holds the
        # entry PC (then the one after it is read), else the entry PC itself
        start = self.entry
        ready = Signal(name="entry_ready")
        m.d.comb += ready.eq(entry.holds(start))
        dispatched = Mux(ready, start + 4, start)
        dispatched_before = Mux(ready, start, start - 4)
        dispatched_inside = Mux(ready, inside(start + 4), inside(start))
        for i in range(self.buffers):
            read = store.read_port(domain="sync")
            # R: the port's output, tagged with the address it was read from (and the PC
            # before it, so that "holds the PC after the asked-for one" is a compare with the
            # asked-for PC rather than one behind an adder; B keeps it too)
            address = Signal(PC_WIDTH, name=f"address{i}")
            address_before = Signal(PC_WIDTH, name=f"address{i}_before")
            in_range = Signal(name=f"in_range{i}")
            r = _Held(f"r{i}")
            r_before = Signal(PC_WIDTH, name=f"r{i}_before")
            m.d.sync += [
                r.entry.pc.eq(address),
                r_before.eq(address_before),
                r.entry.in_range.eq(in_range),
                r.valid.eq(~loading),
            ]
            m.d.comb += [
                r.entry.word.eq(read.data.word),
                r.entry.rpc.eq(read.data.rpc),
                r.entry.pre.eq(read.data.pre),
                read.addr.eq(address[2:window]),
            ]
            a, b = _Held(f"a{i}"), _Held(f"b{i}")
            b_before = Signal(PC_WIDTH, name=f"b{i}_before")
            wanted = self.pc[i]
            m.d.comb += [
                self.hit_a[i].eq(a.holds(wanted)),
                self.hit_b[i].eq(b.holds(wanted)),
                self.after[i].eq(wanted + 4),
                self.a[i].eq(a.entry),
                self.b[i].eq(b.entry),
                self.buffer[i].eq(Mux(self.hit_a[i], a.entry, b.entry)),
                self.hit[i].eq(self.hit_a[i] | self.hit_b[i]),
            ]
            # the PC the slot will want next cycle (the entry PC while the slot is idle)
            asked = Signal(PC_WIDTH, name=f"asked{i}")
            m.d.comb += asked.eq(Mux(self.idle[i], self.entry, wanted))
            sources = [(a, a.holds(asked)), (b, b.holds(asked)), (r, r.holds(asked)),
                       (entry, entry.holds(asked))]  # fmt: skip
            has_asked = Signal(name=f"has_asked{i}")
            has_then = Signal(name=f"has_then{i}")
            b_has = b.valid & (b_before == asked)
            r_has = r.valid & (r_before == asked)
            m.d.comb += [
                has_asked.eq(sources[0][1] | sources[1][1] | sources[2][1] | sources[3][1]),
                has_then.eq(b_has | r_has),
            ]
            # a slot dispatched from a warp that just left (an idle one is asked for the entry
            # PC already): the entry register's, the one after it read; the dispatch
            # decision only picks, at the end
            redispatch = Signal(name=f"redispatch{i}")
            m.d.comb += redispatch.eq(self.dispatch[i] & ~self.idle[i])
            with m.If(loading):
                m.d.sync += [a.valid.eq(0), b.valid.eq(0)]
            with m.Elif(redispatch):
                m.d.sync += [a.valid.eq(ready), a.entry.eq(entry.entry), b.valid.eq(0)]
            with m.Else():
                m.d.sync += a.valid.eq(has_asked)
                with m.If(~sources[0][1]):
                    for held, holds in reversed(sources[1:]):
                        with m.If(holds):
                            m.d.sync += a.entry.eq(held.entry)
                m.d.sync += b.valid.eq(has_then)
                with m.If(~b_has):
                    m.d.sync += [b.entry.eq(r.entry), b_before.eq(r_before)]
            # the read: the asked-for PC, else the next, else the one after; each candidate's
            # predecessor and window check beside it, the selects at the end
            then, beyond = asked + 4, asked + 8
            first, second = ~has_asked, ~has_then
            own = Mux(first, asked, Mux(second, then, beyond))
            own_before = Mux(first, asked - 4, Mux(second, asked, then))
            own_inside = Mux(first, inside(asked), Mux(second, inside(then), inside(beyond)))
            m.d.comb += [
                address.eq(Mux(redispatch, dispatched, own)),
                address_before.eq(Mux(redispatch, dispatched_before, own_before)),
                in_range.eq(Mux(redispatch, dispatched_inside, own_inside)),
            ]
            if i == 0:
                with m.If(loading):
                    m.d.sync += entry.valid.eq(0)
                with m.Elif(r.holds(self.entry)):
                    m.d.sync += [entry.entry.eq(r.entry), entry.valid.eq(1)]
        return m
