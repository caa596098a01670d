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
* **LR/SC** (``amo`` = the funct5 of ``lr.w`` / ``sc.w``, docs/isa.md "LR/SC"): the
  reservation table holds, per warp slot and thread position, a valid bit and the reserved
  word (its physical word address, or for shared memory its bank, row and window). ``lr.w``
  is served as a word load that sets the served threads' entries; ``sc.w`` as an AMO (the
  lowest pending thread of each word per cycle), whose thread succeeds when its entry holds
  the word: it then stores (a ``store`` request with the enables of the successful threads'
  words), and its result (0, or 1 for a failure) leaves through ``wb``; its entry ends either
  way. Every word written — by a store, an AMO or a successful ``sc.w`` — invalidates every
  entry on it. ``clear`` (one bit per warp slot, pulsed when a new warp is dispatched into the
  slot) invalidates the slot's entries, once the LSU is no longer busy with that slot's
  instruction (so an instruction in flight sees its own warp's reservations, as in golden).
* **Shared** threads then: ``shared_banks`` word-wide banks (synchronous block RAM) hold one
  ``memmap.shared_size`` window per warp slot (``start.block`` names the instruction's window);
  each LSU cycle every bank serves the word of its lowest pending thread (all pending threads
  on it; an AMO only that thread, whose read-modify-write completes the next cycle).
* **Results** of loads and AMOs leave through ``wb`` (a register-file write port; ``data`` is
  meaningful where ``en`` is set) in the cycle the line response arrives, or the cycle after a
  shared read: by L + 1 at the latest. ``release`` marks L of every instruction that started,
  stores included (warp, rd, mask, and ``global_``: a line transaction was made, so the
  ``global_`` latency applies); ``start.rd`` is the destination, 0 for none (no ``wb``).
* **Stall.** Requests are accepted with ``req_valid & req_ready`` and answered with
  ``resp_valid`` one cycle later or more. ``stall`` is high while a response is due and absent
  or a request is not accepted; it is combinational from the registers and the inputs
  ``mem.req_ready`` and ``mem.resp_valid``. The LSU freezes itself with it (its registers,
  bank ports and outputs ``wb``/``release``/``fault``/counters only act in cycles without
  stall) except for one response holding register, so it belongs in the SM's ungated clock
  domain while the top freezes the rest of the core with ``stall``; ``capture``/``start``
  presented in a stalled cycle are ignored (a frozen core presents them again).
* **Tree sharing** (stack-less). The tree finds the lowest line a cycle ahead: each cycle
  without stall after ``start`` it gets the positions pending after that cycle and their keys
  from the address buffer, and its result is registered for the next cycle. In the cycle of
  ``start`` the last pass's addresses are not in the buffer yet, so the tree is not the LSU's
  and the cycle after has no LSU cycle (timing rule 3: the LSU cycles start a cycle later
  than under the other policies). ``granted`` low (the control arbitrates its PC on the tree
  this cycle) likewise leaves the next cycle without a result: no LSU cycle happens then.

Ports (W warp size, KW = 32 - log2(line bytes) line-key bits, WB warp-slot bits, LB line bytes):

=========  ===  =====================================================================
group      dir  members
=========  ===  =====================================================================
capture    in   valid, mask [W], addr [W x 32], data [W x 32]
start      in   valid, op (``MemOp``), size (log2 bytes), signed, amo (funct5), warp, block
                (warp slots), rd (destination, 0: none), mask [W]
clear      in   [warp slots]: a new warp enters the slot (its reservations end)
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

from dataclasses import dataclass

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, enum, memory, wiring
from amaranth.lib.wiring import In, Out

from reconverge.golden.faults import FaultCode
from reconverge.golden.geometry import bits_for, ceil_log2
from reconverge.golden.isa import NUM_REGS
from reconverge.golden.memmap import GLOBAL_BASE, SHARED_BASE
from reconverge.golden.params import COUNTER as COUNTER_BITS
from reconverge.golden.params import SMParams
from reconverge.golden.sm.lsu import (
    AMO_BY_FUNCT5,
    AMO_RESULTS,
    LR_FUNCT5,
    SC_FUNCT5,
    SIGNED_AMOS,
    WORD_BYTES,
    MemOp,
    shares_tree,
)
from reconverge.hdl.blocks.common import mux_tree

ADDR_BITS = 32
WORD_BITS = 8 * WORD_BYTES
WORD_SHIFT = ceil_log2(WORD_BYTES)
REG_BITS = ceil_log2(NUM_REGS)
FUNCT5_BITS = 5
COUNTERS = ("transactions", "shared_cycles", "bank_conflicts", "stalls")


class Window(enum.Enum, shape=2):
    """The address window of a thread's address (``golden.memmap.Region``, or none)."""

    NONE = 0
    GLOBAL = 1
    SHARED = 2
    LOCAL = 3


def amo_word(funct5: Value, old: Value, operand: Value) -> Value:
    """The word an AMO of ``funct5`` writes (``old`` for none): ``AMO_RESULTS`` as logic.
    Every result but the sum is, bit by bit, a function of the old bit and the operand bit:
    a truth table of four entries chosen once per word (by ``funct5``, and for the min/max
    AMOs by one comparison: a signed one is the unsigned one with both sign bits inverted)
    and looked up per bit, two gate levels where a chain of multiplexers over the results
    had one per result."""
    signed = Cat(funct5 == f5 for f5, name in AMO_BY_FUNCT5.items() if name in SIGNED_AMOS).any()

    def unsigned_order(word: Value) -> Value:
        return Cat(word[:-1], word[-1] ^ signed)

    below = unsigned_order(old) < unsigned_order(operand)
    # entry 2 * operand bit + old bit of each result's table
    keep_old, take_operand = 0b1010, 0b1100
    tables: dict[str, Value] = {
        "operand": Const(take_operand, 4),
        "xor": Const(0b0110, 4),
        "and": Const(0b1000, 4),
        "or": Const(0b1110, 4),
        "smaller": Mux(below, keep_old, take_operand),
        "larger": Mux(below, take_operand, keep_old),
    }
    table: Value = Const(keep_old, 4)
    for what, value in tables.items():
        table = Mux(Cat(funct5 == f5 for f5 in _codes(what)).any(), value, table)
    looked_up = Cat(
        Mux(p, Mux(o, table[3], table[2]), Mux(o, table[1], table[0]))
        for o, p in zip(old, operand, strict=True)
    )
    is_sum = Cat(funct5 == f5 for f5 in _codes("sum")).any()
    return Mux(is_sum, (old + operand)[:WORD_BITS], looked_up)


def _codes(what: str) -> list[int]:
    """The funct5 codes of the AMOs whose result is ``what`` (``AMO_RESULTS``)."""
    return [f5 for f5, name in AMO_BY_FUNCT5.items() if AMO_RESULTS[name] == what]


#: Fault codes by memory operation: (misaligned, unmapped).
_FAULTS: dict[MemOp, tuple[FaultCode, FaultCode]] = {
    MemOp.LOAD: (FaultCode.MISALIGNED_LOAD, FaultCode.UNMAPPED_LOAD),
    MemOp.STORE: (FaultCode.MISALIGNED_STORE, FaultCode.UNMAPPED_STORE),
    MemOp.AMO: (FaultCode.MISALIGNED_AMO, FaultCode.UNMAPPED_AMO),
}


def instr_layout(warp_size: int, warp_bits: int) -> data.StructLayout:
    """The memory instruction the LSU runs: the ``start`` fields but ``valid``."""
    return data.StructLayout(
        {
            "op": MemOp,
            "size": 2,  # log2 bytes
            "signed": 1,
            "amo": FUNCT5_BITS,
            "warp": warp_bits,
            "block": warp_bits,
            "rd": REG_BITS,
            "mask": warp_size,
        }
    )


#: What the address buffer keeps of each thread position.
ENTRY = data.StructLayout({"addr": ADDR_BITS, "data": WORD_BITS, "window": Window})

#: A reserved word: a physical word address (global, local), or for shared memory
#: (``shared`` set) the bank, the row and the warp slot whose window it is.
RESERVED_WORD = data.StructLayout({"shared": 1, "word": ADDR_BITS - WORD_SHIFT})
#: One entry of the reservation table.
RESERVATION = data.StructLayout({"valid": 1, "at": RESERVED_WORD})


def _group(**members: wiring.Member) -> wiring.Signature:
    return wiring.Signature(members)


def lsu_signature(params: SMParams, key_width: int) -> wiring.Signature:
    """The LSU's ports (module docstring), from the LSU's side."""
    w, wb, lb = params.geometry.warp_size, params.warp_bits, params.config.line_bytes
    words = data.ArrayLayout(WORD_BITS, w)
    instr = instr_layout(w, wb)
    return _group(
        capture=In(
            _group(
                valid=Out(1), mask=Out(w), addr=Out(data.ArrayLayout(ADDR_BITS, w)), data=Out(words)
            )
        ),
        start=In(_group(valid=Out(1), **{name: Out(f.shape) for name, f in instr})),
        clear=In(params.geometry.warps),
        busy=Out(1),
        **(
            {
                "tree": Out(
                    _group(
                        valid=Out(w),
                        key=Out(data.ArrayLayout(key_width, w)),
                        granted=In(1),
                        min_key=In(key_width),
                        mask=In(w),
                    )
                )
            }
            if shares_tree(params.policy)
            else {}
        ),
        mem=Out(
            _group(
                req_valid=Out(1),
                req_ready=In(1),
                req_addr=Out(ADDR_BITS),
                req_op=Out(MemOp),
                req_amo=Out(FUNCT5_BITS),
                req_be=Out(lb),
                req_wdata=Out(8 * lb),
                resp_valid=In(1),
                resp_rdata=In(8 * lb),
            )
        ),
        stall=Out(1),
        wb=Out(_group(en=Out(w), warp=Out(wb), rd=Out(REG_BITS), data=Out(words))),
        release=Out(
            _group(valid=Out(1), warp=Out(wb), rd=Out(REG_BITS), mask=Out(w), global_=Out(1))
        ),
        fault=Out(
            _group(valid=Out(1), code=Out(4), position=Out(bits_for(w)), addr=Out(ADDR_BITS))
        ),
        counters=Out(_group(**{name: Out(COUNTER_BITS) for name in COUNTERS})),
    )


def lowest(m: Module, name: str, bits: Value) -> Signal:
    """One-hot of the lowest set bit of ``bits`` (0 when none)."""
    first = Signal(len(bits), name=name)
    m.d.comb += first.eq(bits & (~bits + 1)[: len(bits)])
    return first


def extend(word: Value, byte: Value, size: Value, signed: Value) -> Value:
    """The element of ``size`` (log2 bytes) at byte ``byte`` of ``word``, sign- or
    zero-extended to 32 bits (``golden.memory.Bank.read``; the access is aligned: a half at
    byte 0 or 2, a word at 0)."""
    b = mux_tree([word.word_select(k, 8) for k in range(WORD_BYTES)], byte)
    h = Mux(byte[1], word[16:], word[:16])
    return Mux(
        size == 0,
        Mux(signed, b.as_signed(), b),
        Mux(size == 1, Mux(signed, h.as_signed(), h), word),
    )[:WORD_BITS]


@dataclass
class _Thread:
    """What the LSU derives from one buffered thread position."""

    entry: data.View  # address, store data / operand, window
    physical: Signal  # the data-port address (local: interleaved)
    line_key: Value  # its line (the address above the line offset)
    word_in_line: Value
    bank: Value  # shared bank
    row: Value  # shared row within the block's window
    byte_en: Signal  # the bytes of its word the access covers
    spread: Signal  # its store data in every byte lane it may write
    reserved: Signal  # its word as the reservation table names it (``RESERVED_WORD``)


@dataclass
class _Bank:
    """What one shared bank serves in a shared LSU cycle (:meth:`LSU._bank_request`)."""

    member: Signal  # its pending threads
    row: Signal  # the row it reads and writes: the lowest one's, in the block's window
    served: Signal  # the threads it serves
    writer: Signal  # whose data (or AMO operand) it writes


class _State:
    """The LSU's registers (advanced only in cycles without stall) and the signals of the
    current cycle that the parts of :meth:`LSU.elaborate` share."""

    def __init__(self, w: int, line_bytes: int, key_width: int, instr: data.StructLayout) -> None:
        self.active = Signal(name="active")  # in the LSU cycles of an instruction
        self.instr = Signal(instr, name="instr")
        self.pend_line = Signal(w, name="pend_line")  # global/local positions not yet served
        self.pend_shared = Signal(w, name="pend_shared")
        self.made_line = Signal(name="made_line")  # the instruction made a line transaction
        self.shared_begun = Signal(name="shared_begun")  # its shared part had its first cycle
        self.due = Signal(name="due")  # a line request was accepted last cycle: response due
        self.due_served = Signal(w, name="due_served")
        self.shared_due = Signal(name="shared_due")  # last cycle's shared reads give results
        self.shared_served = Signal(w, name="shared_served")
        # this cycle
        self.adv = Signal(name="adv")  # no stall: the LSU advances
        self.lsu_cycle = Signal(name="lsu_cycle")
        self.line_ready = Signal(name="line_ready")  # the lowest line is known (stack-less)
        self.start_line = Signal(w, name="start_line")  # the start's global/local positions
        self.start_shared = Signal(w, name="start_shared")  # and its shared ones
        self.next_line = Signal(w, name="next_pend_line")  # pending after this cycle
        self.line_cycle = Signal(name="line_cycle")
        self.shared_cycle = Signal(name="shared_cycle")
        self.line_served = Signal(w, name="line_served")
        self.on_line = Signal(w, name="on_line")  # pending positions on the lowest line
        self.min_key = Signal(key_width, name="min_key")  # that line
        self.shared_now = Signal(w, name="shared_now")  # positions the banks serve
        self.line = Signal(8 * line_bytes, name="line")  # the due response (or the held one)
        # the kind of instruction (``instr``), decoded and registered at start
        self.store = Signal(name="is_store")
        self.lr = Signal(name="is_lr")  # lr.w
        self.sc = Signal(name="is_sc")  # sc.w
        self.rmw = Signal(name="is_rmw")  # an AMO's read-modify-write
        self.per_word = Signal(name="per_word")  # one thread per word and cycle: AMO, sc.w
        self.served = Signal(w, name="served")  # the positions served in this LSU cycle
        self.sc_ok = Signal(w, name="sc_ok")  # positions whose reservation holds their word
        self.sc_fail = Signal(w, name="sc_fail")  # last LSU cycle's sc.w results (registered)


class LSU(wiring.Component):
    """The load/store unit of an SM elaborated from ``params`` (module docstring).
    ``key_width`` is the width of ``tree.key``; ``bank_memories`` (after elaboration) are the
    shared banks, one ``lib.memory.Memory`` each."""

    def __init__(self, params: SMParams) -> None:
        geometry, config, memmap = params.geometry, params.config, params.memmap
        self.params = params
        self.warp_size = w = geometry.warp_size
        self.line_bytes = lb = config.line_bytes
        self.memmap = memmap
        self.key_width = ADDR_BITS - ceil_log2(lb)
        stride = memmap.local_size * w  # bytes of one warp slot's local memory
        if stride % lb or geometry.warps * stride > GLOBAL_BASE:
            raise ValueError(
                f"local memory of {geometry.warps} warp slots x {w} threads x "
                f"{memmap.local_size} bytes must be whole {lb}-byte lines below the global window"
            )
        missing = set(AMO_BY_FUNCT5.values()) - set(AMO_RESULTS)
        if missing:
            raise ValueError(f"the LSU has no shared-memory AMO for {sorted(missing)}")
        shared_words = memmap.shared_size // WORD_BYTES
        #: bank index bits (a window of fewer words than banks reaches only the first ones)
        self.bank_bits = min(ceil_log2(config.shared_banks), ceil_log2(shared_words))
        self.row_bits = ceil_log2(shared_words) - self.bank_bits  # rows of one window
        self.bank_memories: list[memory.Memory] = []
        #: the reservation table (lr.w/sc.w): [warp slot][thread position]
        self.reservations = [
            [Signal(RESERVATION, name=f"reserved_w{v}_t{i}") for i in range(w)]
            for v in range(geometry.warps)
        ]
        super().__init__(lsu_signature(params, self.key_width))

    def elaborate(self, platform: object) -> Module:
        m = Module()
        w = self.warp_size
        s = _State(w, self.line_bytes, self.key_width, instr_layout(w, self.params.warp_bits))
        entries = [Signal(ENTRY, name=f"thread{i}") for i in range(w)]
        threads = [self._thread(m, s, i, entry) for i, entry in enumerate(entries)]
        self._stall(m, s)
        m.d.comb += [
            self.busy.eq(s.active),
            s.lsu_cycle.eq(s.active & s.line_ready),
            s.line_cycle.eq(s.lsu_cycle & s.pend_line.any()),
            s.shared_cycle.eq(s.lsu_cycle & ~s.pend_line.any() & s.pend_shared.any()),
        ]
        self._reservation_check(m, s, threads)
        line_writers = self._line_writers(m, s, threads)
        banks = [self._bank_request(m, s, threads, k) for k in range(1 << self.bank_bits)]
        merged = self._merges(m, s, threads, line_writers, banks)
        line_written = self._line_request(m, s, merged[: len(line_writers)])
        bank_words, bank_written = self._shared_banks(m, s, banks, merged)
        self._results(m, s, threads, bank_words)
        addrs, windows, bad = self._start(m, s, entries)
        if shares_tree(self.params.policy):
            self._tree_line(m, s, threads)
        else:
            self._lowest_line(m, s, threads, addrs, windows, bad)
        self._advance(m, s, entries, windows, bad)
        self._reservation_update(m, s, threads, line_written, bank_written)
        return m

    # -- per thread -----------------------------------------------------------------------

    def _window(self, m: Module, name: str, addr: Value) -> Signal:
        """The window of ``addr``: its offset from the base below the size, as
        ``golden.memory.WarpMemory._route`` (an aligned access then fits entirely). A window
        of a power-of-two size at a multiple of it (every shipped configuration) is its high
        address bits against a constant, with no subtractor."""
        memmap = self.memmap
        window = Signal(Window, name=name)
        choice: Value = Const(Window.NONE.value, Window.as_shape())
        for value, base, size in (
            (Window.LOCAL, memmap.local_base, memmap.local_size),
            (Window.SHARED, SHARED_BASE, memmap.shared_size),
            (Window.GLOBAL, GLOBAL_BASE, memmap.global_size),
        ):
            low = ceil_log2(size)
            if size == 1 << low and base % size == 0:
                inside = addr[low:] == base >> low
            else:
                inside = (addr - base)[:ADDR_BITS] < size
            choice = Mux(inside, value.value, choice)
        m.d.comb += window.eq(choice)
        return window

    def _physical(
        self, m: Module, name: str, i: int, addr: Value, window: Value, warp: Value
    ) -> Signal:
        """The data-port address of position ``i``'s ``addr``: local memory at
        ``golden.sm.lsu.local_physical`` (byte, position, word, warp slot), else ``addr``."""
        local = Cat(
            addr[:WORD_SHIFT], Const(i, ceil_log2(self.warp_size)),
            addr[WORD_SHIFT : ceil_log2(self.memmap.local_size)], warp,
        )  # fmt: skip
        physical = Signal(ADDR_BITS, name=name)
        m.d.comb += physical.eq(Mux(window == Window.LOCAL, local, addr))
        return physical

    def _thread(self, m: Module, s: _State, i: int, entry: data.View) -> _Thread:
        """Per-position values: the physical address (local memory at
        ``golden.sm.lsu.local_physical``: byte, position, word, warp slot), its word in the
        line, the shared bank and row, the bytes written and the data in their lanes."""
        line_shift = ceil_log2(self.line_bytes)
        a, d, size = entry.addr, entry.data, s.instr.size
        byte = a[:WORD_SHIFT]
        physical = self._physical(m, f"physical{i}", i, a, entry.window, s.instr.warp)
        byte_en = Signal(WORD_BYTES, name=f"byte_en{i}")
        spread = Signal(WORD_BITS, name=f"spread{i}")
        reserved = Signal(RESERVED_WORD, name=f"reserved_word{i}")
        shared_word = a[WORD_SHIFT : ceil_log2(self.memmap.shared_size)]
        shared = entry.window == Window.SHARED
        m.d.comb += [
            reserved.shared.eq(shared),
            reserved.word.eq(Mux(shared, Cat(shared_word, s.instr.block), physical[WORD_SHIFT:])),
            byte_en.eq(Mux(size == 0, 1 << byte, Mux(size == 1, 0b11 << byte, 0b1111))),
            spread.eq(Mux(size == 0, d[:8].replicate(4), Mux(size == 1, d[:16].replicate(2), d))),
        ]
        return _Thread(
            entry=entry,
            physical=physical,
            line_key=physical[line_shift:],
            word_in_line=physical[WORD_SHIFT:line_shift],
            bank=shared_word[: self.bank_bits],
            row=shared_word[self.bank_bits :],
            byte_en=byte_en,
            spread=spread,
            reserved=reserved,
        )

    @staticmethod
    def _merge(m: Module, name: str, sel: Value, threads: list[_Thread]) -> tuple[Signal, Signal]:
        """(word, byte enables) the threads of ``sel`` write into one word: each byte from the
        highest thread writing it (``golden.memory.Bank.write``)."""
        word = Signal(WORD_BITS, name=f"{name}_wdata")
        enables = Signal(WORD_BYTES, name=f"{name}_be")
        for j in range(WORD_BYTES):
            # a thread's byte wins when no thread above it writes the byte; the winners'
            # bytes ORed (at most one is not 0): fewer LUT4s than a chain of multiplexers
            writes = [sel[i] & t.byte_en[j] for i, t in enumerate(threads)]
            byte: Value = Const(0, 8)
            for i, t in enumerate(threads):
                above = Cat(*writes[i + 1 :]).any() if i + 1 < len(threads) else Const(0)
                byte = byte | Mux(writes[i] & ~above, t.spread.word_select(j, 8), 0)
            m.d.comb += [
                word.word_select(j, 8).eq(byte),
                enables[j].eq(Cat(*writes).any()),
            ]
        return word, enables

    # -- the data port ----------------------------------------------------------------------

    def _stall(self, m: Module, s: _State) -> None:
        """``stall``: a due response is absent, or the request is not accepted. A response
        that arrives in a stalled cycle is held (always clocked) until the LSU advances."""
        port = self.mem
        held = Signal(name="held")
        held_line = Signal(8 * self.line_bytes, name="held_line")
        waiting = Signal(name="waiting")
        m.d.comb += [
            waiting.eq(s.due & ~held & ~port.resp_valid),
            s.line.eq(Mux(held, held_line, port.resp_rdata)),
            port.req_valid.eq(s.line_cycle & ~waiting),
            self.stall.eq(waiting | (port.req_valid & ~port.req_ready)),
            s.adv.eq(~self.stall),
        ]
        m.d.sync += [
            held.eq(self.stall & (held | (s.due & port.resp_valid))),
            self.counters.stalls.eq(self.counters.stalls + self.stall),
        ]
        with m.If(s.due & port.resp_valid & ~held):
            m.d.sync += held_line.eq(port.resp_rdata)

    def _line_writers(self, m: Module, s: _State, threads: list[_Thread]) -> list[Signal]:
        """The line transaction of a global/local LSU cycle (seed 000 Sec 4.2): the tree's
        lowest line and its threads (``line_served``); an AMO or ``sc.w`` serves the lowest
        thread of each word (``sc.w`` writes the words of the served threads whose reservation
        holds, as a store; ``lr.w`` is a load). Returns, per word of the line, the threads
        whose bytes the request writes into it."""
        w = self.warp_size
        stores = s.store | s.rmw
        writers = []
        firsts: Value = Const(0, w)
        for k in range(self.line_bytes // WORD_BYTES):
            member = Signal(w, name=f"line_word{k}")
            m.d.comb += member.eq(s.on_line & Cat(t.word_in_line == k for t in threads))
            first = lowest(m, f"line_word{k}_first", member)
            firsts = firsts | first
            served = Mux(s.per_word, first, member)
            writer = Signal(w, name=f"line_word{k}_writer")
            m.d.comb += writer.eq(Mux(stores, served, Mux(s.sc, first & s.sc_ok, 0)))
            writers.append(writer)
        m.d.comb += s.line_served.eq(Mux(s.per_word, firsts, s.on_line))
        return writers

    def _line_request(self, m: Module, s: _State, merged: list[tuple[Signal, Signal]]) -> Signal:
        """The data port's request: the lowest line, the operation (``lr.w`` a load, ``sc.w``
        a store) and the merged words of :meth:`_line_writers`. Returns the words of the line
        the request writes."""
        port, instr = self.mem, s.instr
        written = Signal(len(merged), name="line_written")
        m.d.comb += [
            port.req_addr.eq(Cat(Const(0, ceil_log2(self.line_bytes)), s.min_key)),
            port.req_op.eq(Mux(s.lr, MemOp.LOAD, Mux(s.sc, MemOp.STORE, instr.op))),
            port.req_amo.eq(instr.amo),
            port.req_be.eq(Cat(be for _, be in merged)),
            port.req_wdata.eq(Cat(word for word, _ in merged)),
            written.eq(Cat(be.any() for _, be in merged)),
        ]
        return written

    def _bank_request(self, m: Module, s: _State, threads: list[_Thread], k: int) -> _Bank:
        """What shared bank ``k`` serves in a shared LSU cycle: the word of its lowest pending
        thread (all pending threads on it; an AMO or ``sc.w`` that thread only)."""
        w, instr = self.warp_size, s.instr
        member = Signal(w, name=f"bank{k}_pending")
        m.d.comb += member.eq(s.pend_shared & Cat(t.bank == k for t in threads))
        first = lowest(m, f"bank{k}_first", member)
        picked: Value = Const(0, self.row_bits)
        for i, t in enumerate(threads):
            picked = picked | Mux(first[i], t.row, 0)
        bank = _Bank(
            member=member,
            row=Signal(self.row_bits + self.params.warp_bits, name=f"bank{k}_row"),
            served=Signal(w, name=f"bank{k}_served"),
            writer=Signal(w, name=f"bank{k}_writer"),  # whose data (or AMO operand) is written
        )
        same = member & Cat(t.row == picked for t in threads)
        m.d.comb += [
            bank.row.eq(Cat(picked, instr.block)),
            bank.served.eq(Mux(s.per_word, first, same)),
            bank.writer.eq(Mux(s.store | s.rmw, bank.served, Mux(s.sc, first & s.sc_ok, 0))),
        ]
        return bank

    def _merges(
        self, m: Module, s: _State, threads: list[_Thread], line: list[Signal], banks: list[_Bank]
    ) -> list[tuple[Signal, Signal]]:
        """The threads' bytes merged into words: a line cycle merges the line's words, a shared
        cycle the banks' (the two never share a cycle), so merge k serves line word k and bank
        k. Returns (word, byte enables) per merge."""
        merged = []
        for k in range(max(len(line), len(banks))):
            sel = Signal(self.warp_size, name=f"merge{k}_threads")
            from_line = line[k] if k < len(line) else 0
            from_bank = banks[k].writer if k < len(banks) else 0
            m.d.comb += sel.eq(Mux(s.shared_cycle, from_bank, from_line))
            merged.append(self._merge(m, f"merge{k}", sel, threads))
        return merged

    def _shared_banks(
        self, m: Module, s: _State, banks: list[_Bank], merged: list[tuple[Signal, Signal]]
    ) -> tuple[list[Value], list[tuple[Signal, Signal]]]:
        """The shared banks (synchronous block RAM): in a shared LSU cycle each reads the row
        of :meth:`_bank_request` and writes its merged word (an AMO's write follows in the next
        cycle, a successful ``sc.w`` writes at once). Returns each bank's read data (of the
        previous cycle's read), and per bank whether this cycle writes its word, with the row
        it writes."""
        instr = s.instr
        self.bank_memories = []
        read_words, written = [], []
        served: Value = Const(0, self.warp_size)
        for k, request in enumerate(banks):
            served = served | request.served
            word, enables = merged[k]
            row = request.row
            writes = Signal(name=f"bank{k}_writes")
            m.d.comb += writes.eq(s.shared_cycle & request.writer.any())
            written.append((writes, row))
            # an AMO's read-modify-write: read in this cycle, write in the next
            rmw = Signal(name=f"bank{k}_rmw")
            rmw_row = Signal.like(row, name=f"bank{k}_rmw_row")
            rmw_operand = Signal(WORD_BITS, name=f"bank{k}_rmw_operand")
            with m.If(s.adv):
                m.d.sync += [
                    rmw.eq(s.shared_cycle & s.rmw & request.member.any()),
                    rmw_row.eq(row),
                    rmw_operand.eq(word),
                ]
            bank = memory.Memory(
                shape=WORD_BITS, depth=self.params.geometry.warps << self.row_bits, init=[]
            )
            m.submodules[f"bank{k}"] = bank
            self.bank_memories.append(bank)
            wp = bank.write_port(granularity=8)
            rp = bank.read_port(transparent_for=(wp,))
            amo_new = Signal(WORD_BITS, name=f"bank{k}_amo_new")
            write = Signal(name=f"bank{k}_write")
            m.d.comb += [
                amo_new.eq(amo_word(instr.amo, rp.data, rmw_operand)),
                write.eq(s.adv & (rmw | (s.shared_cycle & ~s.rmw & request.writer.any()))),
                rp.addr.eq(row),
                rp.en.eq(s.adv),
                wp.addr.eq(Mux(rmw, rmw_row, row)),
                wp.data.eq(Mux(rmw, amo_new, word)),
                wp.en.eq(Mux(rmw, 0b1111, enables) & write.replicate(WORD_BYTES)),
            ]
            read_words.append(rp.data)
        m.d.comb += s.shared_now.eq(served)
        return read_words, written

    # -- results, faults, state -------------------------------------------------------------

    def _results(
        self, m: Module, s: _State, threads: list[_Thread], bank_words: list[Value]
    ) -> None:
        """``wb``: the due line response, else last cycle's shared reads, per position
        extracted and extended; for ``sc.w`` its result, 0 or 1 (``data`` is meaningful where
        ``en`` is set only). A line response and shared reads are never due in one cycle, so
        the line's word k and bank k's read are chosen once (``result_source<k>``) and each
        position picks among those by its word in the line or its bank."""
        instr, wb = s.instr, self.wb
        writes = Signal(name="writes_rd")
        m.d.comb += [
            writes.eq(s.adv & ~s.store & (instr.rd != 0)),
            wb.en.eq(
                Mux(writes, Mux(s.due, s.due_served, 0) | Mux(s.shared_due, s.shared_served, 0), 0)
            ),
            wb.warp.eq(instr.warp),
            wb.rd.eq(instr.rd),
        ]
        line_words = [s.line.word_select(k, WORD_BITS) for k in range(len(s.line) // WORD_BITS)]
        sources = []
        for k in range(max(len(line_words), len(bank_words))):
            source = Signal(WORD_BITS, name=f"result_source{k}")
            from_line = line_words[k] if k < len(line_words) else 0
            from_bank = bank_words[k] if k < len(bank_words) else 0
            m.d.comb += source.eq(Mux(s.due, from_line, from_bank))
            sources.append(source)
        for i, t in enumerate(threads):
            word = Signal(WORD_BITS, name=f"result{i}_word")
            loaded = extend(word, t.entry.addr[:WORD_SHIFT], instr.size, instr.signed)
            m.d.comb += [
                word.eq(mux_tree(sources, Mux(s.due, t.word_in_line, t.bank))),
                wb.data[i].eq(Mux(s.sc, s.sc_fail[i], loaded)),
            ]

    def _start(
        self, m: Module, s: _State, entries: list[Signal]
    ) -> tuple[list[Signal], list[Signal], Signal]:
        """The windows of the buffer merged with this cycle's capture, and the fault check of
        ``start`` over them (``WarpMemory._route``: misaligned before unmapped, the lowest
        offending position). Returns (addresses, windows, a fault)."""
        w, cap, start = self.warp_size, self.capture, self.start
        addrs, windows = [], []
        for i, entry in enumerate(entries):
            now = cap.valid & cap.mask[i]
            addr = Signal(ADDR_BITS, name=f"start_addr{i}")
            window = Signal(Window, name=f"start_window{i}")
            captured = self._window(m, f"capture_window{i}", cap.addr[i])
            m.d.comb += [
                addr.eq(Mux(now, cap.addr[i], entry.addr)),
                window.eq(Mux(now, captured, entry.window)),
            ]
            addrs.append(addr)
            windows.append(window)
        misaligned = Signal(w, name="misaligned")
        unmapped = Signal(w, name="unmapped")
        size = start.size
        m.d.comb += [
            misaligned.eq(
                start.mask & Cat((a[0] & (size != 0)) | (a[1] & (size == 2)) for a in addrs)
            ),
            unmapped.eq(start.mask & Cat(win == Window.NONE for win in windows)),
        ]
        m.d.comb += [
            s.start_line.eq(Cat((win == Window.GLOBAL) | (win == Window.LOCAL) for win in windows)),
            s.start_shared.eq(Cat(win == Window.SHARED for win in windows)),
        ]
        offending = lowest(m, "offending", Mux(misaligned.any(), misaligned, unmapped))
        bad = Signal(name="bad")
        position: Value = Const(0, bits_for(w))
        fault_addr: Value = Const(0, ADDR_BITS)
        for i, addr in enumerate(addrs):
            position = position | Mux(offending[i], i, 0)
            fault_addr = fault_addr | Mux(offending[i], addr, 0)
        code: Value = Const(FaultCode.NONE, 4)
        for op, (mis, unm) in _FAULTS.items():
            code = Mux(start.op == op, Mux(misaligned.any(), mis, unm), code)
        m.d.comb += [
            bad.eq(start.valid & (misaligned | unmapped).any()),
            self.fault.valid.eq(bad & s.adv),
            self.fault.code.eq(code),
            self.fault.position.eq(position),
            self.fault.addr.eq(fault_addr),
        ]
        return addrs, windows, bad

    def _lowest_line(
        self,
        m: Module,
        s: _State,
        threads: list[_Thread],
        addrs: list[Signal],
        windows: list[Signal],
        bad: Signal,
    ) -> None:
        """``on_line``, the pending global/local positions on the lowest pending line, and
        ``min_key``, that line (seed 000 Sec 4.2: one transaction per LSU cycle, lowest line
        first), both from registers: the loop that serves the lines has no comparator in it
        (under stack-less the control's arbiter tree finds them instead, :meth:`_tree_line`).
        At ``start`` the LSU compares every two positions' lines (of the buffer merged with
        that cycle's capture) and keeps, per ordered pair, whether the first one's line is
        lower; in each LSU cycle a pending position is on the lowest line when no pending
        position's line is lower, two gate levels from the registers."""
        w, line_shift, start = self.warp_size, ceil_log2(self.line_bytes), self.start
        keys = [
            self._physical(m, f"start_physical{i}", i, addr, windows[i], start.warp)[line_shift:]
            for i, addr in enumerate(addrs)
        ]
        m.d.comb += s.line_ready.eq(1)
        # lower[j, i]: position j's line is below position i's (registered at start)
        lower = {
            (j, i): Signal(name=f"line{j}_below{i}") for j in range(w) for i in range(w) if j != i
        }
        with m.If(s.adv & start.valid & ~bad):
            for i in range(w):
                for j in range(i + 1, w):
                    below, same = keys[i] < keys[j], keys[i] == keys[j]
                    m.d.sync += [lower[i, j].eq(below), lower[j, i].eq(~below & ~same)]
        for i in range(w):
            beneath = Cat(s.pend_line[j] & lower[j, i] for j in range(w) if j != i)
            m.d.comb += s.on_line[i].eq(s.pend_line[i] & ~beneath.any())
        # every position on the line has its key: an OR of them, no selection
        key: Value = Const(0, self.key_width)
        for i, t in enumerate(threads):
            key = key | Mux(s.on_line[i], t.line_key, 0)
        m.d.comb += s.min_key.eq(key)

    def _tree_line(self, m: Module, s: _State, threads: list[_Thread]) -> None:
        """Stack-less (seed 000 Sec 4.3): the control's arbiter tree orders the lines one cycle
        ahead. In every cycle without stall but that of ``start`` the tree takes the positions
        still pending after this cycle (``next_line``) with their line keys from the address
        buffer; where it is ``granted`` its result (the lowest line and the positions on it) is
        registered and ``line_ready`` is set, else cleared: a cycle in which the control
        arbitrates on the tree, and the cycle after ``start``, are followed by one without an
        LSU cycle (timing rule 3, ``golden.sm.core``). The tree's keys thus always come from
        registers: at ``start`` they would come from the capture's addresses through their
        windows, and that path through the tree's comparators was the SM's longest."""
        tree, start = self.tree, self.start
        on_line = Signal(self.warp_size, name="tree_on_line")
        min_key = Signal(self.key_width, name="tree_min_key")
        m.d.comb += tree.valid.eq(Mux(start.valid, 0, s.next_line))
        m.d.comb += [tree.key[i].eq(t.line_key) for i, t in enumerate(threads)]
        with m.If(s.adv):
            m.d.sync += [
                s.line_ready.eq(tree.granted & ~start.valid),
                on_line.eq(tree.mask),
                min_key.eq(tree.min_key),
            ]
        m.d.comb += [s.on_line.eq(on_line & s.pend_line), s.min_key.eq(min_key)]

    def _advance(
        self, m: Module, s: _State, entries: list[Signal], windows: list[Signal], bad: Signal
    ) -> None:
        """Next state (cycles without stall only), ``release`` at the last LSU cycle, the
        counters (golden's metrics: transactions, shared cycles, bank conflicts)."""
        w, cap, start, counters = self.warp_size, self.capture, self.start, self.counters
        next_line = s.next_line
        next_shared = Signal(w, name="next_pend_shared")
        last = Signal(name="last")
        m.d.comb += [
            next_line.eq(s.pend_line & ~Mux(s.line_cycle, s.line_served, 0)),
            next_shared.eq(s.pend_shared & ~Mux(s.shared_cycle, s.shared_now, 0)),
            last.eq(s.lsu_cycle & ~next_line.any() & ~next_shared.any()),
            self.release.valid.eq(last & s.adv),
            self.release.warp.eq(s.instr.warp),
            self.release.rd.eq(s.instr.rd),
            self.release.mask.eq(s.instr.mask),
            self.release.global_.eq(s.made_line | s.line_cycle),
        ]
        m.d.comb += s.served.eq(
            Mux(s.line_cycle, s.line_served, 0) | Mux(s.shared_cycle, s.shared_now, 0)
        )
        with m.If(s.adv):
            m.d.sync += [
                s.sc_fail.eq(~s.sc_ok),
                s.due.eq(self.mem.req_valid),
                s.due_served.eq(s.line_served),
                s.shared_due.eq(s.shared_cycle & ~s.store),
                s.shared_served.eq(s.shared_now),
                counters.transactions.eq(counters.transactions + self.mem.req_valid),
                counters.shared_cycles.eq(counters.shared_cycles + s.shared_cycle),
                counters.bank_conflicts.eq(
                    counters.bank_conflicts + (s.shared_cycle & s.shared_begun)
                ),
            ]
            for i, entry in enumerate(entries):
                with m.If(cap.valid & cap.mask[i]):
                    m.d.sync += [
                        entry.addr.eq(cap.addr[i]),
                        entry.data.eq(cap.data[i]),
                        entry.window.eq(windows[i]),
                    ]
            with m.If(s.lsu_cycle):
                m.d.sync += [
                    s.pend_line.eq(next_line),
                    s.pend_shared.eq(next_shared),
                    s.made_line.eq(s.made_line | s.line_cycle),
                    s.shared_begun.eq(s.shared_begun | s.shared_cycle),
                ]
                with m.If(last):
                    m.d.sync += s.active.eq(0)
            with m.If(start.valid & ~bad):
                amo = start.op == MemOp.AMO
                m.d.sync += [
                    s.active.eq(1),
                    s.pend_line.eq(start.mask & s.start_line),
                    s.pend_shared.eq(start.mask & s.start_shared),
                    s.made_line.eq(0),
                    s.shared_begun.eq(0),
                    s.store.eq(start.op == MemOp.STORE),
                    s.lr.eq(amo & (start.amo == LR_FUNCT5)),
                    s.sc.eq(amo & (start.amo == SC_FUNCT5)),
                    s.rmw.eq(amo & (start.amo != LR_FUNCT5) & (start.amo != SC_FUNCT5)),
                    s.per_word.eq(amo & (start.amo != LR_FUNCT5)),
                    *(
                        getattr(s.instr, name).eq(getattr(start, name))
                        for name, _ in s.instr.shape()
                    ),
                ]

    # -- LR/SC reservations -----------------------------------------------------------------

    def _reservation_check(self, m: Module, s: _State, threads: list[_Thread]) -> None:
        """``sc_ok``: the positions of the instruction's warp whose reservation is on their
        word."""
        for i, t in enumerate(threads):
            held: Value = Const(0)
            for v, slot in enumerate(self.reservations):
                entry = slot[i]
                held = held | ((s.instr.warp == v) & entry.valid & (entry.at == t.reserved))
            m.d.comb += s.sc_ok[i].eq(held)

    def _reservation_update(
        self,
        m: Module,
        s: _State,
        threads: list[_Thread],
        line_written: Signal,
        bank_written: list[tuple[Signal, Signal]],
    ) -> None:
        """The table's next state (cycles without stall): the written words' entries end, a
        served ``lr.w`` sets its thread's, a served ``sc.w`` ends its thread's, and
        ``clear`` ends a slot's once the LSU is not busy with that slot."""
        line_shift = ceil_log2(self.line_bytes) - WORD_SHIFT
        clear_pending = Signal(len(self.reservations), name="clear_pending")
        clearing = Signal(len(self.reservations), name="clearing")
        m.d.comb += clearing.eq(
            (clear_pending | self.clear)
            & ~Mux(s.active, 1 << s.instr.warp, 0)[: len(self.reservations)]
        )
        with m.If(s.adv):
            m.d.sync += clear_pending.eq((clear_pending | self.clear) & ~clearing)
        for v, slot in enumerate(self.reservations):
            ours = s.lsu_cycle & (s.instr.warp == v)
            for i, entry in enumerate(slot):
                at = entry.at
                on_line = (
                    s.line_cycle
                    & ~at.shared
                    & (at.word[line_shift:] == s.min_key)
                    & line_written.bit_select(at.word[:line_shift], 1)
                )  # fmt: skip
                bank = at.word[: self.bank_bits]
                row = at.word[self.bank_bits : self.bank_bits + len(bank_written[0][1])]
                in_bank = (
                    at.shared
                    & mux_tree([writes for writes, _ in bank_written], bank)
                    & (row == mux_tree([written for _, written in bank_written], bank))
                )  # fmt: skip
                broken = Signal(name=f"reserved_w{v}_t{i}_broken")
                m.d.comb += broken.eq(on_line | in_bank)
                with m.If(s.adv):
                    with m.If(clearing[v]):
                        m.d.sync += entry.valid.eq(0)
                    with m.Elif(ours & s.served[i] & s.lr):
                        m.d.sync += [entry.valid.eq(1), entry.at.eq(threads[i].reserved)]
                    with m.Elif((ours & s.served[i] & s.sc) | broken):
                        m.d.sync += entry.valid.eq(0)
