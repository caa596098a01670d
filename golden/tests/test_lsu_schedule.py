"""The LSU's reference schedule (``golden.sm.lsu.lsu_cycles``) against its cost
(``access_cost``, what the golden SM charges) and against the rules of docs/sm-hardware.md
(timing rule 3): lowest line first through the arbiter tree, every thread served once, AMOs one
thread per word (line) or per bank (shared) and in increasing thread order."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from reconverge.golden.isa import SPECS
from reconverge.golden.memmap import GLOBAL_BASE, LOCAL_TOP, SHARED_BASE, MemoryMap, Region
from reconverge.golden.semantics import MemAccess
from reconverge.golden.sm.lsu import (
    AMO_BY_FUNCT5,
    access_cost,
    local_physical,
    lsu_cycles,
)

MAP = MemoryMap(global_size=4096, shared_size=256, local_size=64)


def schedule(
    addrs: list[int], kind: str = "load", size: int = 4, *, line: int = 32, banks: int = 8
) -> tuple[list, tuple[int, int]]:
    access = MemAccess(kind, np.array(addrs, np.uint32), size)
    lanes = np.arange(len(addrs))
    kw = {"warp_size": 8, "line_bytes": line, "banks": banks}
    cost = access_cost(access, lanes, MAP, **kw)
    return lsu_cycles(access, lanes, MAP, **kw), (cost.transactions, cost.shared_cycles)


def test_amo_transactions_per_line_are_the_busiest_word() -> None:
    """Rule 3: one thread per word per transaction, so a line takes as many transactions as
    its busiest word has AMO threads (3 and 2 threads on two words of one line: 3)."""
    a, b = GLOBAL_BASE + 0x40, GLOBAL_BASE + 0x44
    cycles, cost = schedule([a, b, a, b, a], "amo")
    assert cost == (3, 0)
    assert [(c.kind, c.line, c.threads) for c in cycles] == [
        ("line", a // 32, 0b00011),  # the lowest thread of each word
        ("line", a // 32, 0b01100),
        ("line", a // 32, 0b10000),
    ]
    assert schedule([a, b, a, b, a], "load")[1] == (1, 0)  # a load serves them all at once


def test_shared_amo_cycles_are_the_busiest_bank_threads() -> None:
    """Shared AMOs: one thread per bank and cycle (bank 0: 4 threads on two words)."""
    w0, w8, w1 = SHARED_BASE, SHARED_BASE + 8 * 4, SHARED_BASE + 4
    cycles, cost = schedule([w0, w8, w0, w1, w8], "amo")
    assert cost == (0, 4)
    assert [c.threads for c in cycles] == [0b01001, 0b00010, 0b00100, 0b10000]
    assert cycles[0].words == ((0, 0), (1, 1))
    loads, cost = schedule([w0, w8, w0, w1, w8], "load")
    assert cost == (0, 2)  # bank 0 has two distinct words; broadcasts are free
    assert [c.threads for c in loads] == [0b01101, 0b10010]


def test_local_lines_precede_global_and_follow_the_documented_address() -> None:
    word = MAP.local_base + 8  # local word 2
    assert local_physical(word + 1, 3, 2, MAP, 8) == ((2 * 16 + 2) * 8 + 3) * 4 + 1
    cycles, cost = schedule([GLOBAL_BASE, word, word, word, word, word, word, word])
    assert cost == (2, 0)
    assert cycles[0].threads == 0b11111110  # the local threads: one line of their own
    assert cycles[0].line == local_physical(word, 1, 0, MAP, 8) // 32
    assert cycles[1].line == GLOBAL_BASE // 32


@st.composite
def accesses(draw: st.DrawFn) -> tuple[MemAccess, np.ndarray, int, int, int, int]:
    warp_size = draw(st.sampled_from([4, 8, 16]))
    line = draw(st.sampled_from([4, 16, 32, 64]))
    banks = draw(st.sampled_from([1, 4, 8, 32]))
    kind = draw(st.sampled_from(["load", "store", "amo"]))
    size = 4 if kind == "amo" else draw(st.sampled_from([1, 2, 4]))
    lanes = sorted(draw(st.sets(st.integers(0, warp_size - 1), min_size=1)))
    bases = {
        Region.GLOBAL: (GLOBAL_BASE, MAP.global_size),
        Region.SHARED: (SHARED_BASE, MAP.shared_size),
        Region.LOCAL: (LOCAL_TOP - MAP.local_size, MAP.local_size),
    }
    addrs = []
    for _ in lanes:
        base, length = bases[draw(st.sampled_from(list(bases)))]
        offset = draw(st.integers(0, min(length, 160) // size - 1)) * size  # collisions
        addrs.append(base + offset)
    slot = draw(st.integers(0, 3))
    access = MemAccess(kind, np.array(addrs, np.uint32), size)
    return access, np.array(lanes), warp_size, line, banks, slot


@settings(max_examples=300, deadline=None)
@given(accesses())
def test_schedule_length_is_the_cost_and_follows_rule_3(
    case: tuple[MemAccess, np.ndarray, int, int, int, int],
) -> None:
    access, lanes, warp_size, line, banks, slot = case
    kw = {"warp_size": warp_size, "line_bytes": line, "banks": banks}
    cost = access_cost(access, lanes, MAP, **kw)
    cycles = lsu_cycles(access, lanes, MAP, slot=slot, **kw)
    assert len(cycles) == cost.cycles
    assert sum(c.kind == "line" for c in cycles) == cost.transactions
    # line transactions first, lowest line first; shared cycles after them
    kinds = [c.kind for c in cycles]
    assert kinds == sorted(kinds)
    lines = [c.line for c in cycles if c.kind == "line"]
    assert lines == sorted(lines)
    # every thread exactly once, in increasing order where two share a word (AMO)
    served = [c.threads for c in cycles]
    assert sum(served) == sum(1 << int(p) for p in lanes)
    assert all(a & b == 0 for i, a in enumerate(served) for b in served[i + 1 :])
    addr_of = dict(zip(lanes.tolist(), access.addrs.tolist(), strict=True))
    for c in cycles:
        threads = [p for p in addr_of if c.threads >> p & 1]
        if c.kind == "line":
            # the local threads' physical addresses are distinct even for one local address
            physical = [
                local_physical(addr_of[p], p, slot, MAP, warp_size)
                if addr_of[p] < GLOBAL_BASE
                else addr_of[p]
                for p in threads
            ]
            assert {a // line for a in physical} == {c.line}
            if access.kind == "amo":
                assert len({a // 4 for a in physical}) == len(threads)
        else:
            words = [(addr_of[p] - SHARED_BASE) // 4 for p in threads]
            assert sorted({(w % banks, w) for w in words}) == list(c.words)
            if access.kind == "amo":
                assert len(threads) == len(c.words)  # one thread per bank
    if access.kind == "amo":  # threads on one word take their turns in increasing order
        turn = {p: i for i, c in enumerate(cycles) for p in addr_of if c.threads >> p & 1}
        for p in addr_of:
            for q in addr_of:
                private = MAP.region_of(addr_of[p]) is Region.LOCAL
                if p < q and addr_of[p] == addr_of[q] and not private:
                    assert turn[p] < turn[q]


def test_amo_funct5_names_every_golden_amo() -> None:
    amos = [spec for spec in SPECS if spec.amo_op is not None]
    assert len(AMO_BY_FUNCT5) == len(amos)
    assert all(f"amo{AMO_BY_FUNCT5[spec.funct5]}.w" == spec.name for spec in amos)
