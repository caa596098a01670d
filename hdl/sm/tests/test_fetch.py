"""The fetch stage (hdl/sm/fetch.py) on random streams of asked-for PCs and store writes,
against a dict model of the store: what the buffer shows when it hits, and the two promises
the issue stage's timing rules rest on (docs/sm-hardware.md, "Instruction store and buffers"):
a PC asked for since the cycle before hits (a redirected split is ready the cycle after it
shows, ``branch`` = 2), and a slot that hit and is asked for the next PC hits again at once
(a continuing split issues back to back). Amaranth's simulator, and the generated Verilog
under Icarus for one stream."""

from __future__ import annotations

import random
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from reconverge.golden.geometry import Geometry
from reconverge.golden.memmap import GLOBAL_BASE
from reconverge.golden.params import PC_WIDTH, SMParams
from reconverge.golden.sm.decode import predecode
from reconverge.hdl.sm.decode import PREDECODED
from reconverge.hdl.sm.fetch import BUFFER, Fetch
from reconverge.hdl.sm.tests.harness import pack, simulate_amaranth, simulate_icarus, unpack

PARAMS = replace(SMParams(geometry=Geometry(warp_size=4, simd_width=2, warps=2)), imem_words=16)
SLOTS = PARAMS.geometry.warps  # sps: one split slot per warp slot
Cycle = dict[str, int]
#: PCs asked for: the store's 16 words and two past its end (fetch faults)
PCS = [GLOBAL_BASE + 4 * k for k in range(PARAMS.imem_words + 2)]


def step_strategy() -> st.SearchStrategy[tuple[str, int, int]]:
    """One slot's next asked-for PC: the same, the next, or any (or a dispatch to it);
    sometimes a store write."""
    kinds = st.sampled_from(["stay", "next", "stay", "next", "jump", "dispatch"])
    moves = st.tuples(kinds, st.sampled_from(PCS), st.just(0))
    loads = st.tuples(
        st.just("load"), st.integers(0, PARAMS.imem_words - 1), st.integers(0, 2**32 - 1)
    )
    return st.one_of(moves, loads)


def stream(steps: list[list[tuple[str, int, int]]]) -> list[Cycle]:
    """The per-cycle inputs: per slot the asked-for PC after its step; a ``dispatch`` step
    reads the entry (the lowest dispatching slot's PC, asked for from the next cycle on); a
    ``load`` step of slot 0 writes the store in that cycle (word, RPC = word with its bits
    reversed)."""
    pcs = [GLOBAL_BASE] * SLOTS
    cycles = []
    for row in steps:
        cycle: Cycle = {}
        dispatched = []
        for slot, (kind, value, word) in enumerate(row):
            if kind == "next":
                pcs[slot] = min(pcs[slot] + 4, PCS[-1])
            elif kind == "jump":
                pcs[slot] = value
            elif kind == "dispatch":
                cycle.setdefault("entry", value)
                cycle["dispatch"] = cycle.get("dispatch", 0) | 1 << slot
                dispatched.append(slot)
            elif kind == "load" and slot == 0:
                cycle.update({"load__valid": 1, "load__addr": value, "load__word": word,
                              "load__rpc": rpc_of(word)})  # fmt: skip
        cycle["pc"] = sum(pc << PC_WIDTH * k for k, pc in enumerate(pcs))
        cycles.append(cycle)
        for slot in dispatched:
            pcs[slot] = cycle["entry"]
    return cycles


def rpc_of(word: int) -> int:
    return int(f"{word:032b}"[::-1], 2)


def field(out: dict[str, int], name: str, slot: int, width: int) -> int:
    """Element ``slot`` of the array output ``name`` (elements of ``width`` bits)."""
    return out[name] >> width * slot & (1 << width) - 1


def check(cycles: list[Cycle], outputs: list[dict[str, int]]) -> None:
    store = {k: (0, 0) for k in range(PARAMS.imem_words)}
    previous: list[tuple[int, bool]] = [(-1, False)] * SLOTS  # (asked-for PC, hit)
    for t, (cycle, out) in enumerate(zip(cycles, outputs, strict=True)):
        for slot in range(SLOTS):
            pc = cycle["pc"] >> PC_WIDTH * slot & (1 << PC_WIDTH) - 1
            hit = bool(out["hit"] >> slot & 1)
            asked, had = previous[slot]
            before = cycles[t - 1] if t else {}
            loaded_before = before.get("load__valid", 0)
            if before.get("dispatch", 0) >> slot & 1:
                asked, had = before["entry"], False
            if not loaded_before and (pc == asked or (had and pc == asked + 4)):
                assert hit, f"cycle {t} slot {slot}: {pc:#x} (asked {asked:#x}, hit {had})"
            # each entry that says it hits holds the PC's store entry; ``buffer`` is the one
            # that hits (A first), ``hit`` says one does
            entries = {e: field(out, e, slot, BUFFER.size) for e in ("a", "b", "buffer")}
            hits = {e: bool(out[f"hit_{e}"] >> slot & 1) for e in ("a", "b")}
            assert hit == (hits["a"] or hits["b"]), (t, slot, hits)
            if hit:
                assert entries["buffer"] == entries["a" if hits["a"] else "b"], (t, slot)
            for e in (e for e in hits if hits[e]):
                entry = unpack(BUFFER, entries[e])
                index = (pc - GLOBAL_BASE) // 4
                word, rpc = store.get(index, (None, None))
                assert entry["pc"] == pc and entry["in_range"] == (index in store), (t, slot, e)
                if index in store:
                    assert (entry["word"], entry["rpc"]) == (word, rpc), (t, slot, e, index)
                    assert entry["pre"] == pack(PREDECODED, predecode(word)), (t, slot, e)
            previous[slot] = (pc, hit)
        if cycle.get("load__valid"):
            store[cycle["load__addr"]] = (cycle["load__word"], cycle["load__rpc"])


@settings(max_examples=15, deadline=None)
@given(st.lists(st.lists(step_strategy(), min_size=SLOTS, max_size=SLOTS), max_size=80))
def test_fetch_random_stream(steps: list[list[tuple[str, int, int]]]) -> None:
    cycles = stream(steps)
    check(cycles, simulate_amaranth(Fetch(PARAMS), cycles))


def test_fetch_in_icarus(tmp_path) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(5)
    kinds = ["stay", "next", "next", "jump", "load", "dispatch"]
    steps = [
        [(rng.choice(kinds), rng.choice(PCS), rng.getrandbits(32)) for _ in range(SLOTS)]
        for _ in range(200)
    ]
    steps = [
        [(k, rng.randrange(PARAMS.imem_words), w) if k == "load" else (k, v, w) for k, v, w in row]
        for row in steps
    ]
    cycles = stream(steps)
    check(cycles, simulate_icarus(Fetch(PARAMS), "fetch", cycles, tmp_path, unread=("a",)))
