"""The arbiter tree's properties (seed 000 Sec 4.1-4.3, Fig 4b; ``hdl/blocks/arbiter.py``), over
free ``valid`` and ``key`` inputs. With ``pipeline_every > 0`` the outputs answer the inputs of
``latency`` cycles before: the harness delays the inputs through registers that reset to zero
as the tree's stage registers do (an idle tree), so each property compares the outputs with
the delayed inputs in every cycle.

* ``winner_is_the_minimum``: some valid input exists exactly when ``out_valid``; then
  ``min_key`` is no larger than any valid input's key and some valid input holds it (Sec 4.1:
  the common PC is the minimum of the threads' SP:PC).
* ``mask_is_the_winning_group``: ``mask`` is exactly the valid inputs whose key is the minimum
  (Sec 4.2: in memory mode the threads on the winning line, which coalesce; in PC mode the
  threads that run).
* ``idle_gives_nothing``: with no valid input, no winner, a zero key and an empty mask.

Covers: a tie (two inputs hold the minimum), a winner above input 0 below a larger valid input,
an idle tree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from amaranth.hdl import Assert, Cat, Cover, Module, Value

from reconverge.golden.blocks.arbiter import ArbiterParams
from reconverge.hdl.blocks.arbiter import Arbiter
from reconverge.hdl.formal.check import Harness, delayed
from reconverge.hdl.formal.check import harnesses as block_harnesses


@dataclass(frozen=True)
class Seen:
    """What a rule reads: the tree, the inputs its outputs answer (``latency`` cycles ago) and
    which of them hold the winner's key."""

    dut: Arbiter
    valid: Value
    keys: list[Value]
    held: list[Value]


def winner_is_the_minimum(m: Module, s: Seen) -> None:
    m.d.comb += Assert(s.dut.out_valid == s.valid.any())
    for i, key in enumerate(s.keys):
        with m.If(s.valid[i]):
            m.d.comb += Assert(s.dut.min_key <= key)
    with m.If(s.dut.out_valid):
        m.d.comb += Assert(Cat(*s.held).any())


def mask_is_the_winning_group(m: Module, s: Seen) -> None:
    m.d.comb += Assert(s.dut.mask == Cat(*s.held))


def idle_gives_nothing(m: Module, s: Seen) -> None:
    with m.If(~s.valid.any()):
        m.d.comb += Assert(~s.dut.out_valid & (s.dut.min_key == 0) & (s.dut.mask == 0))


PROPERTIES: dict[str, tuple[Callable[[Module, Seen], None], str]] = {
    "winner_is_the_minimum": (winner_is_the_minimum, "seed 000 Sec 4.1"),
    "mask_is_the_winning_group": (mask_is_the_winning_group, "seed 000 Sec 4.2"),
    "idle_gives_nothing": (idle_gives_nothing, "seed 000 Sec 4.1"),
}


def covers(m: Module, s: Seen) -> None:
    n = len(s.keys)
    ties = [s.held[i] & s.held[j] for i in range(n) for j in range(i + 1, n)]
    m.d.comb += Cover(Cat(*ties).any())
    if n > 1:
        above = [s.held[i] & s.valid[0] & (s.keys[0] > s.dut.min_key) for i in range(1, n)]
        m.d.comb += Cover(Cat(*above).any())
    m.d.comb += Cover(~s.valid.any())


def harnesses(
    params: ArbiterParams, make: Callable[[ArbiterParams], Arbiter] = Arbiter
) -> dict[str, Callable[[], Harness]]:
    """Per property, and for the covers, what builds its formal top; ``make`` builds the block
    (a broken variant, in the tests)."""

    def setup(m: Module) -> tuple[Seen, Sequence[Value]]:
        m.submodules.dut = dut = make(params)
        valid, *keys = delayed(m, [dut.valid, *(dut.key[i] for i in range(params.n))],
                               params.latency)  # fmt: skip
        held = [valid[i] & (key == dut.min_key) for i, key in enumerate(keys)]
        return Seen(dut, valid, keys, held), (dut.valid, dut.key, dut.out_valid, dut.min_key,
                                              dut.mask)  # fmt: skip

    rules = {name: rule for name, (rule, _) in PROPERTIES.items()}
    return block_harnesses(setup, rules, covers)
