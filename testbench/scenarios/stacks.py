"""Stimulus shared by the two reconvergence stacks (``sps_stack``, ``dual_path_stack``): port
dictionaries for launches, updates and releases, and the random stream.

The random stream is valid by construction: every update is the outcome of an instruction
issued by a split the stack offers that cycle (its mask split among the targets, exited or
waiting at a barrier), a return only inside a call and to the call's return address, a
release only of lanes that wait, neither while the stack is busy. To reach the interesting
states (reconvergence, the same-RPC replacement, overflow, returns to RETURN) it peeks at the
golden state: jumps to the top entry's RPC, branches with the top entry's RPC or RETURN. An
instruction with more than two targets is applied as ``stack_updates`` splits it, one update
per cycle (once the stack settled the one before), as the SM does.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Generator, Iterator

from reconverge.golden.blocks.divergence import NEVER, RETURN, Executed, lanes_of
from reconverge.golden.blocks.stack_twins import StackTwin
from reconverge.golden.blocks.stack_update import StackUpdate, stack_updates
from reconverge.testbench.lockstep import RESET, Reset, Scenario

Values = dict[str, object]


class Shadow:
    """A private copy of the golden twin that the stimulus clocks with its own inputs, so it
    sees the stack's state whichever twin instance the harness compares with."""

    def __init__(self, model: StackTwin) -> None:
        self.model = copy.deepcopy(model)
        self.model.reset()

    def drive(self, inputs: Values | Reset) -> Generator[Values | Reset, Values, Values]:
        """One cycle with these inputs; returns that cycle's outputs (before the edge)."""
        out = yield inputs
        if isinstance(inputs, Reset):
            self.model.reset()
        else:
            self.model.clock(inputs)
        return out

    def settle(self) -> Generator[Values | Reset, Values, None]:
        """Idle cycles while the stack settles (``busy``: a dual-path stack's pops), after
        which an outcome or a release may come."""
        while self.model.busy():
            yield from self.drive(idle(self.model))


def idle(model: StackTwin) -> Values:
    return dict(model.idle_inputs())


def launch(model: StackTwin, pc: int, mask: int) -> Values:
    return idle(model) | {
        "launch__valid": 1,
        "launch__pc": model.params.pc_out(pc),
        "launch__mask": mask,
    }


def release(model: StackTwin, lanes: int) -> Values:
    return idle(model) | {"release__lanes": lanes}


def update(model: StackTwin, u: StackUpdate, swap: bool = False) -> Values:
    """The ports of one update; ``swap`` puts a single group in the second slot (two groups
    go in ascending PC order, as the port requires)."""
    pc_out = model.params.pc_out
    pcs = [pc_out(pc) for pc, _ in u.targets] + [0] * (2 - len(u.targets))
    masks = [m for _, m in u.targets] + [0] * (2 - len(u.targets))
    if swap and len(u.targets) == 1:
        pcs.reverse()
        masks.reverse()
    outcome = {
        "valid": 1,
        "slot": u.path,
        "target_pc": tuple(pcs),
        "target_mask": tuple(masks),
        "exited": u.exited,
        "barrier": u.barrier,
        "rpc": pc_out(u.rpc),
        "call": int(u.call),
        "ret": int(u.ret),
        "more": int(u.more),
        "cont": int(u.cont),
    }
    return idle(model) | {f"outcome__{name}": value for name, value in outcome.items()}


def execute(model: StackTwin, ex: Executed, rng: random.Random | None = None) -> Iterator[Values]:
    """The cycles that apply one instruction outcome (``stack_updates``)."""
    unit = model.unit
    assert unit is not None
    for u in stack_updates(ex, ex.sid % model.params.slots, unit.in_call):
        yield update(model, u, swap=rng is not None and rng.random() < 0.5)


def partition(rng: random.Random, mask: int, parts: int) -> list[int]:
    """``mask`` split into ``parts`` non-empty disjoint masks (``parts`` <= its popcount)."""
    lanes = lanes_of(mask)
    rng.shuffle(lanes)
    groups = [1 << lane for lane in lanes[:parts]]
    for lane in lanes[parts:]:
        groups[rng.randrange(parts)] |= 1 << lane
    return groups


class Program:
    """Random PCs of a made-up program that fit the stack's PC width."""

    def __init__(self, model: StackTwin, rng: random.Random) -> None:
        self.rng = rng
        self.limit = min(1 << model.params.pc_width, 1 << 20) - 64

    def pc(self) -> int:
        return self.rng.randrange(0x40, self.limit) & ~3

    def pcs(self, n: int, first: int | None = None) -> list[int]:
        out = [] if first is None else [first]
        while len(out) < n:
            pc = self.pc()
            if pc not in out:
                out.append(pc)
        return out

    def next(self, pc: int) -> int:
        return pc + 4 if pc + 4 < self.limit else self.pc()


def _top_rpc(model: StackTwin) -> int:
    unit = model.unit
    assert unit is not None
    return unit.entries[-1].rpc


def _return_address(model: StackTwin) -> int:
    """The return address of the innermost call entry."""
    unit = model.unit
    assert unit is not None
    return next(e.rpc for e in reversed(unit.entries) if e.call)


def _may_return(model: StackTwin) -> bool:
    """Inside a call, a path can only return where no reconvergence PC is pending: every entry
    above the innermost call entry reconverges at the return (RPC RETURN; always for the
    dual-path stack, which tracks returned paths)."""
    unit = model.unit
    assert unit is not None
    for e in reversed(unit.entries):
        if e.call:
            return True
        if model.params.slots == 1 and e.rpc != RETURN:
            return False
    return False


def _elsewhere(model: StackTwin, pc: int) -> int | None:
    """A real PC other than ``pc`` held by some path or entry of the stack (the other path of
    a dual-path entry first): paths that meet there reconverge early in implicit PPC."""
    unit = model.unit
    assert unit is not None
    pcs = [p.pc for p in getattr(unit.entries[-1], "paths", ())]
    pcs += [e.pc for e in reversed(unit.entries) if hasattr(e, "pc")]
    return next((x for x in pcs if x != pc and x not in (NEVER, RETURN)), None)


def random_outcome(
    model: StackTwin, prog: Program, rng: random.Random, sid: int, pc: int, mask: int
) -> Executed:
    """A plausible outcome of the instruction at ``pc`` issued for ``mask``."""
    unit = model.unit
    assert unit is not None
    lanes = mask.bit_count()
    real_rpc = _top_rpc(model) not in (NEVER, RETURN)
    roll = rng.random()
    base = {"sid": sid, "pc": pc, "mask": mask}
    if pc + 4 == _top_rpc(model) and roll < 0.25:
        return Executed(**base, barrier=mask)  # a barrier right before the RPC
    if roll < 0.30:
        return Executed(**base, targets={prog.next(pc): mask})
    if roll < 0.45 and real_rpc:  # reaches the reconvergence point
        return Executed(**base, targets={_top_rpc(model): mask}, control=True)
    if roll < 0.50:
        return Executed(**base, targets={prog.pc(): mask}, control=True)
    if roll < 0.58 and (meet := _elsewhere(model, pc)):  # to where other threads are
        return Executed(**base, targets={meet: mask}, control=True)
    if roll < 0.61 and real_rpc and _top_rpc(model) >= 0x80:  # just before the RPC
        return Executed(**base, targets={_top_rpc(model) - 4: mask}, control=True)
    if roll < 0.70 and lanes >= 2:
        return _branch(model, prog, rng, base, 2)
    if roll < 0.74 and lanes >= 3:
        return _branch(model, prog, rng, base, rng.randint(3, min(lanes, 5)))
    if roll < 0.82:
        groups = partition(rng, mask, 2) if lanes >= 2 and rng.random() < 0.2 else [mask]
        targets = dict(zip(prog.pcs(len(groups)), groups, strict=True))
        return Executed(**base, targets=targets, control=True, call=True)
    if roll < 0.90 and _may_return(model):
        return Executed(**base, targets={_return_address(model): mask}, control=True, ret=True)
    if roll < 0.93:
        if rng.random() < 0.7:
            return Executed(**base, exited=mask)
        (gone, rest) = partition(rng, mask, 2) if lanes >= 2 else (mask, 0)
        return Executed(**base, targets={prog.next(pc): rest} if rest else {}, exited=gone)
    if roll < 0.95:
        return Executed(**base, barrier=mask)
    return Executed(**base, targets={prog.next(pc): mask})


def _branch(model: StackTwin, prog: Program, rng: random.Random, base: dict, k: int) -> Executed:
    unit = model.unit
    assert unit is not None
    pcs = prog.pcs(k, first=prog.next(base["pc"]))
    targets = dict(zip(pcs, partition(rng, base["mask"], k), strict=True))
    roll = rng.random()
    if roll < 0.3:
        rpc: int | None = _top_rpc(model)  # a loop exit, a break: the same RPC
        if rpc not in (NEVER, RETURN) and rng.random() < 0.5 and rpc not in pcs:
            targets[rpc] = targets.pop(pcs[-1])  # the breaking threads jump to it
    elif roll < 0.45:
        rpc = rng.choice(pcs)  # an if-then: one side is the RPC
    elif roll < 0.55 and not unit.in_call:
        rpc = None  # only kernel-level branches may never reconverge (inside a function the
        # immediate postdominator is at the latest its end: RETURN)
    elif roll < 0.65 and unit.in_call:
        rpc = RETURN
    else:
        rpc = prog.pc()
    if rpc in (NEVER,):
        rpc = None
    return Executed(**base, targets=targets, control=True, rpc=rpc)


def random_stream(model: StackTwin, rng: random.Random, cycles: int) -> Scenario:
    """Random valid-by-construction instruction outcomes from the splits the stack offers
    (steps, jumps to the RPC, two-way and k-way branches, calls, returns, exits, barriers and
    releases, idle cycles), new warps when one finishes or overflows, a reset now and then."""
    sh = Shadow(model)
    model = sh.model
    prog = Program(model, rng)
    w = model.params.warp_size
    cycle = 0
    pending: list[Values] = []
    while cycle < cycles:
        cycle += 1
        unit = model.live()
        if pending:
            step: Values | Reset = idle(model) if model.busy() else pending.pop(0)
        elif cycle % 997 == 500:
            step = RESET
        elif unit is None or rng.random() < 0.003:
            mask = (1 << w) - 1 if rng.random() < 0.5 else rng.getrandbits(w) or 1
            step = launch(model, prog.pc(), mask)
        elif model.busy():
            step = idle(model)  # no outcome or release while the stack pops
        else:
            step = _next(model, unit, prog, rng, pending)
        yield from sh.drive(step)


def _next(model: StackTwin, unit, prog: Program, rng: random.Random, pending: list) -> Values:  # type: ignore[no-untyped-def]
    """The next cycle's inputs for a live stack (a release, an idle cycle, or an update;
    the further updates of a k-way branch go to ``pending``)."""
    waiting = unit.waiting
    splits = unit.splits()
    if waiting and (not splits or rng.random() < 0.2):
        return release(model, waiting)  # the barrier completes for every waiting lane
    if not splits or rng.random() < 0.05:
        return idle(model)
    split = rng.choice(splits)
    ex = random_outcome(model, prog, rng, split.sid, split.pc, split.mask)
    first, *more = execute(model, ex, rng)
    pending += more
    return first


# -- directed scenarios ---------------------------------------------------------------------


def current(model: StackTwin, out: Values, path: int = 0) -> tuple[int, int, int]:
    """(sid, pc, mask) of the split on the outputs (``path``: its slot in a dual-path stack)."""
    assert int(out["splits__valid"]) >> path & 1, f"slot {path} cannot issue"  # type: ignore[call-overload]
    sid = out["splits__sid"][path]  # type: ignore[index]
    assert sid == model.params.slots * (int(out["status__stack"]) - 1) + path  # type: ignore[call-overload]
    return sid, out["splits__pc"][path], out["splits__mask"][path]  # type: ignore[index]


def issue(
    sh: Shadow, out: Values, targets: dict[int, int], path: int = 0, **flags: object
) -> Scenario:
    """Issue the split on the outputs with this outcome; return the outputs once applied."""
    model = sh.model
    sid, pc, mask = current(model, out, path)
    ex = Executed(sid, model.params.pc_in(pc), mask, targets, **flags)  # type: ignore[arg-type]
    for inputs in execute(model, ex):
        yield from sh.settle()
        yield from sh.drive(inputs)
    yield from sh.settle()
    return (yield from sh.drive(idle(model)))


def straight(sh: Shadow, out: Values, n: int, path: int = 0) -> Scenario:
    """``n`` instructions that fall through."""
    for _ in range(n):
        _, pc, mask = current(sh.model, out, path)
        out = yield from issue(sh, out, {pc + 4: mask}, path)
    return out


def split_of(out: Values, slot: int = 0) -> tuple[int, int]:
    """(pc, mask) on the ``splits`` outputs of ``slot`` (a dual-path stack's path)."""
    return out["splits__pc"][slot], out["splits__mask"][slot]  # type: ignore[index]
