"""Fetch: the instruction store and the instruction buffers (docs/sm-hardware.md, "Instruction
store and buffers").

The store holds ``imem_words`` entries of the code window that starts at GLOBAL_BASE: each the
instruction word and its *predecode* bits (``golden.sm.decode.issue_fields``: the registers the
scoreboard looks up, whether it needs the LSU or the divider, whether it faults at issue),
computed by one :class:`~reconverge.hdl.sm.decode.Predecoder` as the word is written, so the
issue logic needs no decoder per candidate. The RPC of the instruction at each PC
(`golden.sm.program.Program.rpc`, all ones for none) is in a memory of its own beside it, read
at ``rpc_index`` (the decode stage's instruction) and given as ``rpc`` the cycle after: only a
control instruction's RPC is used, when it reaches its divergence unit behind the execute
stage, so the buffers do not carry it. Both are filled through the ``load`` port before a
run. The store is one memory with one synchronous read port per split slot of every
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
else B; ``hit``: one does). ``after`` is ``pc + 4`` (the PC after the instruction that issues
from the buffer). Loading the store empties every buffer and the entry register.

**Tags.** An entry is tagged with its PC's word index in the store and whether the PC lies in
the store's window at all (``inside``; fetching a PC outside it is a fetch fault), not with
the whole PC: two PCs outside the window with the same index share a tag, and either entry
only says "fetch fault" (the fault's PC is the split's, never the entry's). The tags of the
PCs around the asked-for one (the one before, the next two) come from an adder as wide as the
index and a compare of the PC's upper bits with the window's, so the buffer's compares,
multiplexers and read addresses are ``imem_bits`` + 1 bits wide instead of 32.
"""

from __future__ import annotations

from collections.abc import Sequence

from amaranth.hdl import Cat, Module, Mux, Signal, Value
from amaranth.lib import data, memory, wiring
from amaranth.lib.wiring import In, Out

from reconverge.golden.blocks.units import sm_unit
from reconverge.golden.memmap import GLOBAL_BASE
from reconverge.golden.params import PC_WIDTH, SMParams
from reconverge.golden.sm.decode import predecode
from reconverge.hdl.sm.decode import PREDECODED, Predecoder

#: One entry of the instruction store (the RPCs are a memory of their own, read by the decode
#: stage: only a control instruction's is used, and only once it resolves).
ENTRY = data.StructLayout({"word": 32, "pre": PREDECODED})


def tag_layout(params: SMParams) -> data.StructLayout:
    """The tag of a buffer entry: the word index of its PC in the store and whether the PC is
    inside the store's window (module docstring, "Tags")."""
    return data.StructLayout({"index": params.imem_bits, "inside": 1})


def buffer_layout(params: SMParams) -> data.StructLayout:
    """An instruction buffer entry: the store's entry of the PC it was read from, tagged."""
    return data.StructLayout({"tag": tag_layout(params), "word": 32, "pre": PREDECODED})


def pc_tag(params: SMParams, pc: Value, step: int = 0) -> Value:
    """The tag (:func:`tag_layout`) of ``pc + 4 * step`` (``step`` in -1..2) without a
    32-bit adder: the index plus ``step`` modulo the store's size, and the upper bits against
    the window's, moved by one where the index wraps (the sum carries into them)."""
    bits = params.imem_bits
    window = bits + 2
    index, high = pc[2:window], pc[window:]
    base = GLOBAL_BASE >> window
    if step > 0:
        wraps = index >= (1 << bits) - step
        inside = Mux(wraps, high == base - 1, high == base)
    elif step < 0:
        wraps = index < -step
        inside = Mux(wraps, high == base + 1, high == base)
    else:
        inside = high == base
    return Cat((index + step)[:bits], inside)


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


#: The PCs around an asked-for one whose tags the buffer compares: name -> step (4 bytes).
_AROUND = {"before": -1, "at": 0, "then": 1, "beyond": 2}


class _Held:
    """A buffer entry with its valid bit."""

    def __init__(self, params: SMParams, name: str) -> None:
        self.entry = Signal(buffer_layout(params), name=name)
        self.valid = Signal(name=f"{name}_valid")

    def holds(self, tag: Value) -> Value:
        return self.valid & (self.entry.tag == tag)


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
        self.init = [{"word": word, "pre": predecode(word)} for word, _ in entries]
        self.rpc_init = [rpc for _, rpc in entries]
        self.buffers = params.geometry.warps * sm_unit(params).slots
        entry = buffer_layout(params)
        super().__init__(
            {
                "load": In(load_signature(params)),
                "pc": In(data.ArrayLayout(PC_WIDTH, self.buffers)),
                "dispatch": In(self.buffers),
                "idle": In(self.buffers),
                "entry": In(PC_WIDTH),
                "a": Out(data.ArrayLayout(entry, self.buffers)),
                "b": Out(data.ArrayLayout(entry, self.buffers)),
                "hit_a": Out(self.buffers),
                "hit_b": Out(self.buffers),
                "buffer": Out(data.ArrayLayout(entry, self.buffers)),
                "hit": Out(self.buffers),
                "after": Out(data.ArrayLayout(PC_WIDTH, self.buffers)),
                "rpc_index": In(params.imem_bits),
                "rpc": Out(PC_WIDTH),
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
            write.data.pre.eq(predecoder.fields),
        ]
        # the RPCs: written with the words, read a cycle after ``rpc_index`` is given
        m.submodules.rpcs = rpcs = memory.Memory(shape=PC_WIDTH, depth=p.imem_words,
                                                 init=self.rpc_init)  # fmt: skip
        rpc_write, rpc_read = rpcs.write_port(), rpcs.read_port(domain="sync")
        m.d.comb += [
            rpc_write.en.eq(self.load.valid),
            rpc_write.addr.eq(self.load.addr),
            rpc_write.data.eq(self.load.rpc),
            rpc_read.addr.eq(self.rpc_index),
            self.rpc.eq(rpc_read.data),
        ]
        loading = self.load.valid
        tag = tag_layout(p)
        entry = _Held(p, "entry_buffer")

        def tags(name: str, pc: Value) -> list[Signal]:
            """The tags of ``pc - 4``, ``pc``, ``pc + 4`` and ``pc + 8``, named."""
            out = [Signal(tag, name=f"{name}_{k}") for k in _AROUND]
            m.d.comb += [
                t.eq(pc_tag(p, pc, step)) for t, step in zip(out, _AROUND.values(), strict=True)
            ]
            return out

        # a re-dispatched slot's read, the same for every slot: the entry register holds the
        # entry PC (then the one after it is read), else the entry PC itself
        start = tags("start", self.entry)
        ready = Signal(name="entry_ready")
        m.d.comb += ready.eq(entry.holds(start[1]))
        dispatched = Mux(ready, start[2], start[1])
        dispatched_before = Mux(ready, start[1], start[0])
        for i in range(self.buffers):
            read = store.read_port(domain="sync")
            # R: the port's output, tagged with the address it was read from (and the PC
            # before it, so that "holds the PC after the asked-for one" is a compare with the
            # asked-for PC rather than one behind an adder; B keeps it too)
            address = Signal(tag, name=f"address{i}")
            address_before = Signal(tag, name=f"address{i}_before")
            r = _Held(p, f"r{i}")
            r_before = Signal(tag, name=f"r{i}_before")
            m.d.sync += [
                r.entry.tag.eq(address),
                r_before.eq(address_before),
                r.valid.eq(~loading),
            ]
            m.d.comb += [
                r.entry.word.eq(read.data.word),
                r.entry.pre.eq(read.data.pre),
                read.addr.eq(address.index),
            ]
            a, b = _Held(p, f"a{i}"), _Held(p, f"b{i}")
            b_before = Signal(tag, name=f"b{i}_before")
            wanted = self.pc[i]
            own = tags(f"pc{i}", wanted)
            m.d.comb += [
                self.hit_a[i].eq(a.holds(own[1])),
                self.hit_b[i].eq(b.holds(own[1])),
                self.after[i].eq(wanted + 4),
                self.a[i].eq(a.entry),
                self.b[i].eq(b.entry),
                self.buffer[i].eq(Mux(self.hit_a[i], a.entry, b.entry)),
                self.hit[i].eq(self.hit_a[i] | self.hit_b[i]),
            ]
            # the tags of the PC the slot will want next cycle and of those around it (the
            # entry PC's while the slot is idle)
            asked = [Signal(tag, name=f"asked{i}_{k}") for k in _AROUND]
            m.d.comb += [
                t.eq(Mux(self.idle[i], e, o)) for t, e, o in zip(asked, start, own, strict=True)
            ]
            sources = [(a, a.holds(asked[1])), (b, b.holds(asked[1])), (r, r.holds(asked[1])),
                       (entry, entry.holds(asked[1]))]  # fmt: skip
            has_asked = Signal(name=f"has_asked{i}")
            has_then = Signal(name=f"has_then{i}")
            b_has = b.valid & (b_before == asked[1])
            r_has = r.valid & (r_before == asked[1])
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
            # the read: the asked-for PC, else the next, else the one after (with the tag of
            # the PC before each)
            first, second = ~has_asked, ~has_then
            read_at = Mux(first, asked[1], Mux(second, asked[2], asked[3]))
            read_before = Mux(first, asked[0], Mux(second, asked[1], asked[2]))
            m.d.comb += [
                address.eq(Mux(redispatch, dispatched, read_at)),
                address_before.eq(Mux(redispatch, dispatched_before, read_before)),
            ]
            if i == 0:
                with m.If(loading):
                    m.d.sync += entry.valid.eq(0)
                with m.Elif(r.holds(start[1])):
                    m.d.sync += [entry.entry.eq(r.entry), entry.valid.eq(1)]
        return m
