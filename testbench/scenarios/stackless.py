"""Stimulus for the stack-less control (seed 000 Sec 3, 4.1, Table 2, Listing 1).

The scenarios run little programs on the block: each cycle the split the block shows (common
PC, active mask) executes the instruction at that PC and its outcome goes back in (the lanes'
next PCs, exits, barrier arrivals, SP writes). A private copy of the golden twin tells the
scenario the split of the coming cycle (the block's outputs are registers, so they are known
before the cycle's outputs arrive); the comparison itself is HDL against the lock-step twin.
The stack-less control has no SIMD width: the W = 8 set is the warp of the W = L = 8 geometry.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources

import numpy as np

from reconverge.golden.asm import assemble
from reconverge.golden.blocks.arbiter import coalesce
from reconverge.golden.blocks.base import Values
from reconverge.golden.blocks.divergence import Executed, Split, lanes_of
from reconverge.golden.blocks.stackless import StacklessBlock, StacklessControl, StacklessParams
from reconverge.golden.config import SMConfig
from reconverge.golden.functional import LaunchConfig
from reconverge.golden.geometry import Geometry
from reconverge.golden.isa import ILEN_BYTES, MASK32, REG_SP
from reconverge.golden.policies import Policy
from reconverge.golden.sm.core import SM
from reconverge.testbench.lockstep import RESET, Scenario
from reconverge.testbench.scenarios import ScenarioSpec

#: Parameter sets of the cocotb suite: Table 2's 4 threads with small PCs and SPs, W = 8 (the
#: W = L = 8 geometry), and the seed's W = 32 with 32-bit PCs and SPs.
PARAM_SETS = [
    StacklessParams(4, 8, 4, coalesce_width=8),
    StacklessParams(8, 16, 8, coalesce_width=26),  # line numbers wider than SP:PC
    StacklessParams(32, 32, 32, coalesce_width=32),
]
#: More shapes for the fast Amaranth-simulator tests.
EXTRA_PARAM_SETS = [
    StacklessParams(1, 6, 1, coalesce_width=4),
    StacklessParams(5, 7, 3, coalesce_width=12),
    StacklessParams(16, 12, 16, coalesce_width=20),
]


@dataclass(frozen=True)
class Op:
    """One instruction of a scenario program: ``kind`` is ``alu`` (next PC + 4), ``sp``
    (writes SP: ``arg(lane, sp) -> new sp``, then PC + 4), ``branch`` (control: ``arg(lane)
    -> next PC``), ``exit`` or ``bar``."""

    kind: str
    arg: Callable[..., int] | None = None


def _idle(model: StacklessBlock) -> Values:
    return model.idle_inputs()


def _start(model: StacklessBlock, mask: int, pc: int, sp: int) -> Values:
    inputs = _idle(model)
    inputs.update({"launch__valid": 1, "launch__mask": mask, "launch__pc": pc, "launch__sp": sp})
    return inputs


def _registered(out: Values) -> Values:
    """The outputs that come from registers (all but the ``coalesce`` group's)."""
    return {k: v for k, v in out.items() if not k.startswith("coalesce__")}


class Lsu:
    """The load/store unit's side of the unified tree (seed 000 Sec 4.3, Fig 4a): memory
    instructions whose requesting lanes' cache lines are coalesced through the control's
    arbiter tree, one line per pass (the lanes not served replay, Sec 4.2). In the cycle in
    which the control takes the tree to arbitrate its PC the tree is not granted and the
    request waits. Every
    instruction's passes must be exactly :func:`~reconverge.golden.blocks.arbiter.coalesce`
    of its lines and lanes; ``waited`` counts the cycles a request waited for the control."""

    def __init__(self, params: StacklessParams, rng: random.Random, rate: float) -> None:
        self.params, self.rng, self.rate = params, rng, rate
        self.keys: tuple[int, ...] = (0,) * params.warp_size
        self.requesting = self.pending = 0
        self.passes: list[tuple[int, int]] = []
        self.waited = self.instructions = 0

    def _lines(self) -> tuple[int, ...]:
        """Cache lines of the lanes: one line, a few hot lines, consecutive lines, scattered."""
        w, rng, top = self.params.warp_size, self.rng, (1 << self.params.coalesce_width) - 1
        base = rng.randint(0, top)
        shape = rng.randrange(4)
        if shape == 0:
            return (base,) * w
        if shape == 1:
            hot = [rng.randint(0, top) for _ in range(rng.randint(1, 3))]
            return tuple(rng.choice(hot) for _ in range(w))
        if shape == 2:
            return tuple(min(top, base + i // 4) for i in range(w))
        return tuple(rng.randint(0, top) for _ in range(w))

    def request(self, inputs: Values) -> None:
        """This cycle's request (a new instruction when none is pending, now and then)."""
        w = self.params.warp_size
        if not self.pending and self.rng.random() < self.rate:
            self.keys = self._lines()
            self.requesting = self.pending = self.rng.getrandbits(w) or 1 << self.rng.randrange(w)
            self.passes = []
        inputs["coalesce__valid"] = self.pending
        inputs["coalesce__key"] = self.keys

    def observe(self, out: Values, control: bool) -> None:
        """The tree's answer to this cycle's request (``control``: the control uses the tree
        this cycle)."""
        granted, mask = out["coalesce__granted"], out["coalesce__mask"]
        if control:
            assert not granted and not mask, "the tree is the control's"
            self.waited += bool(self.pending)
            return
        assert granted, "the tree is the LSU's whenever the control does not use it"
        if not self.pending:
            assert not mask, "nothing requested, nothing served"
            return
        assert granted and mask and not mask & ~self.pending, "a pass serves pending lanes"
        self.passes.append((out["coalesce__min_key"], mask))
        self.pending &= ~mask
        if not self.pending:
            expected = coalesce(list(self.keys), self.requesting)
            assert self.passes == expected, f"passes {self.passes}, coalesce() {expected}"
            self.instructions += 1


class Runner:
    """Runs a program (PC -> :class:`Op`) on the block, mirrored by a private twin that knows
    the lanes' SPs and the split of the next cycle."""

    def __init__(self, model: StacklessBlock) -> None:
        self.model = model
        self.shadow = StacklessBlock(model.params)
        self.sp = [0] * model.params.warp_size

    def state(self) -> Values:
        return self.shadow.outputs(_idle(self.model))

    def step(self, inputs: Values) -> Scenario:
        """One cycle: drive ``inputs`` (and the private twin); return the block's outputs."""
        out = yield inputs
        assert _registered(out) == _registered(self.state()), "the scenario lost track"
        if inputs["launch__valid"]:
            self.sp = [inputs["launch__sp"]] * self.model.params.warp_size  # type: ignore[list-item]
        for lane in lanes_of(inputs["outcome__sp_we"] if inputs["outcome__valid"] else 0):  # type: ignore[arg-type]
            self.sp[lane] = inputs["outcome__sp_wdata"][lane]  # type: ignore[index]
        self.shadow.clock(inputs)
        return out

    def outcome(self, op: Op, pc: int, active: int, inputs: Values | None = None) -> Values:
        """The inputs for executing ``op`` at ``pc`` with ``active``."""
        model = self.model
        inputs = _idle(model) if inputs is None else inputs
        inputs["outcome__valid"] = 1
        nxt, spd = list(inputs["outcome__next_pc"]), list(inputs["outcome__sp_wdata"])  # type: ignore[arg-type]
        if op.kind in ("alu", "sp", "branch"):
            inputs["outcome__next_mask"] = active
            inputs["outcome__control"] = int(op.kind == "branch")
            for lane in lanes_of(active):
                nxt[lane] = op.arg(lane) if op.kind == "branch" else pc + ILEN_BYTES  # type: ignore[misc]
            if op.kind == "sp":
                inputs["outcome__sp_we"] = active
                for lane in lanes_of(active):
                    spd[lane] = op.arg(lane, self.sp[lane])  # type: ignore[misc]
        else:
            inputs["outcome__exited" if op.kind == "exit" else "outcome__barrier"] = active
        inputs["outcome__next_pc"], inputs["outcome__sp_wdata"] = tuple(nxt), tuple(spd)
        return inputs

    def run(self, program: dict[int, Op], limit: int = 200) -> Scenario:
        """Execute ``program`` from the current state until no split is left (a barrier that
        every live thread reached is released); return [(outputs, inputs)] per cycle with an
        outcome or a release (the busy cycles between run idle)."""
        trace = []
        for _ in range(limit):
            state = self.state()
            if state["status__busy"]:
                yield from self.step(_idle(self.model))
                continue
            if not state["splits__valid"]:
                if (
                    not state["status__waiting"]
                    or state["status__waiting"] != state["status__live"]
                ):
                    return trace
                inputs = _idle(self.model)
                inputs["release__lanes"] = state["status__waiting"]
            else:
                inputs = self.outcome(
                    program[state["splits__pc"][0]],
                    state["splits__pc"][0],
                    state["splits__mask"][0],
                )
            out = yield from self.step(inputs)
            trace.append((out, inputs))
        raise AssertionError(f"the program did not finish in {limit} cycles")


def _labels(values: tuple[int, ...], threads: int) -> str:
    return "".join(str(v // ILEN_BYTES) for v in values[:threads])


#: seed 000 Table 2: (common PC, instruction, PC_i of threads 0-3, NPC_i), PCs as labels
#: (label k at byte address 4k).
TABLE2 = [
    (1, "A", "1111", "2222"),
    (2, "if(!c) br 5", "2222", "3355"),
    (3, "B", "3355", "4455"),
    (4, "br 6", "4455", "6655"),
    (5, "C", "6655", "6666"),
    (6, "D", "6666", "7777"),
]
TABLE2_C = (True, True, False, False)  # threads 2 and 3 take ``if(!c) br 5``


def _at(label: int) -> int:
    return label * ILEN_BYTES


def table2(model: StacklessBlock, rng: random.Random, cycles: int) -> Scenario:
    """seed 000 Table 2: the if-then-else with 4 threads, one row per cycle: the common PC
    (min SP:PC) and the active threads (the underlined PCs), PC_i before and NPC_i after each
    instruction; arbitration after the two jumps, local increment otherwise (C at 5 is
    followed by PC 6, where threads 0 and 1 wait: all four meet at D)."""
    program = {
        _at(1): Op("alu"),
        _at(2): Op("branch", lambda t: _at(3) if TABLE2_C[t] else _at(5)),
        _at(3): Op("alu"),
        _at(4): Op("branch", lambda t: _at(6)),
        _at(5): Op("alu"),
        _at(6): Op("alu"),
        _at(7): Op("exit"),
    }
    run = Runner(model)
    yield from run.step(_start(model, 0b1111, _at(1), (1 << model.params.sp_width) - 1))
    trace = yield from run.run(program)
    assert len(trace) == len(TABLE2) + 1, "six rows, then the exit at 7"
    rows = zip(TABLE2, trace, trace[1:], strict=False)
    for (pc, instruction, pc_i, npc_i), (out, _), (after, _) in rows:
        where = f"seed 000 Table 2 PC {pc} ({instruction})"
        assert out["splits__valid"] and out["splits__pc"][0] == _at(pc), (
            f"{where}: common PC {out['pc']:#x}"
        )
        assert _labels(out["status__thread_pc"], 4) == pc_i, f"{where}: PC_i {out['thread_pc']}"
        underlined = sum(1 << t for t in range(4) if int(pc_i[t]) == pc)
        assert out["splits__mask"][0] == underlined, f"{where}: active {out['active']:04b}"
        assert _labels(after["status__thread_pc"], 4) == npc_i, (
            f"{where}: NPC_i {after['thread_pc']}"
        )
    assert trace[-1][0]["splits__pc"][0] == _at(7) and trace[-1][0]["splits__mask"][0] == 0b1111
    assert run.state()["status__live"] == 0, "all threads exited"


def listing1(model: StacklessBlock, rng: random.Random, cycles: int) -> Scenario:
    """seed 000 Sec 3 / Listing 1: ``if (c) f();`` with f above the call site. The callers
    lower SP before the call (the project's convention, docs/architecture.md), so min(SP:PC)
    runs f first (deeper call, smaller SP, although its PC is higher); after the return, SP is
    restored and the re-comparison merges the threads that waited at ``skip``: the tail runs
    once with all four. With f lowering SP itself (after the call was arbitrated) the SPs are
    equal at the call, the lower PC wins, and the tail runs twice."""
    top = (1 << model.params.sp_width) - 1
    frame = max(1, 1 << max(0, model.params.sp_width - 2))
    skip, f = 5, 9

    def program(caller_frame: bool) -> dict[int, Op]:
        down = Op("sp", lambda lane, sp: sp - frame)
        up = Op("sp", lambda lane, sp: sp + frame)
        return {
            _at(1): Op("branch", lambda t: _at(2) if t & 1 else _at(skip)),
            _at(2): down if caller_frame else Op("alu"),
            _at(3): Op("branch", lambda t: _at(f)),  # call f
            _at(4): up if caller_frame else Op("alu"),
            _at(5): Op("alu"),  # skip: the tail
            _at(6): Op("alu"),
            _at(7): Op("exit"),
            _at(f): Op("alu") if caller_frame else down,
            _at(f + 1): Op("alu"),
            _at(f + 2): Op("alu") if caller_frame else up,
            _at(f + 3): Op("branch", lambda t: _at(4)),  # ret
        }

    run = Runner(model)
    for caller_frame in (True, False):
        yield from run.step(_start(model, 0b1111, _at(1), top))
        trace = yield from run.run(program(caller_frame))
        tail = [
            (o["splits__pc"][0] // ILEN_BYTES, o["splits__mask"][0])
            for o, _ in trace
            if o["splits__pc"][0] >= _at(skip)
        ]
        tail = [(pc, mask) for pc, mask in tail if pc < f]
        if caller_frame:
            assert tail == [(5, 0b1111), (6, 0b1111), (7, 0b1111)], f"callers first: {tail}"
        else:
            want = [(5, 0b0101), (6, 0b0101), (7, 0b0101), (5, 0b1010), (6, 0b1010), (7, 0b1010)]
            assert tail == want, f"SP lowered in f: the tail twice, {tail}"


def random_stream(
    model: StacklessBlock, rng: random.Random, cycles: int, lsu: Lsu | None = None
) -> Scenario:
    """Random programs, valid by construction: warps start with random masks, PCs and SPs;
    every cycle the split executes a random instruction: to PC + 4 (sometimes writing SP, the
    same or a per-lane value from a small pool, so keys tie and split), a branch whose lanes
    go to one of a few PCs (divergence, and reconvergence when PCs meet), an exit, a barrier,
    now and then a mixed outcome; barriers are released when every live thread waits (in the
    same cycle or later), sometimes partially; idle cycles carry garbage on the ignored
    inputs; a reset now and then. Memory instructions coalesce through the tree meanwhile
    (:class:`Lsu`)."""
    p = model.params
    lsu = Lsu(p, rng, 0.2) if lsu is None else lsu
    w = p.warp_size
    labels = min((1 << (model.params.pc_width - 2)) - 2, 24)  # PCs 4..4*labels, room for PC + 4
    top = (1 << model.params.sp_width) - 1
    frame = max(1, 1 << max(0, model.params.sp_width - 3))
    sps = sorted({max(0, top - k * frame) for k in range(3)})
    run = Runner(model)

    def room(pc: int) -> bool:
        """PC + 4 stays in the window (and PC + 8 fits the PC width)."""
        return pc < _at(labels)

    def branch(pc: int) -> Op:
        choices = [_at(rng.randint(1, labels)) for _ in range(2)]
        choices += [pc + ILEN_BYTES] if room(pc) else []
        picks = [rng.choice(choices) for _ in range(w)]
        return Op("branch", lambda lane: picks[lane])

    def sp_write() -> Op:
        values = [rng.choice(sps) for _ in range(w)]
        if rng.random() < 0.5:
            values = [values[0]] * w  # every lane the same SP
        return Op("sp", lambda lane, sp: values[lane])

    def garbage(inputs: Values) -> Values:
        inputs.update(
            {
                "outcome__control": rng.getrandbits(1),
                "outcome__next_mask": rng.getrandbits(w),
                "outcome__next_pc": tuple(rng.getrandbits(p.pc_width) for _ in range(w)),
                "outcome__sp_we": rng.getrandbits(w),
                "outcome__sp_wdata": tuple(rng.getrandbits(p.sp_width) for _ in range(w)),
            }
        )
        return inputs

    def mixed(state: Values) -> Values:
        inputs = run.outcome(
            branch(state["splits__pc"][0]), state["splits__pc"][0], state["splits__mask"][0]
        )
        for lane in lanes_of(state["splits__mask"][0]):
            kind = rng.randrange(3)
            if kind:
                inputs["outcome__next_mask"] &= ~(1 << lane)  # type: ignore[operator]
                inputs["outcome__exited" if kind == 1 else "outcome__barrier"] |= 1 << lane  # type: ignore[operator]
        return inputs

    for cycle in range(cycles):
        if cycle % 997 == 500:
            out = yield RESET
            run.shadow.reset()
            continue
        state = run.state()
        waiting = state["status__waiting"]
        if state["status__busy"]:
            inputs = garbage(_idle(model))  # no outcome, no release: the control is busy
        elif not state["status__live"] or (not state["splits__valid"] and not waiting):
            mask = rng.getrandbits(w) | (1 << rng.randrange(w) if rng.random() < 0.95 else 0)
            inputs = _start(model, mask, _at(rng.randint(1, labels)), rng.choice(sps))
        elif not state["splits__valid"] or rng.random() < 0.1:
            inputs = garbage(_idle(model))
            if waiting and (waiting == state["status__live"] or rng.random() < 0.1):
                inputs["release__lanes"] = (
                    waiting if rng.random() < 0.8 else waiting & rng.getrandbits(w)
                )
        else:
            pc, active = state["splits__pc"][0], state["splits__mask"][0]
            roll = rng.random()
            if roll < 0.05 and room(pc):
                inputs = mixed(state)
            else:
                op = (
                    Op("alu") if roll < 0.45 and room(pc)
                    else sp_write() if roll < 0.55 and room(pc)
                    else Op("exit") if roll < 0.6
                    else Op("bar") if roll < 0.67 and room(pc)
                    else branch(pc)
                )  # fmt: skip
                inputs = run.outcome(op, pc, active)
            live = state["status__live"] & ~inputs["outcome__exited"]  # type: ignore[operator]
            waiting = waiting | inputs["outcome__barrier"]  # type: ignore[operator]
            if waiting and waiting == live and rng.random() < 0.5:
                inputs["release__lanes"] = waiting  # the barrier completes in this cycle
        lsu.request(inputs)
        control = run.shadow.uses_tree
        out = yield from run.step(inputs)
        lsu.observe(out, control)


def unified_tree(model: StacklessBlock, rng: random.Random, cycles: int) -> Scenario:
    """seed 000 Sec 4.3, Fig 4a: the control's arbiter tree also serves the load/store unit.
    Random programs run (PC arbitration after control instructions, exits, barriers, releases
    and SP writes; local increments otherwise) while memory instructions keep the LSU busy:
    each is coalesced one cache line per pass in the cycles the control leaves the tree free,
    waits in the others, and its passes are exactly ``golden.blocks.arbiter.coalesce`` of its
    lines. Both uses must interleave."""
    lsu = Lsu(model.params, rng, 0.8)
    yield from random_stream(model, rng, cycles, lsu)
    assert lsu.instructions and lsu.waited, "PC arbitration and coalescing did not interleave"


#: A kernel for the replay: a conditional call with the caller's frame (Listing 1), a barrier
#: every thread reaches, and exits at two different PCs.
CALL_BARRIER = """
_start:
    csrr t0, tid
    andi t1, t0, 1
    beqz t1, skip
    addi sp, sp, -8
    call f
    addi sp, sp, 8
skip:
    bar
    andi t2, t0, 2
    bnez t2, late
    li   a0, 1
    li   a7, 93
    ecall
late:
    addi a0, t0, 3
    li   a7, 93
    ecall
f:
    sw   ra, 4(sp)
    addi a0, a0, 10
    lw   ra, 4(sp)
    ret
"""


@dataclass(frozen=True)
class UnitCall:
    """One call of the golden SM into a warp's :class:`StacklessControl`: the SM time, the
    outcome (or the released lanes), every lane's SP at the call, the split afterwards and the
    clocks the update took."""

    time: int
    ex: Executed | None
    release: int
    sp: tuple[int, ...]
    split: Split | None
    clocks: int


@dataclass(frozen=True)
class Recorded:
    """A warp's start (threads, entry PC, SP) and the golden SM's calls into its unit."""

    valid: int
    entry: int
    sp: int
    calls: list[UnitCall]


def record_sm(source: str, warp_size: int, threads: int) -> Recorded:
    """Run ``source`` on the golden SM (policy stackless, one warp of ``threads`` threads,
    W = L = ``warp_size``) and record every call into the warp's divergence unit."""

    calls: list[UnitCall] = []
    starts: list[Recorded] = []

    class Recording(StacklessControl):
        def _log(self, ex: Executed | None, release: int, clocks: int) -> int:
            sp = tuple(int(v) for v in self.regs[:, REG_SP])
            split = self.splits()
            calls.append(UnitCall(sm.t, ex, release, sp, split[0] if split else None, clocks))
            return clocks

        def execute(self, ex: Executed) -> int:
            return self._log(ex, 0, super().execute(ex))

        def release(self, lanes: int) -> int:
            return self._log(None, lanes, super().release(lanes))

    class RecordingSM(SM):
        def make_unit(self, valid: int, regs: np.ndarray) -> StacklessControl:
            entry = self.image.entry & MASK32
            starts.append(Recorded(valid, entry, int(regs[0, REG_SP]), calls))
            return Recording(warp_size, valid, entry, regs)

    geometry = Geometry(warp_size=warp_size, simd_width=warp_size, warps=1)
    launch = LaunchConfig(grid=1, block=threads, geometry=geometry)
    sm = RecordingSM(assemble(source, "replay.S"), launch, SMConfig(policy=Policy.STACKLESS))
    result = sm.run()
    assert result.fault is None, result.fault
    assert len(starts) == 1, "one warp"
    return starts[0]


def _replayed(model: StacklessBlock, run: Recorded, pc0: int, sp0: int) -> list[tuple]:
    """(inputs, split of the next cycle) per cycle; a release in the SM step of an outcome
    (the barrier's last arrival) goes into the same cycle; an update of c clocks is followed
    by c - 1 idle cycles, in which no split shows."""
    cycles = []
    sp = [run.sp] * model.params.warp_size
    calls = iter(run.calls)
    pending = next(calls, None)
    while pending is not None:
        call, pending = pending, next(calls, None)
        inputs = _idle(model)
        if call.ex is not None:
            target, nxt = 0, list(inputs["outcome__next_pc"])  # type: ignore[arg-type]
            for pc, lanes in call.ex.targets.items():
                target |= lanes
                for lane in lanes_of(lanes):
                    nxt[lane] = pc - pc0
            outcome = {
                "valid": 1,
                "control": int(call.ex.control),
                "next_mask": target,
                "next_pc": tuple(nxt),
                "exited": call.ex.exited,
                "barrier": call.ex.barrier,
                "sp_we": sum(1 << k for k, v in enumerate(call.sp) if v != sp[k]),
                "sp_wdata": tuple(v - sp0 for v in call.sp),
            }
            inputs.update({f"outcome__{name}": value for name, value in outcome.items()})
            sp = list(call.sp)
            if pending is not None and pending.ex is None and pending.time == call.time:
                call, pending = pending, next(calls, None)
        if call.ex is None:
            inputs["release__lanes"] = call.release
        shown = [None] * (call.clocks - 1) + [call.split]
        cycles += zip([inputs] + [_idle(model)] * (call.clocks - 1), shown, strict=True)
    return cycles


def replay(model: StacklessBlock, source: str, threads: int) -> Scenario:
    """Run ``source`` on the golden SM (:func:`record_sm`) and replay its calls into the
    warp's stack-less unit on the block's ports, shifting PCs and SPs by constants so they fit
    the widths (min SP:PC does not change); after every call the block's split must be the
    golden unit's."""
    run = record_sm(source, model.params.warp_size, threads)
    pcs = [run.entry] + [pc for c in run.calls if c.ex for pc in c.ex.targets]
    sps = [run.sp] + [v for c in run.calls for v in c.sp]
    pc0, sp0 = max(0, min(pcs) - ILEN_BYTES), min(sps)
    assert max(pcs) + 2 * ILEN_BYTES - pc0 < 1 << model.params.pc_width, "PCs do not fit"
    assert max(sps) - sp0 < 1 << model.params.sp_width, "SPs do not fit"
    expect: Split | None = Split(0, run.entry, run.valid)
    yield _start(model, run.valid, run.entry - pc0, run.sp - sp0)
    out: Values = {}
    for inputs, after in [*_replayed(model, run, pc0, sp0), (_idle(model), None)]:
        out = yield inputs
        assert out["splits__valid"] == (expect is not None), f"expected {expect}"
        if expect is not None:
            assert (out["splits__pc"][0] + pc0, out["splits__mask"][0]) == (
                expect.pc,
                expect.mask,
            ), expect
        expect = after
    assert expect is None and out["status__live"] == 0, "every thread exited"


def sm_replay(model: StacklessBlock, rng: random.Random, cycles: int) -> Scenario:
    """The golden SM's own calls into its stack-less unit (policy stackless, W = L = the
    block's W), replayed on the block's ports: Listing 1's call with the caller's frame, a
    barrier (released in the cycle of the last arrival), two exits, and the Collatz loop of
    ``reconverge demo`` (at most 12 threads: a partial warp when W is larger)."""

    demo = resources.files("reconverge.kernels").joinpath("divergent_demo.S").read_text()
    for source in (CALL_BARRIER, demo):
        yield from replay(model, source, min(model.params.warp_size, 12))


SCENARIOS = [
    ScenarioSpec(
        "seed000_table2_if_then_else",
        table2,
        lambda p: p.warp_size >= 4 and p.pc_width >= 5,
    ),
    ScenarioSpec(
        "seed000_listing1_call_sp",
        listing1,
        lambda p: p.warp_size >= 4 and p.pc_width >= 6 and p.sp_width >= 2,
    ),
    ScenarioSpec("golden_sm_replay", sm_replay, lambda p: p.pc_width >= 8 and p.sp_width >= 4),
    ScenarioSpec("random", random_stream, lambda p: p.pc_width >= 5),
    ScenarioSpec("seed000_sec43_unified_tree", unified_tree, lambda p: p.pc_width >= 5),
]
