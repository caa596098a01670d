"""The formal checks (hdl/formal/, docs/formal.md) at the smallest parameter sets: every property
of each block proven by k-induction (or, for a block with state whose rules are checked
together, by bmc to a depth), its covers reached, and broken variants of the blocks refuted with a
counterexample trace, while the properties the bug leaves intact still hold."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from amaranth.hdl import Const, Module, Mux, Signal, Value

from reconverge.golden.blocks.arbiter import ArbiterParams
from reconverge.golden.blocks.base import BlockParams
from reconverge.golden.blocks.scoreboard import MaskedScoreboardParams, ScoreboardParams
from reconverge.golden.blocks.split_tables import SplitTablesParams
from reconverge.golden.blocks.squeezer import SqueezerParams
from reconverge.golden.blocks.stack_twins import DualPathStackParams, SpsStackParams
from reconverge.golden.blocks.stackless import StacklessParams
from reconverge.golden.policies import Policy
from reconverge.hdl.blocks.arbiter import Arbiter
from reconverge.hdl.blocks.dual_path_stack import DualPathStack, EntryBits
from reconverge.hdl.blocks.scoreboard import MaskedScoreboard, Scoreboard
from reconverge.hdl.blocks.split_tables import SplitTables
from reconverge.hdl.blocks.sps_stack import SpsStack
from reconverge.hdl.blocks.squeezer import Squeezer
from reconverge.hdl.blocks.stackless import Stackless
from reconverge.hdl.formal import (
    arbiter,
    dual_path_stack,
    scoreboard,
    sm,
    split_tables,
    sps_stack,
    squeezer,
    stackless,
)
from reconverge.hdl.formal.check import COVERS, FAIL, JOINT, PASS, Harness, Outcome, run
from reconverge.hdl.formal.stacks import outcome_partitions
from reconverge.hdl.sm.divergence import DivergenceUnit

pytestmark = pytest.mark.formal
DEPTH = 20

#: Per block: its formal module and the parameter sets the tests prove it at.
BLOCKS: dict[str, tuple[Any, list[BlockParams]]] = {
    "arbiter": (arbiter, [ArbiterParams(4, 4, 0), ArbiterParams(5, 4, 1)]),
    "squeezer": (squeezer, [SqueezerParams(4, 2, 0), SqueezerParams(8, 4, 2)]),
    "sps_stack": (sps_stack, [SpsStackParams(4, 3, 8)]),
    "stackless": (stackless, [StacklessParams(4, 5, 1, 2)]),
    "scoreboard": (scoreboard, [ScoreboardParams(2, 4, 2, 2, 1, 2)]),
    "masked_scoreboard": (scoreboard, [MaskedScoreboardParams(4, 4, 2, 2, 2, 2)]),
    "dual_path_stack": (
        dual_path_stack,
        [DualPathStackParams(4, 3, 8, Policy.DPS), DualPathStackParams(4, 3, 8, Policy.PPC, False)],
    ),
    "split_tables": (split_tables, [SplitTablesParams(4, 2, 2, 6, True)]),
}


#: How the rules of a block that are checked together are checked here: k-induction, at the
#: depth where it closes.
JOINT_CHECK = {
    "sps_stack": ("prove", 3),
    "stackless": ("prove", DEPTH),
    # the scoreboards' induction closes at 2 cycles (make formal: 20)
    "scoreboard": ("prove", 4),
    "masked_scoreboard": ("prove", 4),
    "dual_path_stack": ("prove", 3),
    "split_tables": ("prove", 3),
}


def checks(block: str, module: Any, params: BlockParams) -> list[tuple[str, str, int]]:
    """(harness, mode, depth): each rule by k-induction, or the rules together where the block
    has that harness."""
    if JOINT in module.harnesses(params):
        return [(JOINT, *JOINT_CHECK[block])]
    return [(name, "prove", DEPTH) for name in module.PROPERTIES]


CASES = [
    pytest.param(block, params, name, mode, depth, id=f"{block}-{params.describe()}-{name}")
    for block, (module, param_sets) in BLOCKS.items()
    for params in param_sets
    for name, mode, depth in checks(block, module, params)
]


def top(block: str, params: BlockParams, name: str, make: Callable[..., Any] | None = None
        ) -> Harness:  # fmt: skip
    module = BLOCKS[block][0]
    builders = module.harnesses(params, make) if make else module.harnesses(params)
    return builders[name]()


def refuted(outcome: Outcome, *signals: str) -> None:
    """A counterexample: the checker failed the property and wrote a VCD with ``signals``."""
    assert outcome.status == FAIL, outcome.log
    assert outcome.trace is not None and outcome.trace.name == "trace.vcd"
    vcd = outcome.trace.read_text()
    assert "$var" in vcd
    for signal in signals:
        assert f" {signal} " in vcd, signal


def breaks_only(broken: tuple[str, BlockParams, Callable[..., Any]], rule: str, kept: str,
                tmp_path: Path, signals: tuple[str, ...]) -> None:  # fmt: skip
    """The broken block ``broken`` (block, parameters, what makes it) is refuted on ``rule``
    with a trace of ``signals``, while ``kept`` still holds (both by bmc to 8 cycles)."""
    block, params, make = broken
    refuted(run(top(block, params, rule, make), "bmc", 8, tmp_path / "rule"), *signals)
    holds = run(top(block, params, kept, make), "bmc", 8, tmp_path / "kept")
    assert holds.status == PASS, kept


@pytest.mark.parametrize(("block", "params", "name", "mode", "depth"), CASES)
def test_property_holds(block: str, params: BlockParams, name: str, mode: str, depth: int,
                        tmp_path: Path) -> None:  # fmt: skip
    outcome = run(top(block, params, name), mode, depth, tmp_path)
    assert outcome.status == PASS, outcome.log
    assert outcome.trace is None


@pytest.mark.parametrize(("block", "params", "reached"), [
    ("arbiter", ArbiterParams(4, 4, 0), 3),
    ("squeezer", SqueezerParams(8, 2, 0), 3),
    ("sps_stack", SpsStackParams(4, 3, 8), 4),
    ("stackless", StacklessParams(4, 5, 1, 2), 4),
    ("scoreboard", ScoreboardParams(2, 4, 2, 2, 1, 2), 3),
    ("masked_scoreboard", MaskedScoreboardParams(4, 4, 2, 2, 2, 2), 4),
    ("dual_path_stack", DualPathStackParams(4, 3, 8, Policy.DPS), 4),
    ("split_tables", SplitTablesParams(4, 2, 2, 6, True), 9),
])  # fmt: skip
def test_covers_are_reached(block: str, params: BlockParams, reached: int, tmp_path: Path
                            ) -> None:  # fmt: skip
    """Every cover statement of the block is reached (one trace may reach several at once)."""
    outcome = run(top(block, params, COVERS), "cover", DEPTH, tmp_path)
    assert outcome.status == PASS, outcome.log
    statements = set(re.findall(r"Reached cover statement .*\((\S+)\)", outcome.log))
    assert len(statements) == reached, outcome.log
    assert list((tmp_path / "cover" / "engine_0").glob("trace*.vcd"))


class _TieToLowerInput(Arbiter):
    """A broken arbiter: on equal keys only the lower input is selected."""

    def _merge(self, m, level, i, a, b):  # type: ignore[no-untyped-def]
        (va, ka, _), (vb, kb, mb) = a, b
        return super()._merge(m, level, i, a, (vb & ~(va & (ka == kb)), kb, mb))


def test_a_broken_arbiter_is_refuted_with_a_trace(tmp_path: Path) -> None:
    """The tie-breaking bug breaks the winning group (two inputs on the minimum, only one in
    the mask) but not the winner's key: the checker finds the first, not the second."""
    params = ArbiterParams(4, 4, 0)
    refuted(run(top("arbiter", params, "mask_is_the_winning_group", _TieToLowerInput), "bmc",
                DEPTH, tmp_path / "mask"), "mask", "min_key")  # fmt: skip
    kept = run(top("arbiter", params, "winner_is_the_minimum", _TieToLowerInput), "prove",
               DEPTH, tmp_path / "winner")  # fmt: skip
    assert kept.status == PASS


class _KeepsTheSource(Squeezer):
    """A broken squeezer: a thread moved into a hole stays in the slot it came from too."""

    @staticmethod
    def _fill(m: Module, lane: int, i: int, occ: list[Value], src: list[Value]
              ) -> tuple[list[Value], list[Value]]:  # fmt: skip
        filled, sources = Squeezer._fill(m, lane, i, occ, src)
        return [*filled[: i + 1], *occ[i + 1 :]], sources


class _FillsOnlyTheFirst(Squeezer):
    """A broken squeezer: only recipient #0 takes threads (Sec 4.1 repeats with #1, #2, ...)."""

    @staticmethod
    def _fill(m: Module, lane: int, i: int, occ: list[Value], src: list[Value]
              ) -> tuple[list[Value], list[Value]]:  # fmt: skip
        return Squeezer._fill(m, lane, i, occ, src) if i == 0 else (occ, src)


def test_a_squeezer_that_duplicates_a_thread_is_refuted(tmp_path: Path) -> None:
    params = SqueezerParams(4, 2, 0)
    refuted(run(top("squeezer", params, "threads_kept_once", _KeepsTheSource), "bmc", DEPTH,
                tmp_path), "squeezed__mask", "squeezed__src")  # fmt: skip


def test_a_squeezer_that_stops_after_the_first_recipient_is_refuted(tmp_path: Path) -> None:
    """With four quarters, filling only #0 keeps every thread once in its lane but can leave
    three quarters where two suffice: only the minimum-passes rule fails."""
    params = SqueezerParams(8, 2, 0)
    refuted(run(top("squeezer", params, "passes_are_the_minimum", _FillsOnlyTheFirst), "bmc",
                DEPTH, tmp_path / "passes"), "squeezed__passes", "warp__mask")  # fmt: skip
    for name in ("threads_kept_once", "slots_hold_active_threads"):
        kept = run(top("squeezer", params, name, _FillsOnlyTheFirst), "prove", DEPTH,
                   tmp_path / name)  # fmt: skip
        assert kept.status == PASS, name


class _OverflowsOneLate(SpsStack):
    """A broken SPS stack: it takes one push more than it has entries for."""

    def too_deep(self, base: Value, pushes: Value) -> Value:
        return base + pushes > self.params.stack_depth + 1


@pytest.mark.parametrize(("depth", "rule"), [
    (3, "bottom_holds_the_live_threads"),  # the stack pointer wraps to 0: the warp is gone
    (4, "depth_within_bound"),  # five entries in a stack of four
])  # fmt: skip
def test_an_sps_stack_that_overflows_silently_is_refuted(depth: int, rule: str, tmp_path: Path
                                                         ) -> None:  # fmt: skip
    params = SpsStackParams(4, depth, 8)
    refuted(run(top("sps_stack", params, rule, _OverflowsOneLate), "bmc", 10, tmp_path),
            "sp", "live_threads", "overflow_flag")  # fmt: skip


class _OnlyTheSplitContinues(Stackless):
    """A broken stack-less control: only the split's own threads form the next split, so the
    threads waiting at that PC never rejoin (seed 000 Table 2, cycle 6)."""

    def joining(self, runnable: Value, keys: list[Value], common: Value) -> Value:
        return super().joining(runnable & self.active, keys, common)


def test_a_stackless_control_that_never_rejoins_is_refuted(tmp_path: Path) -> None:
    """The split is then not all the runnable threads at the lowest PC; the tree's grant, which
    the bug does not touch, still holds."""
    params = StacklessParams(4, 5, 1, 2)
    refuted(run(top("stackless", params, "active_is_the_minimum", _OnlyTheSplitContinues),
                "bmc", 10, tmp_path / "minimum"), "active_q", "splits__mask")  # fmt: skip
    kept = run(top("stackless", params, "tree_is_the_lsus_when_free", _OnlyTheSplitContinues),
               "bmc", 10, tmp_path / "tree")  # fmt: skip
    assert kept.status == PASS


class _LosesTheIncomingsRelease(MaskedScoreboard):
    """A broken masked table: a write-back that comes while its reservation waits in the
    incoming register is lost, so the entry the reservation takes is never freed (a leak)."""

    def _written_back(self, m: Module, name: str, warp: Value, reg: Value, held: Value
                      ) -> tuple[Value, Value | None]:  # fmt: skip
        valid, after = super()._written_back(m, name, warp, reg, held)
        return (held.any(), held) if name == "incoming" else (valid, after)


class _ClearsTheWholeEntry(MaskedScoreboard):
    """A broken masked table: a write-back frees its register's entry whatever lanes it
    names (the plain table's release): the lanes of a parallel path still pending are lost."""

    def _written_back(self, m: Module, name: str, warp: Value, reg: Value, held: Value
                      ) -> tuple[Value, Value | None]:  # fmt: skip
        valid, after = super()._written_back(m, name, warp, reg, held)
        assert after is not None
        if not name.startswith("w"):
            return valid, after
        kept = Mux(after != held, 0, after)
        return kept.any(), kept


class _FullIgnoresTheIncoming(Scoreboard):
    """A broken plain table: ``full`` counts only the table's free entries, not the one the
    incoming reservation takes at the next clock edge."""

    def _lookup(self, m: Module, p: int, chosen: list[Any], incoming: Any, takes: Value
                ) -> None:  # fmt: skip
        super()._lookup(m, p, chosen, incoming, Const(0))


MASKED = MaskedScoreboardParams(4, 4, 2, 2, 2, 2)


@pytest.mark.parametrize(("make", "rule"), [
    (_LosesTheIncomingsRelease, "entries_are_the_reservations"),
    (_LosesTheIncomingsRelease, "dependency_mask_is_the_pending_writes"),
    (_ClearsTheWholeEntry, "dependency_mask_is_the_pending_writes"),
])  # fmt: skip
def test_a_scoreboard_that_loses_a_write_is_refuted(make: Callable[..., Any], rule: str,
                                                    tmp_path: Path) -> None:  # fmt: skip
    """A leaked entry keeps its register pending (and stops lookups forever); a write-back
    that frees every lane releases a parallel path's register too early."""
    refuted(run(top("masked_scoreboard", MASKED, rule, make), "bmc", 8, tmp_path),
            "lookup__dep_mask", "writeback__mask", "incoming_mask")  # fmt: skip


def test_a_scoreboard_whose_full_misses_the_incoming_entry_is_refuted(tmp_path: Path) -> None:
    """Two reservations in a row into a set of two entries, a third lookup not ``full``: the
    checker finds it; the dependency mask, which the bug does not touch, still holds (by bmc:
    alone, without the table's invariant, its induction does not close)."""
    params = ScoreboardParams(2, 4, 2, 2, 1, 2)
    refuted(run(top("scoreboard", params, "full_is_a_set_without_a_free_entry",
                    _FullIgnoresTheIncoming), "bmc", 8, tmp_path / "full"),
            "lookup__full", "incoming_valid")  # fmt: skip
    kept = run(top("scoreboard", params, "dependency_mask_is_the_pending_writes",
                   _FullIgnoresTheIncoming), "bmc", 8, tmp_path / "dep")  # fmt: skip
    assert kept.status == PASS


class _DualOverflowsOneLate(DualPathStack):
    """A broken dual-path stack: it takes one push more than it has entries for."""

    def too_deep(self, sp: Value, pushing: Value) -> Value:
        return pushing & (sp > self.params.stack_depth)


class _ExitsOnlyTheTop(DualPathStack):
    """A broken dual-path stack: exited threads leave the top entry only, so a suspended path
    below keeps them and runs them again once it resumes."""

    def _without(self, e: EntryBits, lanes: Value) -> EntryBits:  # type: ignore[override]
        return DualPathStack._without(e, lanes) if e is self.top else e


class _SecondPathTakesTheFirst(DualPathStack):
    """A broken dual-path stack: a pushed entry's second path holds the first's threads too."""

    def _pushed(self, m: Module, u: Any, top: EntryBits, rpc: Value) -> EntryBits:
        e = super()._pushed(m, u, top, rpc)
        p0, p1 = e.paths
        return replace(e, paths=(p0, replace(p1, mask=p1.mask | p0.mask)))


DPS = DualPathStackParams(4, 3, 8, Policy.DPS)


@pytest.mark.parametrize(("make", "rule", "kept"), [
    (_DualOverflowsOneLate, "bottom_holds_the_live_threads", "paths_are_disjoint"),
    (_ExitsOnlyTheTop, "bottom_holds_the_live_threads", "paths_are_disjoint"),
    (_SecondPathTakesTheFirst, "paths_are_disjoint", "entries_nest"),
])  # fmt: skip
def test_a_broken_dual_path_stack_is_refuted(make: Callable[..., Any], rule: str, kept: str,
                                             tmp_path: Path) -> None:  # fmt: skip
    """An overflow one push late loses the warp (the pointer wraps), an exit that stays in a
    suspended path and a path pushed with its sibling's threads each break the rule they are
    about, and leave ``kept`` holding (to the same depth)."""
    breaks_only(("dual_path_stack", DPS, make), rule, kept, tmp_path,
                ("sp", "live_threads", "e0_p0_mask"))  # fmt: skip


class _MergesAcrossEntries(SplitTables):
    """A broken OREC: the associative search ignores the R-index, so a split merges with one
    in the same block that reconverges somewhere else."""

    def _same_block(self, s: Any, item: Any) -> list[Value]:
        st = zip(s.st["v"], s.st["bpc"], s.st["mask"], strict=True)
        return [v & (bpc == item.pc) & ~(mask & s.waiting).any() for v, bpc, mask in st]


class _AllocatesFromAFullTable(SplitTables):
    """A broken RT: an update that needs an entry of a full table goes on without one (no
    overflow), its new splits naming entry 0."""

    def _first(self, m: Module, name: str, bits: list[Value]) -> tuple[list[Any], Any]:
        onehot, found = super()._first(m, name, bits)
        return onehot, (Const(1) if name == "rt_free" else found)


class _DropsTheParked(SplitTables):
    """A broken RT: an entry whose pending mask is zero is dropped, not moved back, so the
    threads parked at it are lost."""

    def _vanish(self, s: Any) -> Any:
        out = super()._vanish(s)
        out.rt["v"] = [v & (pend != 0) for v, pend in zip(s.rt["v"], s.rt["pend"], strict=True)]
        return out


MP = SplitTablesParams(4, 2, 2, 6, True)


@pytest.mark.parametrize(("make", "rule", "kept"), [
    (_MergesAcrossEntries, "orec_merges_only_at_the_same_pc_and_entry",
     "splits_partition_the_live_threads"),
    (_AllocatesFromAFullTable, "overflow_is_a_full_table", "splits_partition_the_live_threads"),
    (_AllocatesFromAFullTable, "pending_holds_its_splits", "splits_partition_the_live_threads"),
    (_DropsTheParked, "splits_partition_the_live_threads", "pending_holds_its_splits"),
])  # fmt: skip
def test_broken_split_tables_are_refuted(make: Callable[..., Any], rule: str, kept: str,
                                         tmp_path: Path) -> None:  # fmt: skip
    """A merge across reconvergence entries, an allocation from a full RT and an entry dropped
    with threads parked at it each break the rule they are about, and leave ``kept`` holding
    (to the same depth)."""
    breaks_only(("split_tables", MP, make), rule, kept, tmp_path, ("st0_mask", "rt0_pend", "live"))


# -- the SM's bookkeeping (hdl/formal/sm.py) --------------------------------------------------
#: The SM checks here: bmc to this depth (make formal: ``sm.DEPTH``), one stack and the tables.
SM_DEPTH = 12


@pytest.mark.parametrize("variant", ["sps", "mp-orec"])
def test_the_sm_keeps_its_bookkeeping(variant: str, tmp_path: Path) -> None:
    """Over free control code, the SM keeps its divergence block's contract and rules and its
    own bookkeeping rules, to ``SM_DEPTH`` cycles."""
    outcome = run(sm.harnesses(sm.SMCheckParams(variant))[JOINT](), "bmc", SM_DEPTH, tmp_path)
    assert outcome.status == PASS, outcome.log


def test_the_sm_covers_are_reached(tmp_path: Path) -> None:
    """A divergence, an exit while a thread runs on, a barrier release, a second block in the
    slot, the end of the run and a fault are reachable."""
    outcome = run(sm.harnesses(sm.SMCheckParams("sps"))[COVERS](), "cover", 16, tmp_path)
    assert outcome.status == PASS, outcome.log
    assert len(set(re.findall(r"Reached cover statement .*\((\S+)\)", outcome.log))) == 6


class _KeepsExitedThreadsLive(DivergenceUnit):
    """A broken unit: its live threads are the warp's launched ones, exits or not (the warp
    would never retire)."""

    def _status(self, m: Module, busy: Value, overflow: Value, live: Value, waiting: Value
                ) -> None:  # fmt: skip
        launched = Signal(len(live), name="broken_launched")
        with m.If(self.launch.valid):
            m.d.sync += launched.eq(self.launch.mask)
        super()._status(m, busy, overflow, live | launched, waiting)


class _ForgetsThreadZero(DivergenceUnit):
    """A broken unit: it reports thread 0 as never live."""

    def _status(self, m: Module, busy: Value, overflow: Value, live: Value, waiting: Value
                ) -> None:  # fmt: skip
        super()._status(m, busy, overflow, live & ~Const(1, len(live)), waiting)


class _DropsTheSecondGroup(DivergenceUnit):
    """A broken unit: a divergence's second target group never reaches the stack, its threads
    lost."""

    def _targets(self, m: Module, block: Any, stage: Any, high: Value) -> None:
        super()._targets(m, block, stage, high)
        m.d.comb += block.outcome.target_mask[1].eq(0)


def failed_in(outcome: Outcome, rule: Callable[..., Any]) -> bool:
    """The assertion the counterexample fails is one of ``rule``'s statements."""
    found = re.search(r"failed assertion \S+ at (\S+):(\d+)", outcome.log)
    assert found, outcome.log
    lines, first = inspect.getsourcelines(rule)
    path, line = Path(found.group(1)), int(found.group(2))
    return path == Path(inspect.getfile(rule)) and first <= line < first + len(lines)


@pytest.mark.parametrize(("make", "rule"), [
    (_KeepsExitedThreadsLive, sm.an_exited_thread_leaves_its_warp),
    (_ForgetsThreadZero, sm.no_live_thread_is_lost),
    (_DropsTheSecondGroup, outcome_partitions),
])  # fmt: skip
def test_a_broken_sm_is_refuted(make: Callable[..., Any], rule: Callable[..., Any],
                                tmp_path: Path) -> None:  # fmt: skip
    """An SM whose unit keeps exited threads live, forgets a thread, or drops a target group
    breaks the rule it is about (the contract's partition of a split for the last), with a
    trace."""
    outcome = run(sm.harnesses(sm.SMCheckParams("sps"), make)[JOINT](), "bmc", SM_DEPTH, tmp_path)
    refuted(outcome, "ghost_live", "ghost_exited")
    assert failed_in(outcome, rule), outcome.log
