"""The load/store unit's cost of one warp memory instruction: how many passes through the
memory arbiter and the shared memory banks it takes.

Global and local accesses are coalesced by the unified arbiter tree of seed 000 (Sec 4.2,
4.3): each pass selects the lowest line address among the lanes still requesting, serves every
lane on that line, and the others replay; so the number of transactions is the number of
distinct lines. Local (spill) memory is private per thread at the same addresses, and laid out
word-interleaved across the warp's lanes, as GPUs do, so that the lanes of a warp reading the
same local word touch consecutive physical words. Shared memory has ``banks`` word-wide banks;
an access takes as many cycles as the most requested bank has distinct words (broadcast of one
word is free), the extra cycles being bank conflicts. AMOs to the same word serialise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reconverge.golden.blocks.arbiter import coalesce
from reconverge.golden.memmap import MemoryMap, Region
from reconverge.golden.semantics import MemAccess


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


def arbiter_passes(keys: np.ndarray) -> int:
    """Passes the memory arbiter needs to serve every requested key: each pass serves the
    minimum key among the remaining requesters and all lanes that share it."""
    return len(coalesce(keys.tolist(), (1 << len(keys)) - 1))


def access_cost(
    access: MemAccess,
    lanes: np.ndarray,
    memmap: MemoryMap,
    *,
    warp_size: int,
    line_bytes: int,
    banks: int,
) -> AccessCost:
    addrs = access.addrs.astype(np.int64)
    region = np.array([memmap.region_of(int(a), access.size) for a in addrs], dtype=object)
    transactions = 0
    glob = region == Region.GLOBAL
    if glob.any():
        transactions += arbiter_passes(addrs[glob] // line_bytes)
    local = region == Region.LOCAL
    if local.any():
        word = (addrs[local] - memmap.local_base) // 4
        physical = (word * warp_size + lanes[local]) * 4
        transactions += arbiter_passes(physical // line_bytes)
    if access.kind == "amo":
        words = addrs[glob | local] // 4
        transactions += len(words) - len(np.unique(words))
    shared_cycles = 0
    shared = region == Region.SHARED
    if shared.any():
        words = np.unique(addrs[shared] // 4)
        shared_cycles = int(np.bincount(words % banks).max())
        if access.kind == "amo":
            shared_cycles += int(shared.sum()) - len(words)
    return AccessCost(transactions, shared_cycles)
