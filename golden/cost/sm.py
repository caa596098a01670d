"""The model's inventory of the whole SM (``hdl/sm/top.py``: ``SM``), by stage, with parts named
after the submodules as Amaranth names them (docs/sm-hardware.md, "Stages, one file each"):
``fetch``, ``decode``, ``regfile``, ``lane``, ``divider``, ``scoreboard``, ``unit``,
``squeezer``, ``writeback``, ``scheduler``, ``lsu`` and ``core`` (the top's own
logic). Blocks come from :func:`reconverge.golden.cost.blocks.inventory` with the parameters the
SM derives from its :class:`~reconverge.golden.geometry.Geometry`; the ISA-fixed logic (decoder,
lane, divider) is counted from ``golden.isa.SPECS`` and ``XLEN``."""

from __future__ import annotations

import functools

from reconverge.golden.blocks import (
    ArbiterParams,
    MaskedScoreboardParams,
    ScoreboardParams,
    SqueezerParams,
)
from reconverge.golden.blocks.scoreboard import OPERANDS
from reconverge.golden.blocks.units import BUFFER_ENTRIES, PAIRWISE_GROUPING, sm_lookups, sm_unit
from reconverge.golden.config import WRITEBACK_LATENCIES, ScoreboardKind, division_cycles
from reconverge.golden.cost.blocks import inventory
from reconverge.golden.cost.datapath import pairwise_groups, popcount, two_lowest
from reconverge.golden.cost.inventory import Inventory, Kind, decode, log2, reduce, select
from reconverge.golden.cost.scoreboard import seen_bits
from reconverge.golden.faults import FaultCode
from reconverge.golden.geometry import bits_for
from reconverge.golden.isa import IMM_FORMATS, NUM_REGS, SPECS, XLEN, Csr, Fmt
from reconverge.golden.memmap import GLOBAL_BASE, SHARED_BASE
from reconverge.golden.params import (
    AGE_BITS,
    ARG_REGS,
    COUNTER,
    PC_WIDTH,
    PENDING_BITS,
    REGFILE_WRITE_PORTS,
    SP_WIDTH,
    TIMER_BITS,
    SMParams,
)
from reconverge.golden.policies import Policy
from reconverge.golden.sm import decode as golden_decode
from reconverge.golden.sm.core import RETURN_REGS
from reconverge.golden.sm.lsu import AMO_RESULTS, WORD_BYTES, shares_tree
from reconverge.hdl.sm.lanes import ALU_CONTROL_OPS, ALU_CONTROLS, MUL_HIGH, PARTIALS, RESULTS

#: Submodules that this model counts in another part: the core's bookkeeping
#: (``hdl/sm/barrier.py``) in the core's own logic, each lane's multiplier (a stage ahead of
#: the lane, ``hdl/sm/lanes.py``) in its lane.
PART_OF = {"barriers": "core", "multiplier": "lane"}


def stage(submodule: str) -> str:
    """The part of this model that an SM submodule (as Amaranth names it, below the SM) is:
    ``core.lane1`` -> ``lane``, ``core.decode`` -> ``decode``, ``lsu`` -> ``lsu``,
    ``core.barriers`` -> ``core``, ``core.multiplier0`` -> ``lane`` (:data:`PART_OF`)."""
    part = submodule.rsplit(".", 1)[-1].rstrip("0123456789")
    return PART_OF.get(part, part)


#: Register-number bits.
REG_BITS = log2(NUM_REGS)
#: Write ports of the register file (lanes, divider, LSU) and its read ports (rs1, rs2).
WRITE_PORTS = len(REGFILE_WRITE_PORTS)
READ_PORTS = 2
#: Latency classes: one write-back line each.
CLASSES = WRITEBACK_LATENCIES


@functools.cache
def _field_width(name: str) -> int:
    """Bits of the decoded field ``name`` (``hdl/sm/decode.py``: ``DECODED``)."""
    wide = {
        "op": bits_for(len(SPECS)),
        "unit": bits_for(len(golden_decode.Unit)),
        "imm": XLEN,
        "csr": 12,
        "mem_size": max(golden_decode.spec_fields(s)["mem_size"] for s in SPECS).bit_length(),
        "amo": max(golden_decode.spec_fields(s)["amo"] for s in SPECS).bit_length(),
    }
    if name in ("rd", "rs1", "rs2", "sb_rs1", "sb_rs2", "sb_rd"):
        return REG_BITS
    return wide.get(name, 1)


#: Bits of a decoded instruction.
DECODED_BITS = sum(_field_width(n) for n in golden_decode.FIELDS)


@functools.cache
def decoder() -> Inventory:
    """The decoder's inventory (docs/sm-hardware.md, "Stages": decode), computed once: it
    depends on the ISA alone, and callers include it, never change it. One match per spec over
    its fixed bits, an AND of each bit or its complement (an equality with a constant needs
    no XNOR); each constant field an OR over the specs with a non-zero value (``Mux(hit,
    value, 0)`` of a constant is the hit or nothing, per bit); the immediate an OR of one
    sign-extended copy per format; register fields gated by their presence; the
    return-register (a decoder of rs1) and x0 tests."""
    inv = Inventory()
    matches = sum(reduce(s.mask.bit_count()) for s in SPECS)
    inv.add("match", gate=matches + reduce(len(SPECS)))
    constants = [golden_decode.spec_fields(s) for s in SPECS]
    for name in constants[0]:
        w = _field_width(name)
        terms = sum(1 for c in constants if int(c[name]))
        inv.add("fields", gate=reduce(terms) * w)
    flags = (
        [lambda s: s.writes_rd, lambda s: s.is_jump]
        + [lambda s, f=f: s.fmt is f for f in IMM_FORMATS]
        + [lambda s: s.fmt in (Fmt.CSR, Fmt.CSRI)] * 2
    )
    inv.add("fields", gate=sum(reduce(sum(1 for s in SPECS if f(s))) for f in flags))
    inv.add("imm", mux=len(IMM_FORMATS) * XLEN, gate=reduce(len(IMM_FORMATS)) * XLEN)
    inv.add("registers", mux=3 * REG_BITS + 12, gate=3 * REG_BITS + 2 * reduce(REG_BITS) + 6)
    inv.add("registers", gate=decode(REG_BITS, len(RETURN_REGS)))
    return inv


#: Bits of an instruction's predecoded fields (``golden.sm.decode.ISSUE_FIELDS``).
PREDECODED_BITS = sum(_field_width(n) if n.startswith("sb_") else 1
                      for n in golden_decode.ISSUE_FIELDS)  # fmt: skip


def predecoder() -> Inventory:
    """The predecoder at the instruction store's write port (``hdl/sm/decode.py``:
    ``Predecoder``): a decoder, the known-CSR check (the CSR number decoded), the issue-fault
    OR and the two latency-class tests."""
    inv = Inventory()
    inv.include(decoder(), prefix="decode")
    csrs = len(golden_decode.CSRS)
    inv.add("issue", gate=decode(12, csrs) + reduce(csrs) + 6 + 2 * decode(_field_width("unit"), 1))
    return inv


def lane() -> Inventory:
    """One lane (``hdl/sm/lanes.py``: ``Lane`` and its ``Multiplier``; ``golden/semantics.py``):
    a (XLEN+1)^2 signed multiplier in four partial products (the two mixed ones a sign bit
    wider) and their sum (the middle two, then one 2 XLEN-bit addition), the ALU (one adder
    for sums, differences and orders, one right shifter with the reversals of a left shift,
    logic), the branches' equality, adders for PC + 4, the PC-relative target and the address
    (``address``, in the read stage before the lane), the result (one of ``RESULTS``) and
    next-PC selection by operation."""
    inv, x = Inventory(), XLEN
    shamt = log2(x)
    inv.add("multiply", mul=(x + 1) ** 2 + 2 * MUL_HIGH, add=2 * MUL_HIGH + 1 + 2 * x + 1, gate=2)
    # the adder (34 bits with the subtraction's carry in, b inverted for it), the shifter on
    # 33 bits (the sign shifted in) between the reversals, and/or/xor
    inv.add("alu", add=x + 3, mux=(x + 1) * shamt + 2 * x, gate=4 * x + 4)
    inv.add("branch", eq=x, mux=6)
    inv.add("targets", add=3 * (x + 1), mux=2 * x)
    ops = sum(1 for s in SPECS if golden_decode.spec_fields(s)["unit"] != golden_decode.Unit.MEM)
    # the operation's index decoded into the lines of the ``ops`` non-memory operations; the
    # result among RESULTS values, the next PC among four
    inv.add("select", mux=(RESULTS + 4) * x, gate=30 + decode(bits_for(len(SPECS)), ops))
    return inv


def divider(steps: int, tag: int) -> Inventory:
    """The iterative restoring divider (``hdl/sm/lanes.py``: ``Divider``): ``steps`` steps of a
    subtraction (its borrow says whether the divisor fits) and a remainder selection per
    cycle, the operands' negations, the quotient or remainder and its sign, one negation; the
    state (remainder, dividend/quotient, divisor, tag, signs, iterations left) loaded by a
    request or advanced by the steps."""
    inv, x = Inventory(), XLEN
    dividend = division_cycles(steps) * steps
    left = bits_for(x + 1)
    state = 2 * x + dividend + tag + 3 + left
    kinds = decode(_field_width("op"), 3)  # div, rem, remu: signed, remainder
    inv.add("steps", add=steps * (x + 2), mux=steps * (x + 2))
    inv.add("signs", add=3 * (x + 1), mux=3 * (x + 1) + x + 1, gate=reduce(x) + 5 + kinds)
    inv.add("state", ff=state, mux=2 * state, add=left, gate=reduce(left) + decode(left, 1) + 3)
    return inv


def sm(params: SMParams) -> Inventory:
    """The inventory of the SM of ``params``, by stage."""
    p, g = params, params.geometry
    w, lanes, n, s = g.warp_size, g.simd_width, g.warps, sm_unit(p).slots
    inv = Inventory()
    candidates = n * s

    # fetch: the store (word, predecode bits), a read-port copy per split slot of every warp
    # slot: its output R registered with its tag (the word index and whether the PC is inside
    # the store), the tag before it and a valid bit; the two-entry buffer (A: the asked-for
    # PC's entry from A, B, R or the entry register, on a re-dispatch the entry register's; B:
    # the next PC's, from B or R, with the tag before it); A and B against the split's tag
    # (the view), and with R and the entry register against the asked-for tag; the tags of
    # the PCs around each asked-for one (the index plus or minus a step, its wrap and the
    # upper bits against the window's three values); the read address (the asked-for tag, the
    # next or the one after; on a re-dispatch the entry's or the next, shared) with the tag
    # before it; PC + 4; the entry register, loaded from slot 0's R; the RPCs in a memory of
    # their own (one read port: the decode stage's); the predecoder at the store's write
    # port; the decoder in the decode stage
    entry = XLEN + PREDECODED_BITS
    tag = p.imem_bits + 1
    buffer = tag + entry
    around = 3 * p.imem_bits  # the three steps' sums (and as many wrap compares)
    inv.add(
        "fetch",
        ram=candidates * p.imem_words * entry + p.imem_words * PC_WIDTH,
        ff=candidates * (2 * buffer + 3 * tag + 3) + buffer + 1,
        eq=(candidates * 8 + 2) * tag,
        add=candidates * PC_WIDTH + (candidates + 1) * 2 * around,
        mux=candidates * (5 * buffer + 11 * tag) + buffer,
        gate=(candidates + 1) * 3 * (PC_WIDTH - p.imem_bits - 2) + candidates * 24,
    )
    inv.include(predecoder(), prefix="fetch")
    inv.include(decoder(), prefix="decode")
    inv.include(_regfile(p), prefix="regfile")
    for _ in range(lanes):
        inv.include(lane(), prefix="lane")
    for _ in range(w):
        inv.include(divider(p.config.latencies.div_steps, p.warp_bits + REG_BITS), prefix="divider")
    inv.include(_block(p.config.scoreboard_kind, p), prefix="scoreboard")
    for _ in range(n):
        inv.include(unit(p), prefix="unit")
    if p.config.hws:
        inv.include(inventory(SqueezerParams.of(g)), prefix="squeezer")
    inv.include(_writeback(p), prefix="writeback")
    inv.include(_scheduler(p), prefix="scheduler")
    inv.include(_lsu(p), prefix="lsu")
    inv.include(_core(p), prefix="core")
    return inv


def _block(kind: ScoreboardKind, p: SMParams) -> Inventory:
    """The scoreboard the top instantiates: one lookup per instruction-buffer entry of every
    candidate, one release per class."""
    lookups, writebacks = sm_lookups(p), len(CLASSES)
    if kind is ScoreboardKind.MASKED:
        params = MaskedScoreboardParams.of(p.geometry, lookups, writebacks)
    else:
        params = ScoreboardParams.of(p.geometry, lookups, writebacks)
    inv = inventory(params)
    # the SM reads each lookup's ``hazard`` and ``full``, not its dependency mask: Yosys
    # removes the operands' decoders and the mask's ORs
    rb = params.reg_bits
    unread = OPERANDS * (params.regs + decode(rb, params.regs)) + reduce(OPERANDS) * params.regs
    inv.parts["lookup"][Kind.GATE] -= lookups * unread
    if lookups == 1:
        # a single lookup port's warp is assigned whole, a constant (0) that Amaranth passes
        # into the scoreboard: with one warp its set is the table's row itself, not a selection
        inv.parts["read"][Kind.MUX] -= params.entries * seen_bits(params)
    return inv


def unit(p: SMParams) -> Inventory:
    """One warp's divergence unit (docs/sm-hardware.md, "Target grouping"): the policy's block;
    for the stacks and tables also the grouping trees (the two lowest next PCs in one tree,
    the highest in another: seed 000 Fig 4b) and the sequence registers of an update spread
    over clocks."""
    w = p.geometry.warp_size
    block = sm_unit(p)
    inv = Inventory().include(inventory(block), prefix="block")
    if block.name == "split_tables":
        # the SM reads neither the tables' inspection outputs (Fig 7's tables, invalid entries
        # read 0) nor the occupancy counts: Yosys removes them, and without OREC also the ST's
        # block PCs, which only the search and those outputs read
        st, rt = block.split_table, block.reconv_table
        q = block.queue_size
        outputs = inv.parts["block/outputs"]
        outputs[Kind.MUX] -= st * (2 * PC_WIDTH + w) + rt * (PC_WIDTH + 2 * w)
        outputs[Kind.ADD] -= popcount(st) + popcount(rt) + (max(1, q.bit_length()) if q else 0)
        if not block.orec:
            inv.parts["block/st"][Kind.FF] -= st * PC_WIDTH
    inv.add("targets", gate=2 * w)
    if block.name == "stackless":
        # the resolve stage keeps the next PCs and SPs; a decided outcome's PC + 4 instead
        return inv.add("resolve", ff=w * (PC_WIDTH + SP_WIDTH), mux=w * PC_WIDTH)
    if w <= PAIRWISE_GROUPING:  # the lowest two and the highest from pairwise comparisons
        inv.include(pairwise_groups(w, PC_WIDTH), prefix="groups")
    else:  # the lowest two from their tree, the highest from an arbiter tree
        inv.include(two_lowest(w, PC_WIDTH), prefix="groups")
        inv.include(inventory(ArbiterParams(w, PC_WIDTH)), prefix="groups")
    # the stage register: three groups (PC, threads) and whether two take every thread
    inv.add("groups", eq=w, gate=4 * w, ff=3 * (PC_WIDTH + w) + 1)
    # the pending threads and their PCs, the selection between the outcome and them
    inv.add("sequence", ff=w * PC_WIDTH + w + 1, mux=w * PC_WIDTH + 2 * w + 1, gate=4)
    if block.name == "split_tables":
        inv.add("sequence", add=PC_WIDTH + 1, mux=PC_WIDTH + 2 * w + 2)
        inv.add("sequence", gate=block.slots + reduce(w) + 6)
    else:  # the later updates' RPC, call and slot (one bit: the dual-path's path)
        inv.add("sequence", ff=PC_WIDTH + 2, add=PC_WIDTH + 1)
        inv.add("sequence", mux=6 * PC_WIDTH + 2 * w + 5, gate=block.slots + 8)
    return inv


def _regfile(p: SMParams) -> Inventory:
    """docs/sm-hardware.md, "Register file": per thread position a live-value-table memory, one
    copy per (write port, read port) of slots x 32 words with a synchronous read port; per
    (slot, register) the live-value entry in flip-flops (0: unwritten, else the live port's
    copy); the write-row decoders, the port priority and the launch's clear, the live entry's
    lookup and the copy or initial value it selects."""
    g = p.geometry
    w, rows = g.warp_size, g.warps * NUM_REGS
    row_bits = REG_BITS + p.warp_bits
    live = bits_for(WRITE_PORTS)
    inv = Inventory()
    inv.add("banks", ram=w * WRITE_PORTS * READ_PORTS * rows * XLEN)
    # the row a port writes, one-hot: a shift of 1 by the row (rows + 2^bits - 1 wide); the
    # positions' rows it sets
    inv.add("decode", mux=WRITE_PORTS * (rows + (1 << row_bits) - 1) * row_bits)
    inv.add("decode", gate=WRITE_PORTS * w * rows)
    # each entry's next value: the ports in priority order, then a launch's clear
    # (and its flip-flops' enable: any of them)
    inv.add("live", ff=w * rows * live, mux=w * rows * (WRITE_PORTS + 1) * live)
    inv.add("live", gate=w * rows * live)
    # the lookup of a read row in its address cycle: its one-hot row (shared by the
    # positions), an AND-OR over the rows per position, then the entry's next value (the
    # write ports whose row it is, compared once per read port, and the launch's clear),
    # registered as the memories' synchronous read ports register their words; the
    # registers' initial values, found in the address cycle and registered; the copy or
    # initial value it selects
    inv.add("read", ff=READ_PORTS * (XLEN + w * live))
    inv.add("read", mux=READ_PORTS * (rows + (1 << row_bits) - 1) * row_bits)
    inv.add("read", gate=READ_PORTS * w * live * (2 * rows - 1))
    inv.add("read", eq=READ_PORTS * WRITE_PORTS * row_bits, mux=READ_PORTS * select(g.warps, 1))
    inv.add("read", mux=READ_PORTS * w * (WRITE_PORTS + 1) * live)
    inv.add("read", gate=READ_PORTS * w * WRITE_PORTS)
    inv.add("read", mux=READ_PORTS * w * select(WRITE_PORTS + 1, XLEN))
    # the initial values (``golden.functional.initial_registers``): a Switch over the
    # registers not initially 0 (sp, gp, a0..a7)
    sources = 2 + ARG_REGS
    inv.add(
        "initial", mux=READ_PORTS * sources * XLEN, gate=READ_PORTS * sources * reduce(REG_BITS)
    )
    # the priority of later ports to the same (slot, register), x0 dropped
    pairs = WRITE_PORTS * (WRITE_PORTS - 1) // 2
    inv.add(
        "ports",
        eq=2 * pairs * (p.warp_bits + REG_BITS),
        gate=WRITE_PORTS * (reduce(REG_BITS) + 2 * w) + pairs * w,
        mux=WRITE_PORTS * w,
    )
    return inv


def _writeback(p: SMParams) -> Inventory:
    """docs/sm-hardware.md, "Write-backs": one delay line per latency class, as long as its
    latency, of (valid, warp, rd, mask) entries; the class decode and the pending OR."""
    lat = p.config.latencies
    entry = 1 + p.warp_bits + REG_BITS + p.geometry.warp_size
    stages = sum(getattr(lat, c) for c in CLASSES)
    cls = bits_for(len(CLASSES))
    return Inventory().add(
        "lines",
        ff=stages * entry,
        # the class decoded (against constants)
        gate=decode(cls, len(CLASSES)) + len(CLASSES) + reduce(stages - len(CLASSES)),
    )


def _scheduler(p: SMParams) -> Inventory:
    """The scheduler (``hdl/sm/scheduler.py``): every two warps' keys (warp class and order)
    compared, and every two splits' of a warp (slot class and slot, the slot classes from the
    sid compares); the ready bits select: per warp whether one before it has a ready split,
    per split whether one of its warp before it is ready; the winner's encoding."""
    g = p.geometry
    n, s = g.warps, sm_unit(p).slots
    inv = Inventory()
    if n * s == 1:
        return inv
    gto = p.config.scheduler.name == "GTO"
    pairs = n * (n - 1) // 2
    # the warp keys: GTO the class (the last warp decoded) above the age, compared per pair;
    # LRR the class above the constant slot number (a compare of the two classes)
    if gto:
        inv.add(
            "keys", add=pairs * (AGE_BITS + 1), gate=n + (decode(p.warp_bits, n) if n > 1 else 0)
        )
    else:
        inv.add("keys", gate=3 * n + 3 * pairs)
    # per split of a warp with several: its slot class (a sid compare), and no split before
    # it ready (per other split a gate for the order of the two and one for its ready bit,
    # their OR); its grant; per warp: ready (an OR of its splits) and first (no warp before
    # it with a ready split); the valid (an OR of all); the winner's warp and slot numbers
    # (ORs of the one-hot grants)
    if s > 1:
        inv.add("keys", add=n * s * sm_unit(p).sid_bits, gate=n * s)
        inv.add("winner", gate=n * s * (2 * (s - 1) + reduce(s - 1) + 1) + n * reduce(s))
        inv.add("winner", gate=bits_for(s) * (n * s - 2) // 2)
    else:
        inv.add("winner", gate=n)
    inv.add(
        "winner",
        gate=n * (2 * (n - 1) - 1 if n > 1 else 0)
        + (reduce(n * s) if n > 1 else 0)  # (one warp: its ready OR is the valid)
        + (p.warp_bits * (n - 2) if n > 2 else 0),
    )
    return inv


def _lsu(p: SMParams) -> Inventory:
    """docs/sm-hardware.md, "LSU" (``hdl/sm/lsu.py``): the address buffer and every thread's
    window, bytes and word in the line; the line request with the threads' bytes merged; the
    shared-memory banks, each serving its lowest pending thread, with its read-modify-write
    (the AMOs of ``golden.memory.AMO_OPS``); the reservation table, whose entries every written
    word and bank checks; the results."""
    g, c, mm = p.geometry, p.config, p.memmap
    w, n, line = g.warp_size, g.warps, c.line_bytes
    x, wb, amos = XLEN, p.warp_bits, sum(1 for s in SPECS if s.amo_op)
    words, line_bits, word_bits = line // WORD_BYTES, 8 * line, log2(line // WORD_BYTES)
    shared_words = mm.shared_size // WORD_BYTES
    bank_bits = min(log2(c.shared_banks), log2(shared_words))
    banks, row = 1 << bank_bits, log2(shared_words) - bank_bits
    at = 1 + x - log2(WORD_BYTES)  # a reserved word: the shared flag and a word address
    funct5 = _field_width("amo")
    # merge k serves the line's word k in a line cycle and bank k in a shared cycle
    merges = max(words, banks)
    instr = 2 + 2 + 1 + funct5 + 2 * wb + REG_BITS + w  # op, size, signed, amo, warp, block
    inv = Inventory()
    inv.add("banks", ram=banks * (n << row) * x)
    # state: the counters, the instruction and its kind (store, lr.w, sc.w, read-modify-write,
    # one thread per word), the pending/served masks and flags, the address buffer (address,
    # data, window per thread), the held response
    inv.add("state", ff=4 * COUNTER + instr + 5 + 5 * w + 5 + w * (2 * x + 2) + 1 + line_bits)
    inv.add("state", mux=line_bits, gate=2 * w + 16, eq=2 * funct5 + 2, add=COUNTER + 1)
    # the bytes a thread's access enables: 1 and 3 shifted by its byte, selected by the size
    enables = 2 * WORD_BYTES * log2(WORD_BYTES) + 2 * WORD_BYTES
    # per thread: the windows of the captured address (a power-of-two window at a multiple
    # of its size: its high bits against a constant; else an offset and a bound), the window
    # tests, the physical (local) address, its reserved word, bytes enabled, store data spread,
    # the buffer's or the capture's address and window
    for base, size in ((GLOBAL_BASE, mm.global_size), (SHARED_BASE, mm.shared_size),
                       (mm.local_base, mm.local_size)):  # fmt: skip
        if size & (size - 1) == 0 and base % size == 0:
            inv.add("threads", gate=w * reduce(x - log2(size)))
        else:
            inv.add("threads", add=w * (2 * x + 1))
    inv.add(
        "threads",
        mux=w * (3 * 2 + x + (at - 1) + enables + 2 * x + x + 2),
        eq=w * 5 * 2,
        gate=w,
    )
    # the lowest set bit of each line word's, each bank's threads and of the faults
    lowest = words + banks + 1
    inv.add("threads", add=lowest * (w + 1), gate=lowest * w)
    # the line request: per word its threads (the word in the line against each k; k = 0 a
    # NOR), the lowest, the served and written threads; the written words (Yosys merges each
    # word's byte-enable ORs into one OR over its 4 w bits)
    inv.add(
        "coalesce",
        gate=w * decode(word_bits, words)
        + words * w
        + (words - 1) * w
        + words * w
        + words * reduce(4 * w),
        mux=3 * words * w + 2 * w,
    )
    # per merge: its threads (the line word's or the bank's writers); per byte the highest
    # writing thread's byte: each thread's select AND its byte enable, whether a thread above
    # it writes (an OR over those above: measured fewer LUT4s at W = 4 than a running OR or a
    # chain of multiplexers), the winner's byte kept by an AND, the bytes ORed; the enable the
    # OR of all
    above = (w - 1) * (w - 2) // 2
    inv.add(
        "merge", mux=merges * (w + WORD_BYTES * w * 8),
        gate=merges * WORD_BYTES * (w + above + 10 * (w - 1)),
    )  # fmt: skip
    # per bank: its threads (bank compares shared with the results'), the lowest one's row,
    # the threads on that row, the served, writers, read-modify-write registers, the AMOs
    # (compares of funct5 shared by the banks; funct5 = 0 a NOR), the write port
    inv.add(
        "banks",
        gate=banks * w + w * (bank_bits - 1) + banks * (w - 1) * row + banks * w,
        mux=banks * w * row + 3 * banks * w,
        eq=banks * w * row,
    )
    inv.add(
        "banks",
        gate=(banks - 1) * w + banks + banks * w + 1 + banks * (w + 2) + 1 + WORD_BYTES * banks,
        ff=banks * (1 + row + wb + x),
        mux=banks * (row + wb + x + WORD_BYTES),
    )
    # per bank the AMO's new word (``lsu.amo_word``): the sum, one comparison for the four
    # min/max (both sign bits inverted for the signed two: two XORs and an OR); the other
    # results a four-entry truth table per word (a chain over the distinct results' tables,
    # min/max's chosen by the comparison) looked up per bit by the old and the operand bit,
    # then the sum or the lookup; the funct5 compares
    results = len(set(AMO_RESULTS.values()))
    inv.add(
        "amo",
        add=banks * (x + 1) + banks * x,
        mux=banks * (4 * results + 2 * 4) + banks * x * (select(4, 1) + 1),
        gate=3 * banks + amos * reduce(funct5),
    )
    # results: per merge index k the line's word k or bank k's; per thread the word of its
    # index (its word in the line or its bank, a multiplexer tree), the byte and half
    # extraction, size and sign extension, sc.w's result
    inv.add(
        "results",
        mux=merges * x
        + w * (select(merges, x) + max(word_bits, bank_bits))
        + w * (select(WORD_BYTES, 8) + 16 + 2 * x + (x - 8) + (x - 16) + x),
        eq=2,
        gate=2 * w + 6,
    )
    # the fault check of a start, the next state and release
    faults = 3 * bits_for(len(FaultCode))  # a code per memory operation
    inv.add("control", gate=6 * w + 9 * w + 6, mux=w * (1 + bits_for(w)) + faults + 2 * w)
    inv.add("control", add=3 * (COUNTER + 1), eq=8)
    # the reservation table: per slot and position a valid bit and a word, checked against the
    # thread's word (sc.w), the line written, and the written row of the bank it names
    key, pairs = p.line_key_bits, w * (w - 1) // 2
    if shares_tree(p.policy):
        # the tree's line a cycle ahead (``LSU._tree_line``): the tree's inputs, the pending
        # positions (none in the start cycle) and their keys from the address buffer; its
        # result registered (line ready, positions, key)
        inv.add("order", ff=1 + w + key, gate=3 * w + 1)
    else:
        # the line order (``LSU._lowest_line``): at start each position's line (the local
        # address or the address), every two lines compared (below, same), a bit per ordered
        # pair; per position: no pending position below it; the lowest line as an OR of the
        # keys on it
        inv.add(
            "order",
            ff=2 * pairs,
            add=pairs * key,
            eq=pairs * key,
            mux=w * key,
            gate=2 * pairs + w * (2 * w - 1) + (2 * w - 1) * key + 2,
        )
    inv.add(
        "reservations",
        ff=n * w * (1 + at) + n,
        eq=n * w * (at + row + wb + p.line_key_bits),
        mux=n * w * (word_bits + select(banks, 1 + row + wb)) + n * wb,
        gate=n * w * (2 + 2 + 8) + (n - 1) * w + 3 * n,
    )
    return inv


def _core(p: SMParams) -> Inventory:
    """The top's own logic (``hdl/sm/top.py``: ``_Core``), in the order of its docstring:
    per-warp and per-split state, candidates, the issue selection and the instruction in flight,
    the lanes' operands and per-thread results, the outcome, settling, barriers, dispatch,
    fetch addresses, pending write-backs, faults and counters."""
    g = p.geometry
    w, lanes, n, s, q = g.warp_size, g.simd_width, g.warps, sm_unit(p).slots, g.passes
    sid, wb, qb = sm_unit(p).sid_bits, p.warp_bits, bits_for(q)
    cand, pos, csrs = n * s, bits_for(w), len(Csr)
    classes = len(CLASSES)
    inv = Inventory()
    # state (``_state``): running, done, faulted, the cycle; per warp slot: active, block,
    # window exited, threads, age, pending, last sid (and its valid bit), updating, from an
    # issue, barrier PC and mixed; with more than one warp slot also the warp in its block (an
    # 8-bit field) and the window (with one slot both are always 0: registers Yosys removes);
    # the last warp, issued; per split slot its timer and snapshot (valid, sid, PC); per warp
    # the issued instruction (valid, slot, sid, PC, control); the next block and age
    # (the ages only where the GTO scheduler compares them: more than one warp slot)
    age = AGE_BITS if p.config.scheduler.name == "GTO" and n > 1 else 0
    per_warp = 1 + 32 + 1 + w + age + PENDING_BITS + sid + 1 + 2 + PC_WIDTH + 1
    issued = 1 + bits_for(s) + sid + PC_WIDTH + 1
    inv.add("state", ff=3 + COUNTER + n * per_warp + (n * (8 + wb) if n > 1 else 0) + wb + 1)
    inv.add("state", ff=cand * (TIMER_BITS + 1 + sid + PC_WIDTH) + n * issued + 32 + age)
    # their next states: the snapshot taken at an issue or a barrier release, the issued
    # instruction, the timers
    inv.add("state", mux=2 * cand * (1 + sid + PC_WIDTH) + n * issued + cand * TIMER_BITS)
    inv.add("state", gate=n * 9)  # the units' status (settled, quiet, retired)
    # candidates: per buffer entry its scoreboard check (hazard or full, the LSU's and
    # divider's interlocks, the fault that overrides them) and the hit that takes it,
    # readiness (the CSR number decoded for the passes' CSR values)
    inv.add("candidates", gate=cand * BUFFER_ENTRIES * 9 + decode(12, csrs))
    # settling: per split, its (sid, PC) against every snapshot and the continuing split
    inv.add(
        "settle",
        eq=cand * (s * (sid + PC_WIDTH) + sid + PC_WIDTH + 1),
        add=cand * (TIMER_BITS + 1),
        mux=cand * 4 * TIMER_BITS,
        gate=cand * (3 * s + 15),
    )
    # issue: the selected buffer (its word and whether its PC is inside the store), split
    # (sid, mask, PC) and fault; the instruction in flight (warp, sid, PC, mask, word and
    # predecode bits, passes, cycle, PC + 4; the slot is unused and removed), the passes left
    # and the pass index, this pass's quarters, lanes and sources
    buffer = XLEN + 1 + PC_WIDTH
    # (the RPC, read in the decode stage, only where the policy consumes it: else a constant
    # the outcome passes)
    rpc = PC_WIDTH if p.config.explicit else 0
    cur = wb + sid + 2 * PC_WIDTH + w + XLEN + PREDECODED_BITS + bits_for(q + 1)
    cur += COUNTER + 3
    flight = cur + 2 * bits_for(q + 1) - bits_for(q + 1) + q * qb + w + w * qb + bits_for(q)
    # (multi-pass without hws: per warp slot whether the next cycle is the last pass of a
    # decided outcome, which the slot's unit takes, registered)
    final = n if q > 1 and not p.config.hws else 0
    # (the buffer, its split's sid and mask, PC + 4 from the fetch stage)
    inv.add("issue", mux=select(cand, buffer + sid + w + 1 + PC_WIDTH), ff=flight + final)
    inv.add("issue", mux=flight + n * (issued + sid), add=3 * bits_for(q + 1), gate=decode(wb, n))
    # passes, per lane: its position, its CSR value (a W-way selection), its operands (from
    # the W / L banks of its positions), the divider's tag; per thread position the CSR
    # value; the one-hot positions of the lanes and the dividers' results (ORs over the lanes)
    inv.add(
        "passes",
        mux=lanes * (select(w, XLEN) + 2 * select(q, XLEN) + select(w, qb) + select(q, qb) + w),
        add=lanes * 2 * pos,
        gate=2 * w * (lanes - 1) + w * lanes * 4,
    )
    # the CSR values per position (tid = warp in block * W + position: with one warp slot
    # the warp in its block is 0)
    inv.add("passes", mux=w * csrs * XLEN, add=w * (8 + pos) if n > 1 else 0)
    # per thread position, from the one lane that runs it (position mod L): the register
    # file's lane data, the LSU's address and data, the divider's operands (wires); the
    # buffers of this pass's values for the outcome, loaded when the lane runs the position:
    # the next PC and a, and the result only for the stack-less unit (its SP writes; the
    # other units take no SP); the values of this pass (``_lane_value``: a chain over the
    # lanes per buffered value)
    stackless = p.policy is Policy.STACKLESS
    values = 3 if stackless else 2
    # the LSU's results registered on their way to the register file (enables, warp, rd, words)
    inv.add("results", ff=w * XLEN + w + wb + REG_BITS)
    inv.add(
        "results",
        ff=w * values * XLEN,
        mux=2 * w * lanes * XLEN,
        # each lane's position and its divider's tag decoded; its syscall number checked
        gate=2 * lanes * decode(pos, w) + lanes * reduce(XLEN),
    )
    # the pipeline (``_pipeline``, ``_resolved_outcome``). The decode stage's instruction
    # fields are always those of the instruction in flight (both load the selection at an
    # issue and the decode stage copies it otherwise): synthesis merges them, leaving its
    # valid, first and last bits and this pass's quarter. The read stage's pass (as the
    # execute stage's, below, and its quarter, lanes and sources). The execute stage's pass
    # (valid, first, last; warp, sid, PC, mask, RPC, decoded instruction, passes, cycle, in
    # range, faulty, resolved), per lane its position (the low bits are the lane number: its
    # zero bits are constants), active bit, two operands and the address sum; the resolved
    # outcome (valid, the warp slot one-hot: with one slot the valid bit again, which
    # synthesis merges; sid, PC, PC + 4, mask, RPC, control, call, return, exited; the
    # stack-less unit takes only PC + 4 (and the PC's two low bits, which synthesis keeps
    # for PC + 4), mask, control, exited and the sp writes), twice: in the resolve stage and
    # the update; per warp its pending update, the LSU's reservation, halting. The RPC comes
    # from the instruction store's RPC memory into the execute stage: the read stage has none
    fields = 3 + wb + sid + PC_WIDTH + w + rpc + DECODED_BITS + bits_for(q + 1) + COUNTER + 3
    low = log2(lanes)
    positions = sum(pos - low + j.bit_count() for j in range(lanes))
    stages = 3 + qb + (fields - rpc + qb + w + w * qb) + fields + positions
    stages += lanes * (1 + 3 * XLEN + PARTIALS.size) + ALU_CONTROLS.size
    slots = n if n > 1 else 0
    if p.policy is Policy.STACKLESS:  # (its threads keep their own PCs: no sid, PC, calls)
        resolved = 1 + slots + PC_WIDTH + 2 + w + 1 + 2 * w
    else:
        resolved = 1 + slots + sid + 2 * PC_WIDTH + w + rpc + 3 + w
    inv.add("pipeline", ff=stages + 2 * resolved + n + 2)
    # the lanes' ALU controls decoded in the read stage: the operations each control names,
    # one decoder line per operation and an OR per control (the subtraction's with the
    # branch flag)
    lines = len(set().union(*ALU_CONTROL_OPS))
    inv.add(
        "pipeline",
        gate=decode(bits_for(len(SPECS)), lines) + sum(map(len, ALU_CONTROL_OPS)),
    )
    # the outcome to the warp's unit, faults' lowest threads (registered: bad target, bad
    # syscall), the LSU start, each warp's update PC and lane
    # (the update's PC and lane name an overflow, which the stack-less unit cannot have;
    # with it the LSU remembers whose tree it coalesces with)
    inv.add("outcome", ff=2 * w + (wb if stackless else n * (PC_WIDTH + log2(w))))
    inv.add("outcome", mux=n * (PC_WIDTH + log2(w) + s * (1 + sid + PC_WIDTH)) + 3 * w)
    inv.add(
        "outcome",
        eq=n * PC_WIDTH,
        gate=n * 6 + 4 * w + 10 + decode(wb, n) + reduce(REG_BITS),
    )
    # barriers: per block (window), its warps' membership, waits, exits and barrier PCs
    inv.add(
        "barriers",
        eq=n * n * PC_WIDTH,
        mux=n * n * PC_WIDTH,
        gate=n * n * (w + 12) + n * (w + 1) + n * decode(wb, n),  # windows decoded
    )
    # dispatch (``_dispatch``): at start, warps per block (saturated at N + 1) and the last
    # one's threads, registered; each cycle the drained pending counts, the blocks left and
    # how many fit (k * per_block <= free slots, a constant multiple of a few bits), the new
    # block count and base, per slot the threads of its new warp; with more than one warp
    # slot also the ranks of free slots and unused windows, which block a slot takes (nth:
    # compares of r with k * per_block), its warp in the block (r - nth * per_block), block
    # number and age. The launch's arithmetic and the blocks left are 32 bits wide; what
    # compares with the registered per_block (nth, the warp in the block) a few bits
    rank = bits_for(n + 1)
    pb = bits_for(n + 2)  # the registered warps per block, 0..N + 1
    inv.add(
        "dispatch",
        ff=pb + bits_for(w + 1),
        add=4 * (XLEN + 1)
        + 5
        + n * (PENDING_BITS + 1)
        + (XLEN + 1)
        + n * 2 * (XLEN + 1)
        + (XLEN + 1)
        + n * (XLEN + 1)
        + 2 * (XLEN + 1),
        mul=rank * pb,
        mux=n * (w + 2 * XLEN) + n * w * bits_for(w + 1),
        eq=n * (XLEN + 1),
        gate=n * (PENDING_BITS + 6),
    )
    if n > 1:
        multiples = sum(k.bit_length() for k in range(3, n) if k & (k - 1))
        inv.add(
            "dispatch",
            add=n * (n - 1) * (pb + rank)
            + 2 * n * (pb + rank)
            + (n - 1) * (AGE_BITS + 1)
            + 4 * n * rank,
            mul=(n * rank + multiples) * pb,
            eq=n * n * (wb + rank),
        )
    # the PC each buffer is asked for: the split's, or the snapshot's while the unit updates
    inv.add("fetch", mux=cand * PC_WIDTH)
    # pending write-backs per warp (the releases naming it, rd != 0), faults and counters:
    # the idle counter and its flag; the fault's code, its select bit (an overflowing unit or
    # the execute stage) and both places, each a PC, a block and a thread number (``_faults``:
    # the execute stage's warp's first thread and the lowest position, the unit's warp's
    # first thread plus its update's lane; with one warp slot its first thread is 0). The
    # stack-less control never overflows: the unit's place is not built
    places = 1 if stackless else 2
    threads = places * (9 + pos) if n > 1 else (pos + 1) * (places - 1)
    inv.add(
        "progress",
        ff=1 + COUNTER + bits_for(len(FaultCode)) + 1 + pos + places * (PC_WIDTH + 32) + threads,
    )
    # the pending counts (less released, a sum of the classes' release bits; that plus one,
    # picked by the issue), the cycle and idle counters; with more than one warp slot the
    # faults' thread numbers
    inv.add(
        "progress",
        add=n * (2 * PENDING_BITS + 3 + popcount(classes)) + 2 * (COUNTER + 1),
        mux=n * PENDING_BITS,
        gate=classes * decode(wb, n),  # each class's released warp decoded
    )
    # the drained flags, registered (``_drained_next``: the count less this cycle's releases
    # and the next cycle's from lines of latency >= 2, compared with 0, 1 and 2, one picked by
    # the issue and the entries of latency-1 lines), and the blocks left, loaded at the start
    inv.add("state", ff=n + XLEN)
    inv.add(
        "progress",
        add=n * 2 * (PENDING_BITS + 1),
        gate=n * (3 * PENDING_BITS + 2 * classes),
        mux=XLEN + 4 * n,
    )
    if n > 1:
        inv.add("progress", add=2 * (XLEN + 8 + pos))
    # the fault's sources pick its code and position (six of them); the places are selected
    # by warp slot (the execute stage's block and warp, the overflowing unit's PC, block,
    # warp and lane) and the status outputs by the select bit
    unit_place = places - 1
    inv.add(
        "progress",
        mux=6 * (bits_for(len(FaultCode)) + pos)
        + (n - 1) * (32 + 8 + unit_place * (PC_WIDTH + 32 + 8 + pos))
        + unit_place * (PC_WIDTH + 32 + 9 + pos),
    )
    inv.add("progress", gate=classes * reduce(REG_BITS) + n * classes * 2)
    inv.add("progress", gate=cand * TIMER_BITS + 4 * n + 10 + 40)
    inv.add("progress", gate=reduce(XLEN))  # the blocks left tested for 0 (``quiescent``)
    # the lowest thread of a mask (``_lowest``: a priority chain, its position encoded): the
    # faults' (issue, bad target, bad syscall) and the update's (one for every warp: the
    # mask is the instruction's), which names an overflow the stack-less unit cannot have
    lowest = 3 + (0 if stackless else 1)
    inv.add(
        "progress",
        gate=lowest * (max(0, 2 * w - 3) + (w - 1) * log2(w)),  # (W = 1: no chain)
        mux=lowest * w * log2(w) // 2,
    )
    return inv


def stage_luts(submodules: dict[str, dict[str, int]]) -> dict[str, int]:
    """ECP5 LUT4s of an SM synthesis (``hdl.tools.sm_design.synth_sm``'s submodules) by the
    area model's parts (:func:`stage`); ``core`` is the core's own logic."""
    out: dict[str, int] = {}
    for name, sub in submodules.items():
        if stage(name) != "core":
            out[stage(name)] = out.get(stage(name), 0) + sub["luts"]
    inner = sum(
        sub["luts"]
        for name, sub in submodules.items()
        if name.startswith("core.") and stage(name) != "core"
    )
    out["core"] = submodules["core"]["luts"] - inner
    return out
