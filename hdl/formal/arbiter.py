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
from functools import partial

from amaranth.hdl import Assert, Cat, ClockDomain, Cover, Module, Signal, Value

from reconverge.golden.blocks.arbiter import ArbiterParams
from reconverge.hdl.blocks.arbiter import Arbiter
from reconverge.hdl.formal.check import Harness, harness

Rule = Callable[[Module, Value, list[Value], list[Value], Arbiter], None]


def _delayed(m: Module, params: ArbiterParams, dut: Arbiter) -> tuple[Value, list[Value]]:
    """The ``valid`` bits and keys the outputs answer: the inputs ``latency`` cycles ago."""
    valid: Value = dut.valid
    keys: list[Value] = [dut.key[i] for i in range(params.n)]
    for stage in range(params.latency):
        v = Signal(params.n, name=f"valid_d{stage + 1}")
        ks = [Signal(params.key_width, name=f"key{i}_d{stage + 1}") for i in range(params.n)]
        m.d.sync += [v.eq(valid), *(k.eq(src) for k, src in zip(ks, keys, strict=True))]
        valid, keys = v, ks
    return valid, keys


def winner_is_the_minimum(
    m: Module, valid: Value, keys: list[Value], held: list[Value], dut: Arbiter
) -> None:
    m.d.comb += Assert(dut.out_valid == valid.any())
    for i, key in enumerate(keys):
        with m.If(valid[i]):
            m.d.comb += Assert(dut.min_key <= key)
    with m.If(dut.out_valid):
        m.d.comb += Assert(Cat(*held).any())


def mask_is_the_winning_group(
    m: Module, valid: Value, keys: list[Value], held: list[Value], dut: Arbiter
) -> None:
    m.d.comb += Assert(dut.mask == Cat(*held))


def idle_gives_nothing(
    m: Module, valid: Value, keys: list[Value], held: list[Value], dut: Arbiter
) -> None:
    with m.If(~valid.any()):
        m.d.comb += Assert(~dut.out_valid & (dut.min_key == 0) & (dut.mask == 0))


PROPERTIES: dict[str, tuple[Rule, str]] = {
    "winner_is_the_minimum": (winner_is_the_minimum, "seed 000 Sec 4.1"),
    "mask_is_the_winning_group": (mask_is_the_winning_group, "seed 000 Sec 4.2"),
    "idle_gives_nothing": (idle_gives_nothing, "seed 000 Sec 4.1"),
}


def harnesses(
    params: ArbiterParams, make: Callable[[ArbiterParams], Arbiter] = Arbiter
) -> dict[str, Callable[[], Harness]]:
    """Per property, and for the covers (``covers``), what builds its formal top; ``make``
    builds the block (a broken variant, in the tests)."""

    def top(rule: Rule | None) -> Callable[[Module, ClockDomain], Sequence[Value]]:
        def build(m: Module, domain: ClockDomain) -> Sequence[Value]:
            m.submodules.dut = dut = make(params)
            valid, keys = _delayed(m, params, dut)
            held = [valid[i] & (key == dut.min_key) for i, key in enumerate(keys)]
            if rule is None:
                _covers(m, valid, keys, held, dut)
            else:
                rule(m, valid, keys, held, dut)
            return [Value.cast(p) for p in (dut.valid, dut.key, dut.out_valid, dut.min_key,
                                            dut.mask)]  # fmt: skip

        return build

    rules: dict[str, Rule | None] = {name: rule for name, (rule, _) in PROPERTIES.items()}
    rules["covers"] = None
    return {name: partial(harness, name, top(rule)) for name, rule in rules.items()}


def _covers(m: Module, valid: Value, keys: list[Value], held: list[Value], dut: Arbiter) -> None:
    n = len(keys)
    ties = [held[i] & held[j] for i in range(n) for j in range(i + 1, n)]
    m.d.comb += Cover(Cat(*ties).any())
    if n > 1:
        above = [held[i] & valid[0] & (keys[0] > dut.min_key) for i in range(1, n)]
        m.d.comb += Cover(Cat(*above).any())
    m.d.comb += Cover(~valid.any())
