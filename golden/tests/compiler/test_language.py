"""The kernel language's front end: constructs outside the language are errors at
file:line:col naming what to write instead; the oracle runs the language as Python."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from reconverge.golden.compiler import compile_kernel, kernels_from_source, oracle
from reconverge.golden.compiler.errors import LanguageError, OracleError
from reconverge.golden.errors import UserError

PRELUDE = """\
from reconverge.golden.compiler import *


"""
LINE0 = PRELUDE.count("\n")


def build(body: str, extra: str = "", params: str = "out: Array, n: int", name: str = "k"):
    text = (
        PRELUDE
        + extra
        + f"@kernel\ndef {name}({params}):\n"
        + textwrap.indent(textwrap.dedent(body), "    ")
    )
    return kernels_from_source(text, f"<test {abs(hash(text))}>")[name]


def error_of(body: str, **kw) -> LanguageError:
    k = build(body, **kw)
    with pytest.raises(LanguageError) as info:
        compile_kernel(k)
    # The oracle checks the same language.
    with pytest.raises(LanguageError):
        oracle.run(k, {"out": np.zeros(4, np.int32), "n": 1})
    return info.value


CASES = [
    # (body, line in body (1-based), column, fragment of the message)
    ("x = n / 2", 1, 5, "write // for int32 division"),
    ("x = 1.5", 1, 5, "float value is not in the language"),
    ("x = 'a'", 1, 5, "str value"),
    ("for x in out:\n    pass", 1, 10, "range(...) only"),
    ("while n:\n    break\nelse:\n    pass", 1, 1, "while ... else"),
    ("print(n)", 1, 1, "kernels cannot use"),
    ("x = [1, 2]", 1, 5, "List"),
    ("x = y", 1, 5, "name 'y' is not defined"),
    ("out = 3", 1, 1, "array and cannot be assigned"),
    ("return 5", 1, 1, "a kernel returns no value"),
    ("if n:\n    x = 1\nout[0] = x", 3, 1, "'x' may be used before it is assigned"),
    ("if n:\n    b = shared(4)", 2, 9, "top level of the kernel body"),
    ("for i in range(0, n, n):\n    pass", 1, 22, "step of range must be a nonzero constant"),
    ("x = min(a=1, b=2)", 1, 5, "positional arguments only"),
    ("f = lambda: 1", 1, 5, "Lambda"),
    ("try:\n    pass\nexcept Exception:\n    pass", 1, 1, "cannot raise or catch"),
    ("x, y = 1, 2", 1, 1, "unpacking"),
    ("x = n is n", 1, 5, "write ==" if False else "comparison Is"),
    ("x = out[1:2]", 1, 5, "slices"),
    ("x = n ** 2", 1, 5, "no power operator"),
    ("barrier(1)", 1, 1, "takes 0 arguments"),
    ("x = barrier()", 1, 5, "barrier() gives no value"),
    ("x = out", 1, 5, "array 'out' is not a value"),
    ("x = 1 << 40000000000", 1, 10, "does not fit in 32 bits"),
]


@pytest.mark.parametrize(("body", "line", "col", "fragment"), CASES, ids=[c[3] for c in CASES])
def test_outside_the_language_is_an_error_at_its_position(body, line, col, fragment) -> None:
    err = error_of(body)
    assert isinstance(err, UserError)
    assert err.pos is not None
    assert (err.pos.line, err.pos.col) == (LINE0 + 2 + line, 4 + col), str(err)
    assert fragment in str(err)
    assert str(err).startswith(f"{err.pos.file}:{err.pos.line}:{err.pos.col}: ")


def test_device_function_errors() -> None:
    extra = "@device\ndef f(x):\n    if x:\n        return 1\n\n\n"
    err = error_of("out[0] = f(n)", extra=extra)
    assert "can reach its end without returning a value" in str(err)
    extra = "@device\ndef g(x):\n    out = 1\n\n\n"
    err = error_of("x = g(n)", extra=extra)
    assert "returns no value" in str(err)
    extra = "@device\ndef h(a: Array, x):\n    return a[x]\n\n\n"
    err = error_of("x = h(n, n)", extra=extra)
    assert "is not an array" in str(err)
    err = error_of("k(out, n)")
    assert "kernel k cannot be called" in str(err)


def test_too_many_kernel_parameters() -> None:
    params = ", ".join(f"p{i}" for i in range(9))
    k = build("pass", params=params)
    with pytest.raises(LanguageError, match="at most 8 parameters"):
        compile_kernel(k)


def test_calling_kernel_code_directly_is_an_error() -> None:
    k = build("pass")
    with pytest.raises(UserError, match="kernel-language code"):
        k(1, 2)


# -- semantics ---------------------------------------------------------------------------------


def run_both(body: str, n: int = 0, block: int = 4, extra: str = "", words: int = 8):
    """The oracle's and the compiled kernel's ``out`` (one word per thread and more)."""
    from reconverge.golden.functional import run
    from reconverge.golden.geometry import Geometry

    k = build(body, extra=extra)
    args = {"out": np.zeros(words, np.int32), "n": n}
    ref = oracle.run(k, args, block=block, warp_size=4)
    launch = compile_kernel(k, "affine", 5).bind(**args)
    result = run(launch.image, launch.config(1, block, geometry=Geometry(4, 4)))
    result.check()
    return ref["out"], launch.read(result, "out")


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("-7 // 2", -3),  # truncating, as RISC-V div (Python's floor division would give -4)
        ("-7 % 2", -1),
        ("7 // 0", -1),  # RISC-V division by zero
        ("7 % 0", 7),
        ("(-2147483647 - 1) // -1", -2147483648),
        ("2147483647 + 1", -2147483648),  # wrap-around
        ("1 << 33", 2),  # shift amounts modulo 32
        ("-8 >> 1", -4),  # arithmetic shift
        ("(3 < 4) + (4 < 3)", 1),
        ("(0 and 5) + (2 and 5) + (0 or 7)", 12),  # Python's and/or values
        ("not 0", 1),
        ("min(3, -4) + max(3, -4) * 10 + abs(-5) * 100", 526),
        ("(9 if 1 < 2 < 3 else 4)", 9),
    ],
)
def test_int32_semantics_agree_between_oracle_and_compiled_code(expr: str, expected: int) -> None:
    body = f"x = n + ({expr})\nout[tid()] = x"
    ref, got = run_both(body)
    assert ref.tolist()[:4] == [expected] * 4
    assert np.array_equal(ref, got)


def test_for_loop_variable_follows_python() -> None:
    body = """\
    s = 0
    i = 0
    for i in range(5, 0, -2):
        s = s * 10 + i
        i = 100
    out[tid()] = s * 1000 + i
    """
    ref, got = run_both(body)
    assert ref.tolist()[:4] == [531100] * 4
    assert np.array_equal(ref, got)


def test_shared_array_and_barrier() -> None:
    body = """\
    buf = shared(4)
    buf[tid()] = tid() * 10
    barrier()
    out[tid()] = buf[(tid() + 1) % ntid()]
    """
    ref, got = run_both(body)
    assert ref.tolist()[:4] == [10, 20, 30, 0]
    assert np.array_equal(ref, got)


def test_the_language_has_an_atomic_for_every_amo() -> None:
    from reconverge.golden.compiler import lang
    from reconverge.golden.memory import AMO_OPS

    assert [a.name for a in lang.ATOMICS] == [f"atomic_{op}" for op in AMO_OPS]


#: (atomic, expected final out[0] from 0x0f0f0f00 with operands -1, 2, 0x30, 5 of threads 0-3,
#: computed by hand).
ATOMIC_CASES = [
    ("add", 0x0F0F0F00 - 1 + 2 + 0x30 + 5),
    ("and", 0x0F0F0F00 & 2 & 0x30 & 5),
    ("or", 0x0F0F0F00 | -1),
    ("xor", 0x0F0F0F00 ^ -1 ^ 2 ^ 0x30 ^ 5),
    ("min", -1),
    ("max", 0x0F0F0F00),
    ("minu", 2),
    ("maxu", -1),  # 0xffffffff as unsigned
]


@pytest.mark.parametrize(("op", "final"), ATOMIC_CASES)
def test_every_atomic_agrees_between_oracle_and_compiled_code(op: str, final: int) -> None:
    """Four threads of one warp apply ``atomic_OP`` to out[0]; out[1 + t] is the old value
    thread t saw. Both serialise in thread order (the oracle runs the threads in order, the SM
    its lanes in increasing order), so the old values agree too."""
    body = f"""\
    if tid() == 0:
        out[0] = 0x0f0f0f00
    barrier()
    v = 0
    if tid() == 0:
        v = -1
    elif tid() == 1:
        v = 2
    elif tid() == 2:
        v = 0x30
    else:
        v = 5
    out[1 + tid()] = atomic_{op}(out, 0, v)
    """
    ref, got = run_both(body)
    assert ref[0] == got[0] == np.int32(final)
    assert got[1] == 0x0F0F0F00
    assert np.array_equal(ref, got)


ORACLE_ERRORS = [
    ("if tid() == 0:\n    return\nbarrier()", {}, "can never complete"),
    ("out[tid() + 2] = 1", {}, r":\d+: index 4 out of bounds of array out"),
    ("while True:\n    pass", {"step_limit": 1000}, "no completion within 1000"),
]


@pytest.mark.parametrize(("body", "options", "message"), ORACLE_ERRORS)
def test_oracle_reports_run_time_errors(body: str, options: dict, message: str) -> None:
    k = build(body)
    with pytest.raises(OracleError, match=message):
        oracle.run(k, {"out": np.zeros(4, np.int32), "n": 0}, block=4, **options)
    with pytest.raises(OracleError, match="missing argument"):
        oracle.run(k, {"out": np.zeros(4, np.int32)})
