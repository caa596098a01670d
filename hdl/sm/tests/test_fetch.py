"""The fetch stage (hdl/sm/fetch.py) on random streams of asked-for PCs and store writes,
against a dict model of the store: what the buffer shows when it hits, and the promises the
issue stage's timing rules rest on (docs/sm-hardware.md, "Instruction store and buffers"): a
PC asked for two cycles in a row hits the cycle after (a redirected split is ready two cycles
after it shows, ``branch`` = 3); a slot that issued from its buffer and is asked for the next
PC hits again at once (straight-line code issues back to back); a slot dispatched hits the
entry PC the cycle after once slot 0 has read it (a warp issues the cycle after its dispatch).
Amaranth's simulator, and the generated Verilog under Icarus for one stream."""

from __future__ import annotations

import random
from dataclasses import replace

from amaranth.hdl import Module
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out
from hypothesis import given, settings
from hypothesis import strategies as st

from reconverge.golden.geometry import Geometry
from reconverge.golden.memmap import GLOBAL_BASE
from reconverge.golden.params import PC_WIDTH, SMParams
from reconverge.golden.sm.decode import predecode
from reconverge.hdl.sm.decode import PREDECODED
from reconverge.hdl.sm.fetch import Fetch, buffer_layout, pc_tag, tag_layout
from reconverge.hdl.sm.tests.harness import pack, simulate_amaranth, simulate_icarus, unpack

PARAMS = replace(SMParams(geometry=Geometry(warp_size=4, simd_width=2, warps=2)), imem_words=16)
BUFFER = buffer_layout(PARAMS)
TAG = tag_layout(PARAMS)
SLOTS = PARAMS.geometry.warps  # sps: one split slot per warp slot
Cycle = dict[str, int]
MASK = (1 << PC_WIDTH) - 1
#: PCs asked for: the store's 16 words, two past its end and two below it (fetch faults), and
#: one far outside with the index of the store's first word (its tag's index is that word's)
LAST = GLOBAL_BASE + 4 * (PARAMS.imem_words + 1)
PCS = [*range(GLOBAL_BASE - 8, LAST + 4, 4), GLOBAL_BASE >> 1]


def step_strategy() -> st.SearchStrategy[tuple[str, int, int]]:
    """One slot's next asked-for PC: the same, the next, or any (or a dispatch, or idle);
    sometimes a store write."""
    kinds = st.sampled_from(["stay", "next", "stay", "next", "jump", "dispatch", "idle"])
    moves = st.tuples(kinds, st.sampled_from(PCS), st.just(0))
    loads = st.tuples(
        st.just("load"), st.integers(0, PARAMS.imem_words - 1), st.integers(0, 2**32 - 1)
    )
    return st.one_of(moves, moves, loads)


def stream(steps: list[list[tuple[str, int, int]]], entry: int) -> list[Cycle]:
    """The per-cycle inputs: per slot the asked-for PC after its step; a ``dispatch`` step
    asks for the entry (the slot's PC from the next cycle on), an ``idle`` one marks the slot
    idle for the cycle; a ``load`` step of slot 0 writes the store in that cycle (word, RPC =
    word with its bits reversed)."""
    pcs = [GLOBAL_BASE] * SLOTS
    cycles = []
    for row in steps:
        cycle: Cycle = {"entry": entry, "dispatch": 0, "idle": 0}
        dispatched = []
        for slot, (kind, value, word) in enumerate(row):
            if kind == "next":
                pcs[slot] = min(pcs[slot] + 4, LAST)
            elif kind == "jump":
                pcs[slot] = value
            elif kind in ("dispatch", "idle"):
                cycle[kind] |= 1 << slot
                if kind == "dispatch":
                    dispatched.append(slot)
            elif kind == "load" and slot == 0:
                cycle.update({"load__valid": 1, "load__addr": value, "load__word": word,
                              "load__rpc": rpc_of(word)})  # fmt: skip
        cycle["pc"] = sum(pc << PC_WIDTH * k for k, pc in enumerate(pcs))
        # the RPC memory is read at the index of slot 0's PC
        cycle["rpc_index"] = pcs[0] >> 2 & PARAMS.imem_words - 1
        cycles.append(cycle)
        for slot in dispatched:
            pcs[slot] = entry
    return cycles


def rpc_of(word: int) -> int:
    return int(f"{word:032b}"[::-1], 2)


def field(out: dict[str, int], name: str, slot: int, width: int) -> int:
    """Element ``slot`` of the array output ``name`` (elements of ``width`` bits)."""
    return out[name] >> width * slot & (1 << width) - 1


def asked(cycle: Cycle, slot: int) -> int:
    """The PC a slot is asked for in a cycle: its own, or the entry while dispatched or idle."""
    if (cycle["dispatch"] | cycle["idle"]) >> slot & 1:
        return cycle["entry"]
    return cycle["pc"] >> PC_WIDTH * slot & MASK


def promised(cycles: list[Cycle], hits: list[list[bool]], t: int, slot: int) -> str:
    """Why the slot must hit in cycle t (empty if it need not): no store write in the two
    cycles before, and its PC asked for in both of them (unless the slot was dispatched while
    not idle: that takes the entry register alone, below), or the next after one it hit on and
    was asked for the cycle before that (or hit on then too: it issued back to back; a slot
    never issues in the cycle it is dispatched), or the entry after a dispatch once slot 0 was
    asked for the entry since the last write."""
    if t < 2 or any(cycles[c].get("load__valid") for c in (t - 2, t - 1)):
        return ""
    pc = -1 if cycles[t]["idle"] >> slot & 1 else cycles[t]["pc"] >> PC_WIDTH * slot & MASK
    before, earlier = asked(cycles[t - 1], slot), asked(cycles[t - 2], slot)
    redispatched = (cycles[t - 1]["dispatch"] & ~cycles[t - 1]["idle"]) >> slot & 1
    if pc == before == earlier and not redispatched:
        return "asked for two cycles"
    own = cycles[t - 1]["pc"] >> PC_WIDTH * slot & MASK
    issued = hits[t - 1][slot] and not cycles[t - 1]["dispatch"] >> slot & 1
    back_to_back = earlier == own or (earlier == own - 4 and hits[t - 2][slot])
    if pc == own + 4 and before == own and issued and back_to_back:
        return "the next after a hit"
    if cycles[t - 1]["dispatch"] >> slot & 1 and pc == cycles[t - 1]["entry"]:
        last_load = max((c for c in range(t) if cycles[c].get("load__valid")), default=-1)
        if any(asked(cycles[c], 0) == pc for c in range(last_load + 1, t - 2)):
            return "dispatched"
    return ""


def check(cycles: list[Cycle], outputs: list[dict[str, int]]) -> None:
    store = {k: (0, 0) for k in range(PARAMS.imem_words)}
    hits: list[list[bool]] = []
    rpc = 0
    for t, (cycle, out) in enumerate(zip(cycles, outputs, strict=True)):
        hits.append([bool(out["hit"] >> slot & 1) for slot in range(SLOTS)])
        for slot in range(SLOTS):
            pc = cycle["pc"] >> PC_WIDTH * slot & MASK
            why = promised(cycles, hits, t, slot)
            assert hits[t][slot] or not why, f"cycle {t} slot {slot}: {pc:#x} ({why})"
            # each entry that says it hits holds the PC's store entry; ``buffer`` is the one
            # that hits (A first), ``hit`` says one does
            entries = {e: field(out, e, slot, BUFFER.size) for e in ("a", "b", "buffer")}
            either = {e: bool(out[f"hit_{e}"] >> slot & 1) for e in ("a", "b")}
            assert hits[t][slot] == (either["a"] or either["b"]), (t, slot, either)
            if hits[t][slot]:
                assert entries["buffer"] == entries["a" if either["a"] else "b"], (t, slot)
            for e in (e for e in either if either[e]):
                entry = unpack(BUFFER, entries[e])
                index = (pc - GLOBAL_BASE) // 4
                word, _ = store.get(index, (None, None))
                tag = unpack(TAG, entry["tag"])
                inside = 0 <= pc - GLOBAL_BASE < 4 * PARAMS.imem_words
                assert tag == {"index": index % PARAMS.imem_words, "inside": inside}, (t, slot, e)
                if inside:
                    assert entry["word"] == word, (t, slot, e, index)
                    assert entry["pre"] == pack(PREDECODED, predecode(word)), (t, slot, e)
        # the RPC of the index asked for the cycle before, as the store held it then
        if t:
            assert out["rpc"] == rpc, t
        rpc = store[cycle["rpc_index"]][1]
        if cycle.get("load__valid"):
            store[cycle["load__addr"]] = (cycle["load__word"], cycle["load__rpc"])


@settings(max_examples=15, deadline=None)
@given(
    st.lists(st.lists(step_strategy(), min_size=SLOTS, max_size=SLOTS), max_size=80),
    st.sampled_from(PCS),
)
def test_fetch_random_stream(steps: list[list[tuple[str, int, int]]], entry: int) -> None:
    cycles = stream(steps, entry)
    check(cycles, simulate_amaranth(Fetch(PARAMS), cycles))


def test_fetch_in_icarus(tmp_path) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(5)
    kinds = ["stay", "next", "next", "jump", "load", "dispatch", "idle"]
    steps = [
        [(rng.choice(kinds), rng.choice(PCS), rng.getrandbits(32)) for _ in range(SLOTS)]
        for _ in range(200)
    ]
    steps = [
        [(k, rng.randrange(PARAMS.imem_words), w) if k == "load" else (k, v, w) for k, v, w in row]
        for row in steps
    ]
    cycles = stream(steps, PCS[3])
    check(cycles, simulate_icarus(Fetch(PARAMS), "fetch", cycles, tmp_path, unread=("a", "rpc")))


class _Tags(wiring.Component):
    """``pc_tag`` of ``pc`` at the four steps the fetch stage uses."""

    def __init__(self) -> None:
        super().__init__({"pc": In(PC_WIDTH), "tags": Out(data.ArrayLayout(TAG, len(STEPS)))})

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.d.comb += [self.tags[k].eq(pc_tag(PARAMS, self.pc, step)) for k, step in enumerate(STEPS)]
        return m


STEPS = (-1, 0, 1, 2)


def test_tags_at_the_window_edges() -> None:
    """A tag is the word index modulo the store's size and whether the PC is inside the store,
    for the PCs around both ends of the window and around the 2^32 wrap (the sum's carry
    reaches the upper bits there), against the PC + 4 * step computed in full."""
    size = 4 * PARAMS.imem_words
    edges = (GLOBAL_BASE, GLOBAL_BASE + size, 0, GLOBAL_BASE >> 1)
    pcs = sorted({(edge + d) & MASK for edge in edges for d in range(-12, 16, 4)})
    out = simulate_amaranth(_Tags(), [{"pc": pc} for pc in pcs])
    for pc, row in zip(pcs, out, strict=True):
        for k, step in enumerate(STEPS):
            at = (pc + 4 * step) & MASK
            want = {"index": at >> 2 & PARAMS.imem_words - 1,
                    "inside": int(0 <= at - GLOBAL_BASE < size)}  # fmt: skip
            got = unpack(TAG, row["tags"] >> TAG.size * k & (1 << TAG.size) - 1)
            assert got == want, (hex(pc), step)
