"""The divergence analysis with affine constraints rule by rule (seed 004 Fig 3.8, degree 1:
states ``(a1, a0)`` for ``a1*T + a0``): one small kernel per rule, or per side of a rule, and
the state the rule gives the value it defines. The worked examples (Fig 2.2, Fig 3.10) use only
some of the rules, and none of them tells a gamma with a uniform *and* a divergent predicate
from one whose predicates are all divergent: PDVA must make it divergent as soon as one is not
uniform."""

from __future__ import annotations

import textwrap

import pytest

from reconverge.golden.compiler import kernels_from_source
from reconverge.golden.compiler.affine import BOT
from reconverge.golden.compiler.analysis import analyse_kernel
from reconverge.golden.tests.compiler.helpers import version

B = BOT
PRELUDE = "from reconverge.golden.compiler import *\n\n\n"

LOOP_EXITS = """\
x = 0
while x < 10:
    if n > x:
        break
    if {cond}:
        break
    x = x + 1"""

#: (rule, kernel body defining x, which definition of x (None: an ordinary instruction,
#: "gamma", "eta", "mu"), its degree-1 state (a1, a0)). ``n`` is a uniform parameter.
RULES = [
    ("TIDA", "x = 3 * tid()", None, (3, 0)),
    ("CNTA+SUMA", "x = tid() + 7", None, (1, 7)),
    ("ASGA", "y = tid() * 2 + n\nx = y", None, (2, B)),
    ("ATMA", "x = atomic_add(out, 0, 1)", None, (B, B)),
    ("GUZA", "x = not n", None, (0, B)),
    ("GUNA", "x = not tid()", None, (B, B)),
    ("LDUA", "x = out[n]", None, (0, B)),
    ("LDDA", "x = out[tid()]", None, (B, B)),
    ("SUMA uniform", "x = n + n", None, (0, B)),
    ("SUMA affine", "x = (tid() + n) + (2 * tid())", None, (3, B)),
    ("SUMA cancels", "x = (tid() + n) - tid()", None, (0, B)),
    ("SUMA divergent", "x = out[tid()] + tid()", None, (B, B)),
    ("MLCA", "x = (tid() + 1) * 4", None, (4, 4)),
    ("MLCA by zero", "x = (tid() + 1) * 0", None, (0, 0)),
    ("MLVA", "x = (tid() + 1) * (tid() + 2)", None, (B, B)),
    ("GBZA", "x = n & 6", None, (0, B)),
    ("GBZA constant", "x = (tid() - tid()) | 6", None, (0, 6)),
    ("GBNA", "x = tid() & n", None, (B, B)),
    ("GAMA", "x = tid()\nif n > 0:\n    x = tid() + 5", "gamma", (1, B)),
    ("GAMA equal", "x = 2 * tid()\nif n > 0:\n    x = tid() + tid()", "gamma", (2, 0)),
    ("PDVA gamma", "x = 1\nif tid() > 2:\n    x = 2", "gamma", (B, B)),
    # a short-circuit condition joins paths under two predicates: one gamma, two predicates
    (
        "PDVA gamma, one of two predicates divergent",
        "x = 1\nif n > 0 and tid() > 2:\n    x = 2",
        "gamma",
        (B, B),
    ),
    (
        "PDVA gamma, the other predicate divergent",
        "x = 1\nif tid() > 2 or n > 0:\n    x = 2",
        "gamma",
        (B, B),
    ),
    ("GAMA, both predicates uniform", "x = 1\nif n > 0 and n < 9:\n    x = 2", "gamma", (0, B)),
    ("RMUA", "x = 0\nwhile x < n:\n    x = x + 1", "mu", (0, B)),
    ("RMUA affine", "x = tid()\nwhile n > x - tid():\n    x = x + 1", "mu", (1, B)),
    ("ETAA", "x = 0\nwhile x < n:\n    x = x + 1", "eta", (0, B)),
    ("PDVA eta", "x = 0\nwhile x < tid():\n    x = x + 1", "eta", (B, B)),
    # a loop with three exits: one eta, three predicates
    (
        "PDVA eta, one of three predicates divergent",
        LOOP_EXITS.format(cond="tid() > x"),
        "eta",
        (B, B),
    ),
    ("ETAA, three uniform predicates", LOOP_EXITS.format(cond="n + 1 > x"), "eta", (0, B)),
]


def state_of(body: str, gsa: str | None) -> tuple:
    text = (
        PRELUDE
        + "@kernel\ndef k(out: Array, n: int):\n"
        + textwrap.indent(body + "\nout[tid()] = x\n", "    ")
    )
    fa = analyse_kernel(kernels_from_source(text, f"<rule {abs(hash(text))}>")["k"]).kernel
    x = version(fa, "x", gsa)
    return fa.affine[1][x].coefs


@pytest.mark.parametrize(("rule", "body", "gsa", "state"), RULES, ids=[r[0] for r in RULES])
def test_each_rule_of_fig_3_8(rule: str, body: str, gsa: str | None, state: tuple) -> None:
    assert state_of(body, gsa) == state
