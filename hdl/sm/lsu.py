"""The SM's load/store unit (docs/sm-hardware.md: "The pipeline", timing rule 3, the memory
contract, local and shared memory). Golden: ``golden.sm.lsu`` (``lsu_cycles`` is the schedule
this unit follows, ``access_cost`` its length) and ``golden.memory.WarpMemory`` (the values).

One memory instruction at a time:

* **Passes.** In every pass of a load, store or AMO the top presents ``capture``: the thread
  positions of the pass (``mask``) with their addresses and store data / AMO operands
  (``addr``, ``data``, indexed by thread position). The address buffer keeps them and the
  address window of each (global, shared, local or none). In the last pass the top also
  presents ``start``; the LSU cycles run from the next cycle, one per cycle. ``busy`` is high
  from then to the last LSU cycle L: a new memory instruction may issue from L + 1.
* **Faults** are checked in the ``start`` cycle over the instruction's threads (the buffer
  merged with that cycle's capture), as ``golden.memory.WarpMemory._route``: a misaligned
  address (not a multiple of the size) before an unmapped one (outside the global, shared and
  local windows), the lowest offending position. ``fault`` reports it (``FaultCode``, position,
  address) and the instruction does not start.
* **Global and local** threads first (seed 000 Sec 4.2/4.3): each LSU cycle the arbiter tree
  (outside, port group ``tree``) gives the lowest line key among the pending threads and the
  threads on it; one line-wide request on the data port ``mem`` serves them. A store merges the
  threads' bytes (the highest thread wins a byte two threads write, as ``Bank.write``); an AMO
  serves the lowest pending thread of each word (``Bank.atomic``'s order). Local addresses go
  to the physical address of ``golden.sm.lsu.local_physical``, below the global window.
* **Shared** threads then: ``shared_banks`` word-wide banks (synchronous block RAM) hold one
  ``memmap.shared_size`` window per warp slot (``start.block`` names the instruction's window);
  each LSU cycle every bank serves the word of its lowest pending thread (all pending threads
  on it; an AMO only that thread, whose read-modify-write completes the next cycle).
* **Results** of loads and AMOs leave through ``wb`` (a register-file write port) in the cycle
  the line response arrives, or the cycle after a shared read. ``release`` marks L (warp, rd,
  mask, and ``global_``: a line transaction was made, so the ``global_`` latency applies).
* **Stall.** Requests are accepted with ``req_valid & req_ready`` and answered with
  ``resp_valid`` one cycle later or more. ``stall`` is high while a response is due and absent
  or a request is not accepted; it is combinational from the registers and the inputs
  ``mem.req_ready``, ``mem.resp_valid`` and ``tree.granted`` (so ``granted`` must not depend
  on ``stall``). The LSU freezes itself with it (its registers, bank ports and outputs
  ``wb``/``release``/``fault``/counters only act in cycles without stall) except for one
  response holding register, so it belongs in the SM's ungated clock domain while the top
  freezes the rest of the core with ``stall``; ``capture``/``start`` presented in a stalled
  cycle are ignored (a frozen core presents them again).
* **Tree sharing.** ``tree.granted`` low (the stack-less control arbitrates its PC on the same
  tree this cycle, timing rule 3) makes the LSU wait that cycle: no LSU cycle happens. With a
  tree of its own the top ties ``granted`` high.

Ports (W warp size, KW = 32 - log2(line bytes) line-key bits, WB warp-slot bits, LB line bytes):

=========  ===  =====================================================================
group      dir  members
=========  ===  =====================================================================
capture    in   valid, mask [W], addr [W x 32], data [W x 32]
start      in   valid, op (``MemOp``), size (log2 bytes), signed, amo (funct5), warp, block
                (warp slots), rd (destination, 0: none), mask [W]
busy       out  an instruction is in its LSU cycles
tree       out  valid [W] (pending global/local threads), key [W x KW] (their line keys)
           in   granted, min_key [KW], mask [W] (threads on the lowest line)
mem        out  req_valid, req_addr, req_op, req_amo, req_be [LB], req_wdata [8 LB]
           in   req_ready, resp_valid, resp_rdata [8 LB] (docs/sm-hardware.md, ``mem__*``)
stall      out  freeze the core this cycle
wb         out  en [W], warp, rd, data [W x 32]
release    out  valid, warp, rd, mask [W], global\\_
fault      out  valid, code (``golden.faults.FaultCode``), position, addr
counters   out  transactions, shared_cycles, bank_conflicts, stalls (32 bits each)
=========  ===  =====================================================================
"""

from __future__ import annotations

from collections.abc import Callable

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, enum, memory, wiring
from amaranth.lib.wiring import In, Out

from reconverge.golden.blocks.base import bits_for, ceil_log2
from reconverge.golden.faults import FaultCode
from reconverge.golden.isa import NUM_REGS
from reconverge.golden.memmap import GLOBAL_BASE, SHARED_BASE
from reconverge.golden.sm.lsu import AMO_BY_FUNCT5, WORD_BYTES, MemOp
from reconverge.golden.sm.params import SMParams

ADDR_BITS = 32
WORD_BITS = 8 * WORD_BYTES
COUNTER_BITS = 32
REG_BITS = ceil_log2(NUM_REGS)


class Window(enum.Enum, shape=2):
    """The address window of a thread's address (``golden.memmap.Region``, or none)."""

    NONE = 0
    GLOBAL = 1
    SHARED = 2
    LOCAL = 3


#: The shared banks' read-modify-write of each AMO (``golden.memory.AMO_OPS``).
AMO_HDL: dict[str, Callable[[Value, Value], Value]] = {
    "add": lambda old, v: (old + v)[:WORD_BITS],
    "swap": lambda old, v: v,
    "min": lambda old, v: Mux(old.as_signed() <= v.as_signed(), old, v),
    "max": lambda old, v: Mux(old.as_signed() >= v.as_signed(), old, v),
}

#: Fault codes by memory operation: (misaligned, unmapped).
_FAULTS: dict[MemOp, tuple[FaultCode, FaultCode]] = {
    MemOp.LOAD: (FaultCode.MISALIGNED_LOAD, FaultCode.UNMAPPED_LOAD),
    MemOp.STORE: (FaultCode.MISALIGNED_STORE, FaultCode.UNMAPPED_STORE),
    MemOp.AMO: (FaultCode.MISALIGNED_AMO, FaultCode.UNMAPPED_AMO),
}


def instr_layout(warp_size: int, warp_bits: int) -> data.StructLayout:
    """The memory instruction an LSU runs (the ``start`` fields but ``valid``)."""
    return data.StructLayout(
        {
            "op": MemOp,
            "size": 2,
            "signed": 1,
            "amo": 5,
            "warp": warp_bits,
            "block": warp_bits,
            "rd": REG_BITS,
            "mask": warp_size,
        }
    )


def _words(width: int, count: int) -> data.ArrayLayout:
    return data.ArrayLayout(width, count)


class LSU(wiring.Component):
    """The load/store unit of an SM elaborated from ``params`` (module docstring)."""

    def __init__(self, params: SMParams) -> None:
        self.params = params
        geometry, config, memmap = params.geometry, params.config, params.memmap
        self.warp_size = w = geometry.warp_size
        self.slots = geometry.warps
        self.line_bytes = lb = config.line_bytes
        self.banks = config.shared_banks
        self.memmap = memmap
        self.key_width = ADDR_BITS - ceil_log2(lb)
        stride = memmap.local_size * w  # bytes of one warp slot's local memory
        if stride % lb or self.slots * stride > GLOBAL_BASE:
            raise ValueError(
                f"local memory of {self.slots} warp slots x {w} threads x {memmap.local_size} "
                f"bytes must be whole {lb}-byte lines below the global window"
            )
        missing = set(AMO_BY_FUNCT5.values()) - set(AMO_HDL)
        if missing:
            raise ValueError(f"the LSU has no shared-memory AMO for {sorted(missing)}")
        wb = params.warp_bits
        self.instr = instr_layout(w, wb)
        fields = {name: Out(field.shape) for name, field in self.instr}
        super().__init__(
            {
                "capture": In(
                    wiring.Signature(
                        {
                            "valid": Out(1),
                            "mask": Out(w),
                            "addr": Out(_words(ADDR_BITS, w)),
                            "data": Out(_words(WORD_BITS, w)),
                        }
                    )
                ),
                "start": In(wiring.Signature({"valid": Out(1), **fields})),
                "busy": Out(1),
                "tree": Out(
                    wiring.Signature(
                        {
                            "valid": Out(w),
                            "key": Out(_words(self.key_width, w)),
                            "granted": In(1),
                            "min_key": In(self.key_width),
                            "mask": In(w),
                        }
                    )
                ),
                "mem": Out(
                    wiring.Signature(
                        {
                            "req_valid": Out(1),
                            "req_ready": In(1),
                            "req_addr": Out(ADDR_BITS),
                            "req_op": Out(MemOp),
                            "req_amo": Out(5),
                            "req_be": Out(lb),
                            "req_wdata": Out(8 * lb),
                            "resp_valid": In(1),
                            "resp_rdata": In(8 * lb),
                        }
                    )
                ),
                "stall": Out(1),
                "wb": Out(
                    wiring.Signature(
                        {
                            "en": Out(w),
                            "warp": Out(wb),
                            "rd": Out(REG_BITS),
                            "data": Out(_words(WORD_BITS, w)),
                        }
                    )
                ),
                "release": Out(
                    wiring.Signature(
                        {
                            "valid": Out(1),
                            "warp": Out(wb),
                            "rd": Out(REG_BITS),
                            "mask": Out(w),
                            "global_": Out(1),
                        }
                    )
                ),
                "fault": Out(
                    wiring.Signature(
                        {
                            "valid": Out(1),
                            "code": Out(4),
                            "position": Out(bits_for(w)),
                            "addr": Out(ADDR_BITS),
                        }
                    )
                ),
                "counters": Out(
                    wiring.Signature(
                        {
                            name: Out(COUNTER_BITS)
                            for name in (
                                "transactions",
                                "shared_cycles",
                                "bank_conflicts",
                                "stalls",
                            )
                        }
                    )
                ),
            }
        )

    # -- per-thread helpers -----------------------------------------------------------------

    def _window(self, m: Module, name: str, addr: Value) -> Signal:
        """The window of ``addr`` (offset from the base below the size, as ``_route``)."""
        window = Signal(Window, name=name)
        memmap = self.memmap
        inside = [
            ((addr - base)[:ADDR_BITS] < size, value)
            for value, base, size in (
                (Window.GLOBAL, GLOBAL_BASE, memmap.global_size),
                (Window.SHARED, SHARED_BASE, memmap.shared_size),
                (Window.LOCAL, memmap.local_base, memmap.local_size),
            )
        ]
        choice: Value = Const(Window.NONE.value, 2)
        for hit, value in reversed(inside):
            choice = Mux(hit, value.value, choice)
        m.d.comb += window.eq(choice)
        return window

    @staticmethod
    def _lowest(m: Module, name: str, bits: Value) -> Signal:
        """One-hot of the lowest set bit of ``bits`` (0 when none)."""
        first = Signal(len(bits), name=name)
        m.d.comb += first.eq(bits & (~bits + 1)[: len(bits)])
        return first

    @staticmethod
    def _extend(word: Value, byte: Value, size: Value, signed: Value) -> Value:
        """The ``size`` (log2 bytes) element at byte ``byte`` of ``word``, sign- or
        zero-extended to 32 bits (``Bank.read``)."""
        shifted = (word >> (byte << 3))[:WORD_BITS]
        b, h = shifted[:8], shifted[:16]
        return Mux(
            size == 0,
            Mux(signed, b.as_signed(), b),
            Mux(size == 1, Mux(signed, h.as_signed(), h), word),
        )[:WORD_BITS]

    # -- elaboration ------------------------------------------------------------------------

    def elaborate(self, platform: object) -> Module:
        m = Module()
        w, lb = self.warp_size, self.line_bytes
        line_shift = ceil_log2(lb)
        word_shift = ceil_log2(WORD_BYTES)
        memmap = self.memmap
        cap, start, tree, port = self.capture, self.start, self.tree, self.mem

        # -- registers (advance only in cycles without stall) -------------------------------
        active = Signal(name="active")
        instr = Signal(self.instr, name="instr")
        addr = [Signal(ADDR_BITS, name=f"addr{i}") for i in range(w)]
        opnd = [Signal(WORD_BITS, name=f"data{i}") for i in range(w)]
        window = [Signal(Window, name=f"window{i}") for i in range(w)]
        pend_line = Signal(w, name="pend_line")  # global/local threads not yet served
        pend_shared = Signal(w, name="pend_shared")
        made_line = Signal(name="made_line")  # this instruction made a line transaction
        shared_begun = Signal(name="shared_begun")  # its shared part had its first cycle
        due = Signal(name="due")  # a line request was accepted last cycle
        due_served = Signal(w, name="due_served")
        shared_due = Signal(name="shared_due")  # a shared read of last cycle gives results
        shared_served = Signal(w, name="shared_served")
        # the response holding register (always clocked: a response in a stalled cycle)
        held = Signal(name="held")
        held_line = Signal(8 * lb, name="held_line")

        # -- stall ----------------------------------------------------------------------------
        here = Signal(name="resp_here")
        waiting = Signal(name="waiting")
        stall = Signal(name="stall_now")
        adv = Signal(name="adv")
        rdata = Signal(8 * lb, name="rdata")
        m.d.comb += [
            here.eq(held | port.resp_valid),
            waiting.eq(due & ~here),
            rdata.eq(Mux(held, held_line, port.resp_rdata)),
            stall.eq(waiting | (port.req_valid & ~port.req_ready)),
            adv.eq(~stall),
            self.stall.eq(stall),
            self.busy.eq(active),
        ]
        m.d.sync += held.eq(stall & (held | (due & port.resp_valid)))
        with m.If(due & port.resp_valid & ~held):
            m.d.sync += held_line.eq(port.resp_rdata)

        # -- per-thread values ----------------------------------------------------------------
        size, op = instr.size, instr.op
        local_bits = ceil_log2(memmap.local_size)
        shared_words = memmap.shared_size // WORD_BYTES
        bank_bits = min(ceil_log2(self.banks), ceil_log2(shared_words))
        banks = 1 << bank_bits  # banks a window reaches (fewer when it has fewer words)
        physical, word_in_line, bank, bank_row, byte_en, spread = [], [], [], [], [], []
        for i in range(w):
            a = addr[i]
            phys = Signal(ADDR_BITS, name=f"physical{i}")
            local = Cat(
                a[:word_shift], Const(i, ceil_log2(w)), a[word_shift:local_bits], instr.warp
            )
            m.d.comb += phys.eq(Mux(window[i] == Window.LOCAL, local, a))
            physical.append(phys)
            word_in_line.append(phys[word_shift:line_shift])
            shared_word = a[word_shift : ceil_log2(memmap.shared_size)]
            bank.append(shared_word[:bank_bits])
            bank_row.append(shared_word[bank_bits:])
            byte = a[:word_shift]
            be = Signal(WORD_BYTES, name=f"byte_en{i}")
            rep = Signal(WORD_BITS, name=f"spread{i}")  # the element in every byte lane
            d = opnd[i]
            m.d.comb += [
                be.eq(Mux(size == 0, 1 << byte, Mux(size == 1, 0b11 << byte, 0b1111))),
                rep.eq(Mux(size == 0, d[:8].replicate(4), Mux(size == 1, d[:16].replicate(2), d))),
            ]
            byte_en.append(be)
            spread.append(rep)

        def merge(name: str, sel: Value) -> tuple[Signal, Signal]:
            """(word, byte enables) the threads of ``sel`` write into one word: each byte from
            the highest thread writing it (``Bank.write``)."""
            word = Signal(WORD_BITS, name=f"{name}_wdata")
            enables = Signal(WORD_BYTES, name=f"{name}_be")
            for j in range(WORD_BYTES):
                byte: Value = Const(0, 8)
                for i in range(w):
                    byte = Mux(sel[i] & byte_en[i][j], spread[i].word_select(j, 8), byte)
                m.d.comb += [
                    word.word_select(j, 8).eq(byte),
                    enables[j].eq((sel & Cat(be[j] for be in byte_en)).any()),
                ]
            return word, enables

        # -- LSU cycle -----------------------------------------------------------------------
        amo = Signal(name="is_amo")
        store = Signal(name="is_store")
        lsu_cycle = Signal(name="lsu_cycle")
        line_cycle = Signal(name="line_cycle")
        shared_cycle = Signal(name="shared_cycle")
        m.d.comb += [
            amo.eq(op == MemOp.AMO),
            store.eq(op == MemOp.STORE),
            lsu_cycle.eq(active & tree.granted),
            line_cycle.eq(lsu_cycle & pend_line.any()),
            shared_cycle.eq(lsu_cycle & ~pend_line.any() & pend_shared.any()),
            tree.valid.eq(pend_line),
        ]
        for i in range(w):
            m.d.comb += tree.key[i].eq(physical[i][line_shift:])

        # global and local: one line, all its threads (an AMO: the lowest of each word)
        on_line = Signal(w, name="on_line")
        line_served = Signal(w, name="line_served")
        m.d.comb += on_line.eq(tree.mask & pend_line)
        words_per_line = lb // WORD_BYTES
        line_words, line_enables, firsts = [], [], []
        for s in range(words_per_line):
            member = Signal(w, name=f"line_word{s}")
            m.d.comb += member.eq(on_line & Cat(wl == s for wl in word_in_line))
            first = self._lowest(m, f"line_word{s}_first", member)
            firsts.append(first)
            word, enables = merge(f"line_word{s}", Mux(amo, first, member))
            line_words.append(word)
            line_enables.append(enables)
        amo_served: Value = Const(0, w)
        for first in firsts:
            amo_served = amo_served | first
        m.d.comb += line_served.eq(Mux(amo, amo_served, on_line))
        m.d.comb += [
            port.req_valid.eq(line_cycle & ~waiting),
            port.req_addr.eq(Cat(Const(0, line_shift), tree.min_key)),
            port.req_op.eq(op),
            port.req_amo.eq(instr.amo),
            port.req_be.eq(Mux(op == MemOp.LOAD, 0, Cat(*line_enables))),
            port.req_wdata.eq(Cat(*line_words)),
        ]

        # shared: every bank serves the word of its lowest pending thread
        shared_now = Signal(w, name="shared_now")
        row_bits = len(bank_row[0]) + self.params.warp_bits
        depth = self.slots << len(bank_row[0])
        read_words: list[Value] = []
        amo_ops = {f5: AMO_HDL[name] for f5, name in AMO_BY_FUNCT5.items()}
        self.bank_memories: list[memory.Memory] = []  # for inspection by tests
        served_banks: Value = Const(0, w)
        for k in range(banks):
            member = Signal(w, name=f"bank{k}_pending")
            m.d.comb += member.eq(pend_shared & Cat(b == k for b in bank))
            first = self._lowest(m, f"bank{k}_first", member)
            row = Signal(row_bits, name=f"bank{k}_row")
            picked: Value = Const(0, len(bank_row[0]))
            for i in range(w):
                picked = picked | Mux(first[i], bank_row[i], 0)
            m.d.comb += row.eq(Cat(picked, instr.block))
            same = Signal(w, name=f"bank{k}_same")
            m.d.comb += same.eq(member & Cat(r == picked for r in bank_row))
            served = Signal(w, name=f"bank{k}_served")
            m.d.comb += served.eq(Mux(amo, first, same))
            served_banks = served_banks | served
            word, enables = merge(f"bank{k}", served)
            # the AMO's read-modify-write: read now, write the next cycle
            rmw = Signal(name=f"bank{k}_rmw")
            rmw_row = Signal(row_bits, name=f"bank{k}_rmw_row")
            rmw_opnd = Signal(WORD_BITS, name=f"bank{k}_rmw_operand")
            with m.If(adv):
                m.d.sync += [
                    rmw.eq(shared_cycle & amo & member.any()),
                    rmw_row.eq(row),
                    rmw_opnd.eq(word),
                ]
            mem = memory.Memory(shape=WORD_BITS, depth=depth, init=[])
            m.submodules[f"bank{k}"] = mem
            self.bank_memories.append(mem)
            wp = mem.write_port(granularity=8)
            rp = mem.read_port(transparent_for=(wp,))
            new = Signal(WORD_BITS, name=f"bank{k}_amo_new")
            result: Value = rp.data
            for f5, fn in amo_ops.items():
                result = Mux(instr.amo == f5, fn(rp.data, rmw_opnd), result)
            m.d.comb += new.eq(result)
            write = Signal(name=f"bank{k}_store")
            m.d.comb += [
                write.eq(shared_cycle & store & member.any()),
                rp.addr.eq(row),
                rp.en.eq(adv),
                wp.addr.eq(Mux(rmw, rmw_row, row)),
                wp.data.eq(Mux(rmw, new, word)),
                wp.en.eq(Mux(rmw, 0b1111, enables) & (adv & (rmw | write)).replicate(4)),
            ]
            read_words.append(rp.data)
        m.d.comb += shared_now.eq(served_banks)

        # -- next state, release --------------------------------------------------------------
        next_line = Signal(w, name="next_pend_line")
        next_shared = Signal(w, name="next_pend_shared")
        last = Signal(name="last")
        m.d.comb += [
            next_line.eq(pend_line & ~Mux(line_cycle, line_served, 0)),
            next_shared.eq(pend_shared & ~Mux(shared_cycle, shared_now, 0)),
            last.eq(lsu_cycle & ~next_line.any() & ~next_shared.any()),
            self.release.valid.eq(last & adv),
            self.release.warp.eq(instr.warp),
            self.release.rd.eq(instr.rd),
            self.release.mask.eq(instr.mask),
            self.release.global_.eq(made_line | line_cycle),
        ]

        # -- results -------------------------------------------------------------------------
        writes = Signal(name="writes_rd")
        m.d.comb += [
            writes.eq(~store & (instr.rd != 0)),
            self.wb.en.eq(
                Mux(adv & writes, Mux(due, due_served, 0) | Mux(shared_due, shared_served, 0), 0)
            ),
            self.wb.warp.eq(instr.warp),
            self.wb.rd.eq(instr.rd),
        ]
        for i in range(w):
            from_line = rdata.word_select(word_in_line[i], WORD_BITS)
            from_bank: Value = read_words[0]
            for k in range(1, banks):
                from_bank = Mux(bank[i] == k, read_words[k], from_bank)
            word = Signal(WORD_BITS, name=f"result{i}_word")
            m.d.comb += [
                word.eq(Mux(due, from_line, from_bank)),
                self.wb.data[i].eq(self._extend(word, addr[i][:word_shift], size, instr.signed)),
            ]

        # -- faults at start ------------------------------------------------------------------
        in_pass = Signal(w, name="capture_now")
        m.d.comb += in_pass.eq(Mux(cap.valid, cap.mask, 0))
        now_addr, now_window = [], []
        for i in range(w):
            a = Signal(ADDR_BITS, name=f"start_addr{i}")
            win = Signal(Window, name=f"start_window{i}")
            m.d.comb += [
                a.eq(Mux(in_pass[i], cap.addr[i], addr[i])),
                win.eq(
                    Mux(in_pass[i], self._window(m, f"capture_window{i}", cap.addr[i]), window[i])
                ),
            ]
            now_addr.append(a)
            now_window.append(win)
        misaligned = Signal(w, name="misaligned")
        unmapped = Signal(w, name="unmapped")
        m.d.comb += [
            misaligned.eq(
                start.mask
                & Cat((a[0] & (start.size != 0)) | (a[1] & (start.size == 2)) for a in now_addr)
            ),
            unmapped.eq(start.mask & Cat(win == Window.NONE for win in now_window)),
        ]
        offending = self._lowest(m, "offending", Mux(misaligned.any(), misaligned, unmapped))
        bad = Signal(name="bad")
        m.d.comb += bad.eq(start.valid & (misaligned.any() | unmapped.any()))
        position: Value = Const(0, bits_for(w))
        fault_addr: Value = Const(0, ADDR_BITS)
        for i in range(w):
            position = position | Mux(offending[i], i, 0)
            fault_addr = fault_addr | Mux(offending[i], now_addr[i], 0)
        code: Value = Const(0, 4)
        for mem_op, (mis, unm) in _FAULTS.items():
            code = Mux(start.op == mem_op, Mux(misaligned.any(), mis, unm), code)
        m.d.comb += [
            self.fault.valid.eq(bad & adv),
            self.fault.code.eq(code),
            self.fault.position.eq(position),
            self.fault.addr.eq(fault_addr),
        ]

        # -- state update ---------------------------------------------------------------------
        counters = self.counters
        m.d.sync += counters.stalls.eq(counters.stalls + stall)
        with m.If(adv):
            m.d.sync += [
                due.eq(port.req_valid),
                due_served.eq(line_served),
                shared_due.eq(shared_cycle & ~store),
                shared_served.eq(shared_now),
                counters.transactions.eq(counters.transactions + port.req_valid),
                counters.shared_cycles.eq(counters.shared_cycles + shared_cycle),
                counters.bank_conflicts.eq(counters.bank_conflicts + (shared_cycle & shared_begun)),
            ]
            for i in range(w):
                with m.If(in_pass[i]):
                    m.d.sync += [
                        addr[i].eq(cap.addr[i]),
                        opnd[i].eq(cap.data[i]),
                        window[i].eq(now_window[i]),
                    ]
            with m.If(lsu_cycle):
                m.d.sync += [
                    pend_line.eq(next_line),
                    pend_shared.eq(next_shared),
                    made_line.eq(made_line | line_cycle),
                    shared_begun.eq(shared_begun | shared_cycle),
                ]
                with m.If(last):
                    m.d.sync += active.eq(0)
            with m.If(start.valid & ~bad):
                lines = Cat((win == Window.GLOBAL) | (win == Window.LOCAL) for win in now_window)
                shared = Cat(win == Window.SHARED for win in now_window)
                m.d.sync += [
                    active.eq(1),
                    pend_line.eq(start.mask & lines),
                    pend_shared.eq(start.mask & shared),
                    made_line.eq(0),
                    shared_begun.eq(0),
                ]
                m.d.sync += [
                    getattr(instr, name).eq(getattr(start, name)) for name, _ in self.instr
                ]
        return m
