"""Dynamic soundness check of the affine divergence analysis on the golden model.

The compiled program records, for every instruction that defines a value, the register it
writes and the value's abstract state (:class:`~launch.ValueCheck`). Running the program on the
golden functional model with an observer, every executed definition is checked against its
state for the threads that executed it together (the active threads of seed 004's Definition
2): a value called uniform must hold one value across them; a value called ``Σ a_i T^i`` must
equal that polynomial of their thread indices modulo 2**32, each ``⊥`` coefficient standing for
one value common to those threads. A divergent state claims nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from reconverge.golden.compiler.affine import BOT, State
from reconverge.golden.compiler.launch import Launch, ValueCheck
from reconverge.golden.functional import LaunchConfig, RunResult, run

MOD = 1 << 32


@dataclass(frozen=True)
class Violation:
    """A definition whose values contradict the analysis, or a branch called uniform whose
    threads went different ways (``check`` is None; ``values`` are then empty)."""

    pc: int
    check: ValueCheck | None
    block: int
    warp: int
    tids: tuple[int, ...]
    values: tuple[int, ...]

    def __str__(self) -> str:
        if self.check is None:
            return (
                f"pc {self.pc:#010x}: branch called uniform diverged in block {self.block} "
                f"warp {self.warp} (threads {', '.join(map(str, self.tids))})"
            )
        pairs = ", ".join(f"T={t}: {v}" for t, v in zip(self.tids, self.values, strict=True))
        return (
            f"pc {self.pc:#010x} ({self.check.function}): {self.check.name} claimed "
            f"{self.check.state} but block {self.block} warp {self.warp} computed {pairs}"
        )


def _valuation(x: int) -> int:
    return (x & -x).bit_length() - 1 if x else 32


def _slope_exists(ts: Sequence[int], rs: Sequence[int]) -> bool:
    """Whether one ``a`` satisfies ``a * t = r (mod 2**32)`` for every pair."""
    nonzero = [(t % MOD, r % MOD) for t, r in zip(ts, rs, strict=True)]
    if any(t == 0 and r != 0 for t, r in nonzero):
        return False
    pivots = [(t, r) for t, r in nonzero if t]
    if not pivots:
        return True
    t0, r0 = min(pivots, key=lambda p: _valuation(p[0]))
    g = 1 << _valuation(t0)
    if r0 % g:
        return False
    modulus = MOD // g
    base = (r0 // g) * pow(t0 // g, -1, modulus) % modulus if modulus > 1 else 0
    return any(
        all((a * t - r) % MOD == 0 for t, r in nonzero)
        for a in (base + k * modulus for k in range(g))
    )


def holds(state: State, tids: Sequence[int], values: Sequence[int]) -> bool:
    """Whether ``values`` (one per thread index in ``tids``) are consistent with ``state``."""
    coefs = state.coefs
    if state.is_top or not isinstance(coefs[0], int):
        return True  # divergent (or never computed): no claim
    residual = list(values)
    unknown: set[int] = set()
    for power, c in zip(range(state.degree, -1, -1), coefs, strict=True):
        if c is BOT:
            unknown.add(power)
        else:
            residual = [(r - c * t**power) % MOD for r, t in zip(residual, tids, strict=True)]
    if not unknown:
        return all(r % MOD == 0 for r in residual)
    if unknown == {0}:
        return len({r % MOD for r in residual}) == 1
    if unknown == {1}:
        return _slope_exists(tids, residual)
    # {0, 1}: differences from the first thread remove the common offset.
    t0, r0 = tids[0], residual[0]
    return _slope_exists([t - t0 for t in tids], [r - r0 for r in residual])


class SoundnessObserver:
    """An observer for :func:`reconverge.golden.functional.run` that collects violations.

    Branches are checked too: after a branch called uniform, the first instruction the warp
    issues for any of the branch's threads must be issued for all of them (threads at one
    SP:PC issue together in the golden model, so a split shows there)."""

    def __init__(self, launch: Launch, warp_size: int) -> None:
        self.checks = launch.program.checks
        self.uniform_branches = {b.pc for b in launch.program.branches if b.uniform}
        self.warp_size = warp_size
        self.violations: list[Violation] = []
        self.checked = 0
        self.pending: dict[tuple[int, int], tuple[int, frozenset[int]]] = {}

    def _branch(self, block: int, warp: int, pc: int, lanes: np.ndarray) -> None:
        key = (block, warp)
        executed = frozenset(int(x) for x in lanes)
        if key in self.pending:
            branch_pc, before = self.pending[key]
            if before & executed:
                del self.pending[key]
                self.checked += 1
                if not before <= executed:
                    tids = tuple(sorted(warp * self.warp_size + x for x in before))
                    self.violations.append(Violation(branch_pc, None, block, warp, tids, ()))
        if pc in self.uniform_branches:
            self.pending[key] = (pc, executed)

    def __call__(self, block: int, warp: int, pc: int, lanes: np.ndarray, regs: np.ndarray) -> None:
        self._branch(block, warp, pc, lanes)
        checks = self.checks.get(pc)
        if not checks:
            return
        tids = [warp * self.warp_size + int(lane) for lane in lanes]
        for check in checks:
            values = [int(x) for x in regs[lanes, check.reg]]
            self.checked += 1
            if not holds(check.state, tids, values):
                self.violations.append(
                    Violation(pc, check, block, warp, tuple(tids), tuple(values))
                )


def check(launch: Launch, config: LaunchConfig) -> tuple[RunResult, list[Violation], int]:
    """Run ``launch`` on the golden functional model, checking every executed definition;
    returns the run, the violations and the number of checks made."""
    observer = SoundnessObserver(launch, config.geometry.warp_size)
    result = run(launch.image, config, observer)
    return result, observer.violations, observer.checked
