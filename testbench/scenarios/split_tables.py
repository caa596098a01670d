"""Stimulus for the split and reconvergence tables (seed 002 Sec 3-5, Fig 6, Fig 7, Fig 11).

The directed scenarios drive the updates of a worked example and check the tables the block
outputs after each step (the HDL's outputs: every cycle is also compared with the golden twin).
The random stream is valid by construction: each update is the outcome of an instruction that
one of the current splits (read from a replica of the twin, i.e. the state the block holds in
that cycle) could have issued.
"""

from __future__ import annotations

import random
from collections.abc import Generator
from typing import Any

from reconverge.golden.blocks.base import Values
from reconverge.golden.blocks.split_tables import MAX_TARGETS, SplitTablesBlock, SplitTablesParams
from reconverge.testbench.lockstep import RESET, Scenario
from reconverge.testbench.scenarios import ScenarioSpec

#: Parameter sets of the cocotb suite: the seed's 4-thread warp (Fig 6, Fig 11; the golden
#: tests' W = L = 4 geometry) with OREC; W = L = 8 with fewer ST entries than threads (splits
#: wait for an entry) and a small RT (overflow); the default geometry's W = 32 (L = 8), 32 ST
#: and 16 RT entries, 32-bit PCs, OREC.
PARAM_SETS = [
    SplitTablesParams(4, 4, 4, 12, orec=True),
    SplitTablesParams(8, 4, 4, 16, orec=False),
    SplitTablesParams(32, 32, 16, 32, orec=True),
]
#: More shapes for the fast Amaranth-simulator tests.
EXTRA_PARAM_SETS = [
    SplitTablesParams(1, 1, 1, 8, orec=False),
    SplitTablesParams(16, 3, 5, 10, orec=True),
    SplitTablesParams(8, 8, 2, 32, orec=True),
    SplitTablesParams(4, 1, 4, 12, orec=False),
]

#: A sub-scenario: yields inputs, receives outputs, returns the last outputs.
Step = Generator[Any, Any, Any]


# -- inputs ------------------------------------------------------------------------------------


def _inputs(model: SplitTablesBlock, group: str, **values: object) -> Values:
    v = model.idle_inputs()
    v.update({f"{group}__{name}": value for name, value in values.items()})
    return v


def idle(model: SplitTablesBlock) -> Values:
    return model.idle_inputs()


def launch(model: SplitTablesBlock, lanes: int, pc: int) -> Values:
    return _inputs(model, "launch", valid=1, mask=lanes, pc=pc)


def _groups(targets: dict[int, int]) -> dict[str, tuple[int, ...]]:
    items = sorted(targets.items()) + [(0, 0)] * (MAX_TARGETS - len(targets))
    return {
        "target_pc": tuple(pc for pc, _ in items),
        "target_mask": tuple(mask for _, mask in items),
    }


def execute(
    model: SplitTablesBlock,
    sid: int,
    pc: int,
    targets: dict[int, int],
    *,
    rpc: int | None = None,
    exited: int = 0,
    barrier: int = 0,
    control: bool = True,
    call: bool = False,
    ret: bool = False,
) -> Values:
    """The outcome of the instruction split ``sid`` issued at ``pc`` (``rpc`` None: NEVER; a
    call's rpc is its return address, ``pc + 4``)."""
    if call and targets:
        rpc = pc + 4
    return _inputs(
        model,
        "outcome",
        valid=1,
        slot=sid,
        exited=exited,
        barrier=barrier,
        control=int(control),
        call=int(call),
        ret=int(ret),
        rpc=model.params.never if rpc is None else rpc,
        **_groups(targets),
    )


def more(model: SplitTablesBlock, targets: dict[int, int]) -> Values:
    """A continuation: more targets of the last divergence (MORE)."""
    return _inputs(model, "outcome", valid=1, cont=1, **_groups(targets))


def release(model: SplitTablesBlock, lanes: int) -> Values:
    return _inputs(model, "release", lanes=lanes)


def apply(model: SplitTablesBlock, inputs: Values) -> Step:
    """Present ``inputs`` for one cycle, then idle until the block is no longer busy; return
    the outputs of the first cycle after that (the tables the update left)."""
    yield inputs
    out = yield idle(model)
    while out["status__busy"]:
        out = yield idle(model)
    return out


# -- reading the outputs -----------------------------------------------------------------------

Tables = tuple[set[tuple[int, int, int]], set[tuple[int, int, int]]]


def tables(out: Values) -> Tables:
    """Valid ST entries as (block PC, active mask, RPC) and RT entries as (PC, reconvergence
    mask, pending mask): the tables of seed 002 Fig 6 and 11 (only valid entries shown)."""
    st = {
        (out["tables__st_block"][i], out["tables__st_mask"][i], out["tables__st_rpc"][i])
        for i in _bits(out["tables__st_valid"])
    }
    rt = {
        (out["tables__rt_pc"][i], out["tables__rt_rmask"][i], out["tables__rt_pending"][i])
        for i in _bits(out["tables__rt_valid"])
    }
    return st, rt


def _bits(mask: int) -> list[int]:
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


def sid_at(out: Values, block: int) -> int:
    """The ST entry of the split in ``block``."""
    (sid,) = [i for i in _bits(out["tables__st_valid"]) if out["tables__st_block"][i] == block]
    return sid


def slots(out: Values, table: str) -> list[int | None]:
    """Block PC per ST entry (``table`` "st") or PC per RT entry ("rt"), None when invalid:
    where new entries were placed."""
    pcs: tuple[int, ...] = out["tables__st_block" if table == "st" else "tables__rt_pc"]
    valid: int = out[f"tables__{table}_valid"]
    return [pc if valid >> i & 1 else None for i, pc in enumerate(pcs)]


def _fits(params: SplitTablesParams, threads: int, st: int, rt: int, pc: int) -> bool:
    return (
        params.warp_size >= threads
        and params.split_table >= st
        and params.reconv_table >= rt
        and params.pc_limit > pc
    )


# -- seed 002 Fig 6 and Fig 11 -----------------------------------------------------------------

STEP = 0x40  # block PCs A, B, C, ... = 0x40, 0x80, ...
A, B, C, D, E, F, G = (STEP * k for k in range(1, 8))


def fig6(model: SplitTablesBlock, rng: random.Random, cycles: int) -> Scenario:
    """seed 002 Fig 6 (Sec 3.2): nested divergence in a warp of 4 threads, the ST and RT after
    each of states 1-9; new entries take the first unallocated ST / RT entries (Sec 3.3)."""
    n = model.params.never
    out = yield from apply(model, launch(model, 0b1111, A))
    assert tables(out) == ({(A, 0b1111, n)}, set()), "1: A1111, RT empty"
    out = yield from apply(model, execute(model, 0, A, {B: 0b0101, C: 0b1010}, rpc=G))
    assert tables(out) == ({(B, 0b0101, G), (C, 0b1010, G)}, {(G, 0b1111, 0b1111)}), "2"
    assert slots(out, "st")[:2] == [B, C]
    c = sid_at(out, C)
    out = yield from apply(model, execute(model, c, C, {D: 0b0010, E: 0b1000}, rpc=F))
    assert tables(out) == (
        {(B, 0b0101, G), (D, 0b0010, F), (E, 0b1000, F)},
        {(G, 0b1111, 0b1111), (F, 0b1010, 0b1010)},
    ), "3: C moved to the RT with PC F; D and E added"
    assert slots(out, "st")[:3] == [B, D, E], "first unallocated ST entries"
    assert slots(out, "rt")[:2] == [G, F], "first unallocated RT entry"
    out = yield from apply(model, execute(model, sid_at(out, B), B, {G: 0b0101}))
    assert tables(out) == (
        {(D, 0b0010, F), (E, 0b1000, F)},
        {(G, 0b1111, 0b1010), (F, 0b1010, 0b1010)},
    ), "4: B reached G"
    out = yield from apply(model, execute(model, sid_at(out, E), E, {F: 0b1000}))
    assert tables(out) == ({(D, 0b0010, F)}, {(G, 0b1111, 0b1010), (F, 0b1010, 0b0010)}), "5"
    out = yield from apply(model, execute(model, sid_at(out, D), D, {F: 0b0010}))
    assert tables(out) == ({(F, 0b1010, G)}, {(G, 0b1111, 0b1010)}), "6-7: F back in the ST"
    out = yield from apply(model, execute(model, sid_at(out, F), F, {G: 0b1010}))
    assert tables(out) == ({(G, 0b1111, n)}, set()), "8-9: G complete, back in the ST"
    assert out["status__st"] == 1 and out["status__rt"] == 0


def fig11(model: SplitTablesBlock, rng: random.Random, cycles: int) -> Scenario:
    """seed 002 Fig 10/11 (Sec 4): do { A: if (cond1) { B; break; } else C } while (cond2); D.
    With OREC, A0101 branching into block B finds B1010 there with the same reconvergence
    entry: a new RT entry at B1010's next PC (B_R) gathers both (states 1-4); without OREC
    the two splits run block B apart."""
    b_r = B + 4  # the leading split has executed B's first instruction
    yield from apply(model, launch(model, 0b1111, A))
    out = yield from apply(model, execute(model, 0, A, {B: 0b1010, C: 0b0101}, rpc=D))
    out = yield from apply(model, execute(model, sid_at(out, B), B, {b_r: 0b1010}, control=False))
    out = yield from apply(model, execute(model, sid_at(out, C), C, {A: 0b0101}, rpc=D))
    assert tables(out) == ({(A, 0b0101, D), (B, 0b1010, D)}, {(D, 0b1111, 0b1111)}), "1"
    out = yield from apply(model, execute(model, sid_at(out, A), A, {B: 0b0101}, rpc=D))
    if not model.params.orec:
        assert tables(out) == ({(B, 0b0101, D), (B, 0b1010, D)}, {(D, 0b1111, 0b1111)})
        return
    assert tables(out) == (
        {(B, 0b0101, b_r)},
        {(D, 0b1111, 0b1111), (b_r, 0b1111, 0b0101)},
    ), "2-3: early reconvergence point B_R; B1010 waits there"
    out = yield from apply(model, execute(model, sid_at(out, B), B, {b_r: 0b0101}, control=False))
    assert tables(out) == ({(b_r, 0b1111, D)}, {(D, 0b1111, 0b1111)}), "4: B_R1111 in the ST"


# -- capacity, calls, barriers -----------------------------------------------------------------


def full_split_table(model: SplitTablesBlock, rng: random.Random, cycles: int) -> Scenario:
    """seed 002 Sec 5: with fewer ST entries than threads, a warp that diverges into single
    threads (an indirect jump to W targets: an update and MORE cycles) fills the ST; the other
    splits wait, in order, and enter one by one as the splits in the ST reach the RPC R."""
    w, r = model.params.warp_size, G + STEP
    every = (1 << w) - 1
    targets = sorted((r + 8 * (t + 1), 1 << t) for t in range(w))
    out = yield from apply(model, launch(model, every, A))
    out = yield from apply(model, execute(model, 0, A, dict(targets[:MAX_TARGETS]), rpc=r))
    for i in range(MAX_TARGETS, w, MAX_TARGETS):
        out = yield from apply(model, more(model, dict(targets[i : i + MAX_TARGETS])))
    full = (1 << model.params.split_table) - 1
    assert out["status__st"] == w and out["status__queued"] == w - model.params.split_table, (
        "a split per thread"
    )
    assert out["tables__st_valid"] == full and out["status__rt"] == 1
    assert [out["tables__st_block"][i] for i in range(model.params.split_table)] == [
        pc for pc, _ in targets[: model.params.split_table]
    ]
    while out["status__rt"]:  # the splits reach R one by one
        queued = out["status__queued"]
        sid = _bits(out["splits__valid"])[0]
        mask = out["tables__st_mask"][sid]
        out = yield from apply(model, execute(model, sid, out["splits__pc"][sid], {r: mask}))
        if queued:
            assert out["status__queued"] == queued - 1 and out["tables__st_valid"] == full, (
                "a waiting split entered"
            )
            assert out["tables__st_block"][sid] == targets[w - queued][0], "in order"
    assert tables(out) == ({(r, every, model.params.never)}, set())


def calls(model: SplitTablesBlock, rng: random.Random, cycles: int) -> Scenario:
    """Calls and returns: a call entry at the return address; a branch with RPC RETURN
    reconverges at it; a recursive call nests call entries; a return from inside a
    divergence leaves the divergence's entry (its threads will not come back to it)."""
    n, k, f = model.params.never, A, 4 * STEP  # the kernel at A calls the function at f
    x = f + 0x30  # a reconvergence point inside the function
    out = yield from apply(model, launch(model, 0b11, k))
    out = yield from apply(model, execute(model, 0, k, {f: 0b11}, call=True))
    assert tables(out) == ({(f, 0b11, n)}, {(k + 4, 0b11, 0b11)}) and out["tables__rt_returns"] == 1
    div = execute(model, 0, f, {f + 8: 0b01, f + 16: 0b10}, rpc=model.params.return_code)
    out = yield from apply(model, div)
    assert tables(out) == ({(f + 8, 0b01, n), (f + 16, 0b10, n)}, {(k + 4, 0b11, 0b11)})
    out = yield from apply(model, execute(model, sid_at(out, f + 8), f + 8, {k + 4: 1}, ret=True))
    assert tables(out) == ({(f + 16, 0b10, n)}, {(k + 4, 0b11, 0b10)}), "returned"
    out = yield from apply(model, execute(model, sid_at(out, f + 16), f + 16, {f: 2}, call=True))
    assert tables(out) == ({(f, 0b10, n)}, {(k + 4, 0b11, 0b10), (f + 20, 0b10, 0b10)})
    assert out["tables__rt_returns"] == 0b11, "recursion: a second call entry"
    out = yield from apply(model, execute(model, sid_at(out, f), f, {f + 20: 2}, ret=True))
    assert tables(out) == ({(f + 20, 0b10, n)}, {(k + 4, 0b11, 0b10)})
    out = yield from apply(model, execute(model, sid_at(out, f + 20), f + 20, {k + 4: 2}, ret=True))
    assert tables(out) == ({(k + 4, 0b11, n)}, set()), "both returned: back in the kernel"
    if model.params.warp_size < 3:
        return
    yield from apply(model, launch(model, 0b111, k))
    out = yield from apply(model, execute(model, 0, k, {f: 0b111}, call=True))
    out = yield from apply(model, execute(model, 0, f, {f + 8: 0b011, f + 16: 0b100}, rpc=x))
    assert tables(out) == (
        {(f + 8, 0b011, x), (f + 16, 0b100, x)},
        {(k + 4, 0b111, 0b111), (x, 0b111, 0b111)},
    )
    out = yield from apply(model, execute(model, sid_at(out, f + 8), f + 8, {k + 4: 3}, ret=True))
    assert tables(out) == (
        {(f + 16, 0b100, x)},
        {(k + 4, 0b111, 0b100), (x, 0b100, 0b100)},
    ), "an early return leaves X's entry"
    out = yield from apply(model, execute(model, sid_at(out, f + 16), f + 16, {x: 0b100}))
    assert tables(out) == ({(x, 0b100, n)}, {(k + 4, 0b111, 0b100)}), "X reconverged"
    out = yield from apply(model, execute(model, sid_at(out, x), x, {k + 4: 0b100}, ret=True))
    assert tables(out) == ({(k + 4, 0b111, n)}, set()), "back in the kernel"


def barrier(model: SplitTablesBlock, rng: random.Random, cycles: int) -> Scenario:
    """seed 002 Sec 3.3.3: while one split waits at a barrier the other splits still issue;
    the release lets the waiting splits continue after it (and arrive, if that is their RPC).
    With 8 threads, three splits that each complete their reconvergence entry on the same
    release arrive in its cycle and move back in one busy cycle each."""
    out = yield from apply(model, launch(model, 0b1111, A))
    out = yield from apply(model, execute(model, 0, A, {B: 0b0101, C: 0b1010}, rpc=D))
    out = yield from apply(model, execute(model, sid_at(out, B), B, {}, barrier=0b0101))
    assert out["status__waiting"] == 0b0101 and _bits(out["splits__valid"]) == [sid_at(out, C)]
    out = yield from apply(model, execute(model, sid_at(out, C), C, {D - 4: 0b1010}))
    out = yield from apply(model, execute(model, sid_at(out, D - 4), D - 4, {}, barrier=0b1010))
    assert out["status__waiting"] == 0b1111 and out["splits__valid"] == 0
    out = yield from apply(model, release(model, 0b1111))
    assert out["status__waiting"] == 0
    assert tables(out) == ({(B, 0b0101, D)}, {(D, 0b1111, 0b0101)}), "C arrived on the release"
    assert out["splits__pc"][sid_at(out, B)] == B + 4
    if not _fits(model.params, 8, 4, 4, 0x400):
        return
    yield from apply(model, launch(model, 0xFF, A))
    out = yield from apply(model, execute(model, 0, A, {B: 0x03, C: 0x0C}, rpc=0x3F0))
    out = yield from apply(model, more(model, {D: 0x30, E: 0xC0}))
    assert out["status__st"] == 4, "an indirect jump to four targets"
    for block, low, high in ((B, 0x01, 0x02), (C, 0x04, 0x08), (D, 0x10, 0x20)):
        rpc = block + 0x20
        out = yield from apply(
            model,
            execute(model, sid_at(out, block), block, {block + 8: low, block + 16: high}, rpc=rpc),
        )
        out = yield from apply(model, execute(model, sid_at(out, block + 8), block + 8, {rpc: low}))
        out = yield from apply(
            model, execute(model, sid_at(out, block + 16), block + 16, {rpc - 4: high})
        )
        out = yield from apply(
            model, execute(model, sid_at(out, rpc - 4), rpc - 4, {}, barrier=high)
        )
    out = yield from apply(model, execute(model, sid_at(out, E), E, {}, barrier=0xC0))
    assert out["status__waiting"] == 0x2A | 0xC0
    yield release(model, 0xEA)
    for entry in range(3):  # the release completes three RT entries: one moves back a cycle
        out = yield idle(model)
        assert out["status__busy"], f"reconvergence {entry + 1} of 3 still to move back"
    out = yield idle(model)
    assert not out["status__busy"]
    st, rt = tables(out)
    assert {(b, m) for b, m, _ in st} == {
        (B + 0x20, 0x03),
        (C + 0x20, 0x0C),
        (D + 0x20, 0x30),
        (E, 0xC0),
    }
    assert rt == {(0x3F0, 0xFF, 0xFF)}


def overflow(model: SplitTablesBlock, rng: random.Random, cycles: int) -> Scenario:
    """RT overflow: a recursion deeper than the RT raises ``overflow``; the tables keep their
    state and ignore updates until the next launch."""
    f = 2 * STEP
    out = yield from apply(model, launch(model, 1, A))
    out = yield from apply(model, execute(model, 0, A, {f: 1}, call=True))
    for _ in range(model.params.reconv_table - 1):
        out = yield from apply(model, execute(model, 0, f, {f: 1}, call=True))
    assert out["status__rt"] == model.params.reconv_table and not out["status__overflow"]
    before = tables(out)
    out = yield from apply(model, execute(model, 0, f, {f: 1}, call=True))
    assert out["status__overflow"] and tables(out) == before, "overflow: nothing changed"
    out = yield from apply(model, execute(model, 0, f, {f + 4: 1}, control=False))
    assert out["status__overflow"] and tables(out) == before, "updates are ignored"
    out = yield from apply(model, launch(model, 1, A))
    assert not out["status__overflow"] and tables(out) == ({(A, 1, model.params.never)}, set())


# -- random ------------------------------------------------------------------------------------


class _Random:
    """Valid-by-construction random updates, chosen from the state the block holds in the
    cycle they are presented (a replica of the twin, stepped with the same inputs)."""

    def __init__(self, model: SplitTablesBlock, rng: random.Random) -> None:
        self.model = model
        self.rng = rng
        self.shadow = SplitTablesBlock(model.params)
        step = min(STEP, (model.params.pc_limit // 24) & ~3)
        self.blocks = [step * k for k in range(1, 17)]
        self.todo: list[Values] = []  # MORE updates of an indirect jump

    def state(self) -> Values:
        return self.shadow.outputs(self.shadow.idle_inputs())

    def present(self, inputs: Values | object) -> Step:
        out = yield inputs
        if inputs is RESET:
            self.shadow.reset()
        else:
            self.shadow.clock(inputs)
        return out

    def next(self) -> Values:
        m, rng, s = self.model, self.rng, self.state()
        if s["status__busy"]:
            return idle(m)
        if s["status__overflow"] or rng.random() < 0.002 or not s["status__live"]:
            self.todo = []
            if s["status__overflow"] and rng.random() < 0.5:  # ignored until the launch
                return execute(m, 0, 0, {4: 1})
            return launch(m, rng.getrandbits(m.params.warp_size) or 1, rng.choice(self.blocks))
        if self.todo:
            return self.todo.pop(0)
        ready = _bits(s["splits__valid"])
        waiting = s["status__waiting"]
        if waiting and (not ready or rng.random() < 0.02):
            return release(m, waiting if rng.random() < 0.7 else self._some_waiting(s))
        if not ready:
            self.todo = []
            return launch(m, (1 << m.params.warp_size) - 1, rng.choice(self.blocks))
        if rng.random() < 0.1:
            return idle(m)
        return self._outcome(s, rng.choice(ready))

    def _some_waiting(self, s: Values) -> int:
        lanes = 0
        for i in _bits(s["tables__st_valid"] & ~s["splits__valid"]):
            if self.rng.random() < 0.5:
                lanes |= s["tables__st_mask"][i]
        return lanes or s["status__waiting"]

    def _pick_pc(self, s: Values, sid: int, avoid: set[int]) -> int:
        """A target: the split's RPC, the next instruction, a block another split with the same
        RPC runs (an early reconvergence chance), the instruction before the RPC, any block."""
        m, rng = self.model, self.rng
        pc, rpc = s["splits__pc"][sid], s["tables__st_rpc"][sid]
        same = [
            s["tables__st_block"][i]
            for i in _bits(s["tables__st_valid"])
            if s["tables__st_rpc"][i] == rpc and i != sid
        ]
        options = [rng.choice(self.blocks), rng.choice(self.blocks), pc + 4]
        if rpc < m.params.pc_limit:
            options += [rpc, rpc, rpc - 4]
        if same:
            options += [rng.choice(same)] * 2
        options = [
            p for p in options if 0 < p < m.params.pc_limit - 8 and p % 4 == 0 and p not in avoid
        ]
        return rng.choice(options) if options else next(p for p in self.blocks if p not in avoid)

    def _partition(self, mask: int, parts: int) -> list[int]:
        lanes = _bits(mask)
        self.rng.shuffle(lanes)
        cuts = sorted(self.rng.sample(range(1, len(lanes)), parts - 1))
        groups = [lanes[a:b] for a, b in zip([0, *cuts], [*cuts, len(lanes)], strict=True)]
        return [sum(1 << t for t in g) for g in groups]

    def _outcome(self, s: Values, sid: int) -> Values:
        m, rng = self.model, self.rng
        pc, mask = s["splits__pc"][sid], s["tables__st_mask"][sid]
        threads = mask.bit_count()
        kind = rng.choices(
            ["next", "jump", "diverge", "wide", "call", "ret", "exit", "barrier", "partial"],
            [6, 5, 5, 1, 1, 1, 1, 1, 1],
        )[0]
        if pc + 4 == s["tables__st_rpc"][sid] and rng.random() < 0.5:
            kind = "barrier"  # released, it arrives: several such arrivals at one release
        if kind in ("diverge", "wide", "partial") and threads < 2:
            kind = "jump"
        if kind == "next" and pc + 4 < m.params.pc_limit - 8:
            return execute(m, sid, pc, {pc + 4: mask}, control=False, rpc=self._rpc(s, sid, set()))
        if kind in ("jump", "next", "call", "ret"):
            target = self._pick_pc(s, sid, set())
            return execute(
                m,
                sid,
                pc,
                {target: mask},
                rpc=self._rpc(s, sid, set()),
                call=kind == "call",
                ret=kind == "ret",
            )
        if kind == "exit":
            return execute(m, sid, pc, {}, exited=mask, control=False)
        if kind == "barrier":
            return execute(m, sid, pc, {}, barrier=mask, control=False)
        if kind == "partial":  # some threads exit, the others go on
            gone, on = self._partition(mask, 2)
            return execute(m, sid, pc, {self._pick_pc(s, sid, set()): on}, exited=gone)
        parts = 2 if kind == "diverge" else min(threads, rng.randint(3, 5))
        groups = self._partition(mask, parts)
        pcs: set[int] = set()
        for _ in groups:
            pcs.add(self._pick_pc(s, sid, pcs))
        targets = dict(zip(sorted(pcs), groups, strict=True))
        branch_rpc = self._rpc(s, sid, pcs)
        items = sorted(targets.items())
        self.todo = [
            more(m, dict(items[i : i + MAX_TARGETS]))
            for i in range(MAX_TARGETS, len(items), MAX_TARGETS)
        ]
        first = dict(items[:MAX_TARGETS])
        call = rng.random() < 0.15
        return execute(m, sid, pc, first, rpc=branch_rpc, call=call)

    def _rpc(self, s: Values, sid: int, targets: set[int]) -> int:
        """The RPC of a branch: the split's own (no new entry), RETURN, NEVER, one of the
        targets (an if without else), or another block."""
        m, rng = self.model, self.rng
        choice = rng.random()
        if choice < 0.3:
            return s["tables__st_rpc"][sid]
        if choice < 0.4:
            return m.params.return_code
        if choice < 0.5:
            return m.params.never
        if choice < 0.7 and targets:
            return rng.choice(sorted(targets))
        return rng.choice(self.blocks)


def random_stream(model: SplitTablesBlock, rng: random.Random, cycles: int) -> Scenario:
    """Random valid updates every cycle (continue, jump, two-way and wide divergence with
    MORE, call, return, exit, barrier and release, partial exits), RPCs that are the split's
    own, RETURN, NEVER, a target or another block; launches, an occasional synchronous reset."""
    gen = _Random(model, rng)
    yield from gen.present(launch(model, (1 << model.params.warp_size) - 1, gen.blocks[0]))
    for cycle in range(cycles):
        if cycle % 997 == 500:
            yield from gen.present(RESET)
            gen.todo = []
            continue
        yield from gen.present(gen.next())


def storm(model: SplitTablesBlock, rng: random.Random, cycles: int) -> Scenario:
    """Random divergence trees whose leaves all wait at a barrier just before their RPC: one
    release completes many RT entries at once (moves back over several busy cycles, queued
    splits admitted as entries free up). Repeated with fresh launches."""
    gen, m = _Random(model, rng), model
    every = (1 << m.params.warp_size) - 1
    cycle = 0
    while cycle < cycles:
        pcs = iter(range(2 * STEP, m.params.pc_limit - 0x48, 4 * rng.randint(1, 3)))
        steps: list[Values] = [launch(m, every, STEP)]
        for _ in range(rng.randint(1, 2 * m.params.warp_size) + 4 * m.params.warp_size):
            # the steps, each when the block is not busy, then its settled tables
            while steps or gen.state()["status__busy"]:
                busy = gen.state()["status__busy"]
                yield from gen.present(idle(m) if busy or not steps else steps.pop(0))
                cycle += 1
            s = gen.state()
            if s["status__overflow"]:
                break
            issue = _bits(s["splits__valid"])
            wide = [i for i in issue if s["tables__st_mask"][i].bit_count() > 1]
            if wide and len(issue) < 3 * m.params.warp_size:  # grow the tree
                sid = rng.choice(wide)
                mask = s["tables__st_mask"][sid]
                groups = gen._partition(mask, rng.randint(2, min(3, mask.bit_count())))
                targets = sorted({next(pcs, 4 + 8 * i): g for i, g in enumerate(groups)}.items())
                fresh = s["status__rt"] < m.params.reconv_table and rng.random() < 0.8
                rpc = next(pcs, 0x44) + 0x40 if fresh else s["tables__st_rpc"][sid]
                steps = [execute(m, sid, s["splits__pc"][sid], dict(targets[:2]), rpc=rpc)]
                steps += [more(m, dict(targets[2:]))] if len(targets) > 2 else []
            elif issue:  # every leaf to just before its RPC, then the barrier
                sid = rng.choice(issue)
                pc, mask, rpc = (
                    s["splits__pc"][sid],
                    s["tables__st_mask"][sid],
                    s["tables__st_rpc"][sid],
                )
                if pc + 4 == rpc or rpc >= m.params.pc_limit or rng.random() < 0.1:
                    steps = [execute(m, sid, pc, {}, barrier=mask, control=False)]
                else:
                    steps = [execute(m, sid, pc, {rpc - 4: mask})]
            else:
                break
        s = gen.state()
        if s["status__waiting"] and not s["status__overflow"]:
            yield from gen.present(release(m, s["status__waiting"]))
            cycle += 1
        while gen.state()["status__busy"]:
            yield from gen.present(idle(m))
            cycle += 1


SCENARIOS = [
    ScenarioSpec("seed002_fig6_nested_divergence", fig6, lambda p: _fits(p, 4, 3, 2, G + 8)),
    ScenarioSpec("seed002_fig11_early_reconvergence", fig11, lambda p: _fits(p, 4, 2, 2, D + 8)),
    ScenarioSpec(
        "seed002_sec5_full_split_table_waits",
        full_split_table,
        lambda p: p.split_table < p.warp_size and _fits(p, 2, 1, 1, 0x400),
    ),
    ScenarioSpec("calls_and_returns", calls, lambda p: _fits(p, 2, 2, 2, 0x200)),
    ScenarioSpec(
        "seed002_sec333_barrier_while_diverged", barrier, lambda p: _fits(p, 4, 2, 1, 0x200)
    ),
    ScenarioSpec("rt_overflow", overflow, lambda p: _fits(p, 1, 1, 1, 0x100)),
    ScenarioSpec("random", random_stream),
    ScenarioSpec("random_barrier_storm", storm, lambda p: p.warp_size >= 2 and p.pc_limit > 0x200),
]
