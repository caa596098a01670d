"""The load/store unit (LSU) of one warp memory instruction: how many LSU cycles it takes
(:func:`access_cost`, what the golden SM charges) and, cycle by cycle, what the hardware LSU
(``reconverge.hdl.sm.lsu``) does in them (:func:`lsu_cycles`, its reference schedule).

Global and local accesses are coalesced by the unified arbiter tree of seed 000 (Sec 4.2,
4.3): each LSU cycle the tree selects the lowest line key among the threads still pending,
one line-wide transaction serves every thread on that line, and the others replay; so the
number of transactions is the number of distinct lines. An AMO (or ``sc.w``) transaction
serves at most one thread per word, the lowest pending one (docs/sm-hardware.md, timing rule
3), so a line costs as many transactions as the most AMO threads on one of its words. Local
(spill) memory is private per thread at the same addresses and lies word-interleaved across
the warp at the physical address of :func:`local_physical` (docs/sm-hardware.md, "Local
memory"), so that the threads of a warp reading one local word touch consecutive physical
words.

Shared memory has ``banks`` word-wide banks; every LSU cycle each bank serves one word (all
pending threads on it: a broadcast is free), so the shared part takes as many cycles as the
busiest bank has distinct words, the cycles beyond the first being bank conflicts; an AMO
serves one thread per bank and cycle, so it takes as many cycles as the busiest bank has AMO
threads. The shared cycles follow the line transactions.

Only under stack-less does the LSU share the arbiter tree with the divergence unit (seed 000
Sec 4.3, :func:`shares_tree`); the other policies' LSU serves the lines in the same order
(lowest first) from a line order it computes as the instruction starts.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from reconverge.golden.blocks.arbiter import reduce
from reconverge.golden.isa import SPEC_BY_NAME
from reconverge.golden.memmap import SHARED_BASE, MemoryMap, Region
from reconverge.golden.memory import AMO_OPS
from reconverge.golden.policies import Policy
from reconverge.golden.semantics import MemAccess

WORD_BYTES = 4

#: The access kinds (``MemAccess.kind``) that serve one thread per word and cycle, in
#: increasing position order: the AMOs and ``sc.w``, whose outcome depends on the ones before.
#: ``lr.w`` is served like a load.
PER_WORD = frozenset({"amo", "sc"})
#: The access kinds the L1 data cache does not serve: the atomics, performed at memory (as
#: Fermi's and GPGPU-Sim's), ``lr.w`` and ``sc.w`` among them (docs/architecture.md, rule 8).
UNCACHED = PER_WORD | {"lr"}


class MemOp(enum.IntEnum):
    """``mem__req_op`` of the SM's data port (docs/sm-hardware.md, "Ports of SM")."""

    LOAD = 0
    STORE = 1
    AMO = 2


def _funct5(mnemonic: str) -> int:
    funct5 = SPEC_BY_NAME[mnemonic].funct5
    assert funct5 is not None, mnemonic
    return funct5


#: The AMO of each funct5 (its standard encoding in ``golden.isa``): a key of ``AMO_OPS``.
AMO_BY_FUNCT5: dict[int, str] = {_funct5(f"amo{name}.w"): name for name in AMO_OPS}
#: What the hardware's read-modify-write (``hdl.sm.lsu.amo_word``) computes each AMO of
#: ``AMO_OPS`` from (old, operand): min and minu take the smaller, max and maxu the larger
#: operand of one comparison, signed for the ``SIGNED_AMOS``. The area model counts the
#: distinct results.
AMO_RESULTS: dict[str, str] = {
    "add": "sum",
    "swap": "operand",
    "xor": "xor",
    "and": "and",
    "or": "or",
    "min": "smaller",
    "minu": "smaller",
    "max": "larger",
    "maxu": "larger",
}
SIGNED_AMOS = ("min", "max")
#: The funct5 of ``lr.w`` and ``sc.w``, which the LSU runs as a reserving load and a
#: conditional store (they reach the data port as a load and a store).
LR_FUNCT5 = _funct5("lr.w")
SC_FUNCT5 = _funct5("sc.w")


@dataclass(frozen=True)
class AccessCost:
    transactions: int  # global/local line transactions
    shared_cycles: int  # shared memory bank cycles (0 when no lane accessed shared memory)

    @property
    def bank_conflicts(self) -> int:
        return max(self.shared_cycles - 1, 0)

    @property
    def cycles(self) -> int:
        """Cycles the LSU is busy: one per transaction or bank cycle."""
        return self.transactions + self.shared_cycles


def shares_tree(policy: Policy) -> bool:
    """Whether the LSU coalesces on the stack-less control's arbiter tree, and waits in the
    cycles where the control arbitrates on it and, on the hardware's pipeline, a cycle at
    the start, when the tree reads the instruction's keys from the address buffer (seed 000
    Sec 4.3, timing rule 3)."""
    return policy is Policy.STACKLESS


def local_physical(addr: int, position: int, slot: int, memmap: MemoryMap, warp_size: int) -> int:
    """The data-port address of local address ``addr`` of thread position ``position`` in warp
    slot ``slot``: ``(((slot * local_words + word) * W + position) * 4) + byte``."""
    offset = addr - memmap.local_base
    local_words = memmap.local_size // WORD_BYTES
    word, byte = divmod(offset, WORD_BYTES)
    return ((slot * local_words + word) * warp_size + position) * WORD_BYTES + byte


def access_cost(
    access: MemAccess,
    lanes: np.ndarray,
    memmap: MemoryMap,
    *,
    warp_size: int,
    line_bytes: int,
    banks: int,
) -> AccessCost:
    """LSU cycles of one memory instruction: line transactions and shared bank cycles
    (module docstring). ``lanes`` are the thread positions of ``access.addrs``; unmapped
    addresses (a fault) cost nothing. (Plain Python: a warp's few addresses are counted
    faster so than through NumPy's calls.)"""
    window = {region: (base, base + length) for region, base, length in memmap.windows()}
    (global_lo, global_hi), (local_lo, local_hi) = window[Region.GLOBAL], window[Region.LOCAL]
    shared_lo, shared_hi = window[Region.SHARED]
    size, amo = access.size, access.kind in PER_WORD
    # physical words of the global and local threads (local: interleaved, slot 0; the line
    # keys of other slots differ by whole lines, see lsu_cycles), and the shared threads' words
    words: list[int] = []
    shared: list[int] = []
    for position, addr in zip(lanes.tolist(), access.addrs.tolist(), strict=True):
        end = addr + size
        if global_lo <= addr and end <= global_hi:
            words.append(addr // WORD_BYTES)
        elif local_lo <= addr and end <= local_hi:
            words.append((addr - local_lo) // WORD_BYTES * warp_size + position)
        elif shared_lo <= addr and end <= shared_hi:
            shared.append(addr // WORD_BYTES)
    if amo:  # each line: as many transactions as AMO threads on its busiest word
        busiest: dict[int, int] = {}
        for word, count in Counter(words).items():
            line = word * WORD_BYTES // line_bytes
            busiest[line] = max(busiest.get(line, 0), count)
        transactions = sum(busiest.values())
    else:
        transactions = len({word * WORD_BYTES // line_bytes for word in words})
    shared_cycles = 0
    if shared:
        per_bank = Counter(word % banks for word in (shared if amo else set(shared)))
        shared_cycles = max(per_bank.values())
    return AccessCost(transactions, shared_cycles)


@dataclass(frozen=True)
class LsuCycle:
    """One LSU cycle of the hardware: a line transaction (``kind`` "line", the line key, i.e.
    the physical byte address // line bytes) or a shared bank cycle (``kind`` "shared",
    ``words``: the (bank, word offset in the block's window) each busy bank serves), and the
    thread positions served (bit i = position i)."""

    kind: str
    line: int | None
    words: tuple[tuple[int, int], ...]
    threads: int


def _physical(
    access: MemAccess, lanes: np.ndarray, memmap: MemoryMap, warp_size: int, slot: int
) -> Iterator[tuple[int, int, Region]]:
    """(position, data-port address, region) of every global or local thread position."""
    for position, addr in zip(lanes.tolist(), access.addrs.tolist(), strict=True):
        region = memmap.region_of(addr, access.size)
        if region is Region.GLOBAL:
            yield position, addr, region
        elif region is Region.LOCAL:
            yield position, local_physical(addr, position, slot, memmap, warp_size), region


def physical_addresses(
    access: MemAccess, lanes: np.ndarray, memmap: MemoryMap, warp_size: int, slot: int = 0
) -> dict[int, int]:
    """The data-port address of every global or local thread position (local ones by
    :func:`local_physical` in warp slot ``slot``); shared and unmapped positions are absent."""
    return {p: addr for p, addr, _ in _physical(access, lanes, memmap, warp_size, slot)}


def transaction_lines(
    access: MemAccess,
    lanes: np.ndarray,
    memmap: MemoryMap,
    *,
    warp_size: int,
    line_bytes: int,
    slot: int,
) -> dict[int, bool]:
    """The line key of each line transaction of a load or store (not an AMO) in the order the
    LSU serves them, lowest first (the arbiter tree's, seed 000 Sec 4.2), each with whether
    it holds local memory: what the L1 data cache sees (docs/architecture.md, rule 8)."""
    lines = {
        addr // line_bytes: region is Region.LOCAL
        for _, addr, region in _physical(access, lanes, memmap, warp_size, slot)
    }
    return dict(sorted(lines.items()))


def _first_per_group(served: int, group: dict[int, int]) -> int:
    """The lowest position of ``served`` in each group (``group``: position -> group)."""
    firsts: dict[int, int] = {}
    for position in sorted(group):
        if served >> position & 1:
            firsts.setdefault(group[position], position)
    return sum(1 << p for p in firsts.values())


def lsu_cycles(
    access: MemAccess,
    lanes: np.ndarray,
    memmap: MemoryMap,
    *,
    warp_size: int,
    line_bytes: int,
    banks: int,
    slot: int = 0,
) -> list[LsuCycle]:
    """The LSU cycles of one fault-free memory instruction in hardware order (module
    docstring; ``slot`` is the warp slot, which places local memory). Its length is
    ``access_cost(...).cycles``."""
    amo = access.kind in PER_WORD
    physical = physical_addresses(access, lanes, memmap, warp_size, slot)
    keys = [physical.get(p, 0) // line_bytes for p in range(warp_size)]
    word_of = {p: a // WORD_BYTES for p, a in physical.items()}
    cycles: list[LsuCycle] = []
    pending = sum(1 << p for p in physical)
    while pending:
        line, on_line, _ = reduce(keys, pending)  # the arbiter tree (seed 000 Sec 4.2)
        served = _first_per_group(on_line, word_of) if amo else on_line
        cycles.append(LsuCycle("line", line, (), served))
        pending &= ~served
    shared_word = {
        p: (a - SHARED_BASE) // WORD_BYTES
        for p, a in zip(lanes.tolist(), access.addrs.tolist(), strict=True)
        if memmap.region_of(a, access.size) is Region.SHARED
    }
    bank_of = {p: w % banks for p, w in shared_word.items()}
    pending = sum(1 << p for p in shared_word)
    while pending:
        firsts = _first_per_group(pending, bank_of)
        chosen = {bank_of[p]: shared_word[p] for p in shared_word if firsts >> p & 1}
        served = firsts
        if not amo:
            served = sum(
                1 << p
                for p, w in shared_word.items()
                if pending >> p & 1 and chosen[bank_of[p]] == w
            )
        cycles.append(LsuCycle("shared", None, tuple(sorted(chosen.items())), served))
        pending &= ~served
    return cycles
