"""Opportunistic early reconvergence (seed 002 Sec 4) condition by condition, on the split
tables directly (``golden/blocks/split_tables.py``, ``_early_reconvergence``): a split inserted
into the ST merges with a split already there only when both are in the same block (same block
PC) *and* reconverge at the same RT entry (the same reconvergence point); the leader must not
wait at a barrier; two splits at the same instruction merge at once; without a free RT entry
for the early point they stay apart. Each test violates one condition and keeps the others,
beside the case where all hold — so that dropping any one condition from the search fails a
test (the Fig 11 worked example alone does not: its splits satisfy all of them).

The layout: A diverges to B (threads 0-1) and C (threads 2-3), both reconverging at D; the B
split has run one instruction (its next PC is B + 4), so a split that later enters B trails it.
"""

from __future__ import annotations

from reconverge.golden.blocks.divergence import Executed
from reconverge.golden.blocks.split_tables import SplitTables

A, B, C, D, E = (0x100 * k for k in range(1, 6))
LEAD, TRAIL = 0b0011, 0b1100


def sid_at(unit: SplitTables, pc: int, mask: int) -> int:
    (sid,) = [i for i, e in enumerate(unit.st) if e is not None and e.pc == pc and e.mask == mask]
    return sid


def tables(unit: SplitTables) -> tuple[set[tuple[int, int, int]], set[tuple[int, int, int]]]:
    """Valid ST entries as (block PC, mask, RPC); RT entries as (PC, reconvergence mask,
    pending mask)."""
    st = {(e.pc, e.mask, unit.rpc_of(e)) for e in unit.st if e is not None}
    rt = {(e.pc, e.rmask, e.pending) for e in unit.rt if e is not None}
    return st, rt


def diverged(rt_size: int = 4) -> SplitTables:
    """A -> B (LEAD) / C (TRAIL), reconverging at D; LEAD has run B's first instruction."""
    unit = SplitTables(4, 0b1111, A, st_size=4, rt_size=rt_size, orec=True)
    unit.execute(Executed(0, A, 0b1111, {B: LEAD, C: TRAIL}, control=True, rpc=D))
    unit.execute(Executed(sid_at(unit, B, LEAD), B, LEAD, {B + 4: LEAD}))
    return unit


def test_same_block_same_reconvergence_point_merges_early() -> None:
    """TRAIL jumps from C into B (reconverging at D, like LEAD): a new RT entry at LEAD's next
    PC gathers both; LEAD waits there, TRAIL runs B up to it."""
    unit = diverged()
    unit.execute(Executed(sid_at(unit, C, TRAIL), C, TRAIL, {B: TRAIL}, control=True, rpc=D))
    assert tables(unit) == (
        {(B, TRAIL, B + 4)},
        {(D, 0b1111, 0b1111), (B + 4, 0b1111, TRAIL)},
    )


def test_same_block_other_reconvergence_point_stays_apart() -> None:
    """TRAIL's threads diverge in C with their own reconvergence point E (thread 2 to B,
    thread 3 elsewhere): the split entering B reconverges at E, not at D, so it must not
    merge with LEAD although both are in block B."""
    unit = diverged()
    unit.execute(Executed(sid_at(unit, C, TRAIL), C, TRAIL, {B: 0b0100, C + 8: 0b1000},
                          control=True, rpc=E))  # fmt: skip
    st, rt = tables(unit)
    assert st == {(B, LEAD, D), (B, 0b0100, E), (C + 8, 0b1000, E)}
    assert rt == {(D, 0b1111, 0b1111), (E, TRAIL, TRAIL)}


def test_other_block_same_reconvergence_point_stays_apart() -> None:
    unit = diverged()
    unit.execute(Executed(sid_at(unit, C, TRAIL), C, TRAIL, {C + 8: TRAIL}, control=True, rpc=D))
    assert tables(unit) == ({(B, LEAD, D), (C + 8, TRAIL, D)}, {(D, 0b1111, 0b1111)})


def test_a_leader_waiting_at_a_barrier_does_not_merge() -> None:
    """LEAD waits at a barrier at B + 4: TRAIL entering B runs on apart (it will reach the
    barrier itself)."""
    unit = diverged()
    unit.execute(Executed(sid_at(unit, B, LEAD), B + 4, LEAD, {}, barrier=LEAD))
    unit.execute(Executed(sid_at(unit, C, TRAIL), C, TRAIL, {B: TRAIL}, control=True, rpc=D))
    st, rt = tables(unit)
    assert (B, TRAIL, D) in st and rt == {(D, 0b1111, 0b1111)}


def test_splits_at_the_same_instruction_merge_at_once() -> None:
    """Had LEAD not run ahead, TRAIL entering B is at LEAD's instruction: one split, no RT
    entry for an early point."""
    unit = SplitTables(4, 0b1111, A, st_size=4, rt_size=4, orec=True)
    unit.execute(Executed(0, A, 0b1111, {B: LEAD, C: TRAIL}, control=True, rpc=D))
    unit.execute(Executed(sid_at(unit, C, TRAIL), C, TRAIL, {B: TRAIL}, control=True, rpc=D))
    assert tables(unit) == ({(B, 0b1111, D)}, {(D, 0b1111, 0b1111)})


def test_without_a_free_rt_entry_the_splits_stay_apart() -> None:
    """A one-entry RT holds D: no entry is left for the early point, and that is no
    overflow — the splits just keep running apart."""
    unit = diverged(rt_size=1)
    unit.execute(Executed(sid_at(unit, C, TRAIL), C, TRAIL, {B: TRAIL}, control=True, rpc=D))
    assert not unit.overflow
    assert tables(unit) == ({(B, LEAD, D), (B, TRAIL, D)}, {(D, 0b1111, 0b1111)})
