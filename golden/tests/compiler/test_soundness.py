"""The dynamic soundness check itself: what a state claims, that the check catches a false
claim, and the one known limitation of Sec 3.5 under int32 wrap-around."""

from __future__ import annotations

import dataclasses

import numpy as np

from reconverge.golden.compiler import compile_kernel, kernels_from_source, soundness
from reconverge.golden.compiler.affine import BOT, State
from reconverge.golden.functional import run
from reconverge.golden.geometry import Geometry
from reconverge.kernels import avg_square

B = BOT


def test_holds_for_each_kind_of_claim() -> None:
    tids = [4, 5, 6, 7]
    assert soundness.holds(State((0, 0, 7)), tids, [7, 7, 7, 7])
    assert not soundness.holds(State((0, 0, 7)), tids, [7, 7, 7, 8])
    assert soundness.holds(State((0, 0, B)), tids, [9, 9, 9, 9])
    assert not soundness.holds(State((0, 0, B)), tids, [9, 9, 9, 1])
    assert soundness.holds(State((0, 3, 1)), tids, [13, 16, 19, 22])
    assert soundness.holds(State((0, 3, B)), tids, [113, 116, 119, 122])
    assert not soundness.holds(State((0, 3, B)), tids, [113, 116, 119, 123])
    assert soundness.holds(State((0, B, 0)), tids, [20, 25, 30, 35])  # 5*T, slope unknown
    assert not soundness.holds(State((0, B, 0)), tids, [21, 26, 31, 36])
    assert soundness.holds(State((0, B, B)), tids, [21, 26, 31, 36])
    assert soundness.holds(State((1, 0, 0)), tids, [16, 25, 36, 49])
    assert soundness.holds(State((B, B, B)), tids, [1, 2, 3, 4])  # divergent: no claim
    # modulo 2**32: a slope of 2**31 with even thread indices is 0
    assert soundness.holds(State((0, B, 0)), [0, 2], [0, 0])
    assert soundness.holds(State((0, B, 1)), [2, 4], [(1 << 31) + 1, 1])


def test_a_false_claim_is_caught() -> None:
    program = compile_kernel(avg_square.avgSquare, "linear", 16)
    # Claim that every value defined by `csrr ..., tid` is uniform: it is not.
    pcs = [pc for pc, cs in program.checks.items() if any(c.state == State.tid(2) for c in cs)]
    wrong = {
        pc: tuple(dataclasses.replace(c, state=State.uniform(2)) for c in cs)
        for pc, cs in program.checks.items()
        if pc in pcs
    }
    program = dataclasses.replace(program, checks={**program.checks, **wrong})
    case = avg_square.SPEC.case()
    launch = program.bind(**case.args)
    _, violations, _ = soundness.check(
        launch, launch.config(1, case.block, geometry=Geometry(4, 4))
    )
    assert violations and all(v.pc in pcs for v in violations)


WRAP = """\
from reconverge.golden.compiler import Array, kernel, tid


@kernel
def wrap(out: Array, big: int):
    i = tid() + big
    n = tid()
    if i < n:
        out[tid()] = 1
"""


def test_ordered_comparison_of_affine_values_assumes_no_wraparound() -> None:
    """Sec 3.5 calls ``i < n`` uniform because ``i - n = 0T + big`` is; over int32 the
    threads whose ``i`` wraps past 2**31 - 1 compare differently (docs/compiler.md,
    "Soundness"). The check reports the branch; the results stay right (hints never change
    what a program computes)."""
    k = kernels_from_source(WRAP, "<wrap>")["wrap"]
    program = compile_kernel(k, "linear", 8)
    assert [b.uniform for b in program.branches] == [True]
    launch = program.bind(out=np.zeros(4, np.int32), big=0x7FFF_FFFE)
    result, violations, _ = soundness.check(launch, launch.config(1, 4, geometry=Geometry(4, 4)))
    assert [str(v).split(":")[0] for v in violations] == [f"pc {program.branches[0].pc:#010x}"]
    assert "branch called uniform diverged" in str(violations[0])
    assert launch.read(result, "out").tolist() == [0, 0, 1, 1]
    # Without the wrap the claim holds.
    launch = program.bind(out=np.zeros(4, np.int32), big=5)
    _, violations, _ = soundness.check(launch, launch.config(1, 4, geometry=Geometry(4, 4)))
    assert not violations


def test_observer_sees_every_warp_instruction() -> None:
    program = compile_kernel(avg_square.avgSquare, "linear", 16)
    case = avg_square.SPEC.case()
    launch = program.bind(**case.args)
    seen = []
    config = launch.config(1, case.block, geometry=Geometry(4, 4))
    result = run(
        launch.image, config, lambda b, w, pc, lanes, regs: seen.append((w, pc, len(lanes)))
    )
    assert len(seen) == result.warp_instructions
    assert sum(n for _, _, n in seen) == int(result.thread_instructions.sum())
