"""The kernel language: Python functions marked :func:`kernel` (launched on the SM) or
:func:`device` (called from kernels and device functions), using the intrinsics below.
``docs/compiler.md`` is the reference; in short:

* values are int32 with RV32IM semantics (:mod:`~reconverge.golden.compiler.int32`: ``//`` and
  ``%`` truncate like C and RISC-V, arithmetic wraps);
* ``if``/``elif``/``else``, ``while``, ``for ... in range(...)`` (constant step), ``break``,
  ``continue``, early ``return``, calls of device functions (recursion included);
* global arrays are kernel parameters annotated :class:`Array`; ``name = shared(n)`` declares
  a block-shared array of ``n`` words; ``a[i]`` loads and stores words;
* ``atomic_OP(array, index, value)`` for every AMO of RV32A (``add``, ``swap``, ``and``,
  ``or``, ``xor``, ``min``, ``max``, and ``minu``/``maxu``, which compare as unsigned) return
  the old value;
* ``barrier()`` waits for every thread of the block;
* thread and block identity: ``tid()`` (thread index in the block), ``ntid()`` (block size),
  ``ctaid()`` (block index), ``nctaid()`` (grid size), ``laneid()``, ``warpid()``,
  ``warpsize()`` (the SIMT CSRs of docs/isa.md, same names).

The decorated function is not called directly: compile it
(:func:`reconverge.golden.compiler.compile_kernel`) or run it per thread with the oracle
(:func:`reconverge.golden.compiler.oracle.run`).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import inspect
import linecache
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reconverge.golden.compiler.errors import CompileError, LanguageError, Pos


class Array:
    """Parameter annotation: an int32 array in memory (a kernel's global arrays; a device
    function may receive a global or a shared array)."""


@dataclass(frozen=True, eq=False)
class Intrinsic:
    """A built-in operation of the language (identity CSR, barrier, shared array, atomic)."""

    name: str
    kind: str  # "csr", "barrier", "shared", "atomic"
    arity: int
    doc: str

    def __call__(self, *args: object, **kwargs: object) -> Any:
        raise CompileError(
            f"{self.name}() belongs to the kernel language: it has a meaning only inside a "
            "kernel that is compiled or run by the oracle"
        )

    def __repr__(self) -> str:
        return f"<kernel intrinsic {self.name}>"


def _csr(name: str, doc: str) -> Intrinsic:
    return Intrinsic(name, "csr", 0, doc)


tid = _csr("tid", "thread index in the block (CSR 0xCC0)")
ntid = _csr("ntid", "block size in threads (CSR 0xCC1)")
ctaid = _csr("ctaid", "block index in the grid (CSR 0xCC2)")
nctaid = _csr("nctaid", "grid size in blocks (CSR 0xCC3)")
laneid = _csr("laneid", "lane of the thread in its warp (CSR 0xCC4)")
warpid = _csr("warpid", "warp of the thread in its block (CSR 0xCC5)")
warpsize = _csr("warpsize", "warp size W (CSR 0xCC6)")
barrier = Intrinsic("barrier", "barrier", 0, "wait for every thread of the block")
shared = Intrinsic("shared", "shared", 1, "declare a block-shared array: name = shared(words)")


def _atomic(op: str, doc: str) -> Intrinsic:
    """``atomic_OP``: the AMO ``amoOP.w`` (``golden.memory.AMO_OPS[op]``) on a[i]."""
    return Intrinsic(f"atomic_{op}", "atomic", 3, f"{doc} atomically; the old a[i]")


atomic_swap = _atomic("swap", "a[i] = v")
atomic_add = _atomic("add", "a[i] += v")
atomic_xor = _atomic("xor", "a[i] ^= v")
atomic_and = _atomic("and", "a[i] &= v")
atomic_or = _atomic("or", "a[i] |= v")
atomic_min = _atomic("min", "a[i] = min(a[i], v)")
atomic_max = _atomic("max", "a[i] = max(a[i], v)")
atomic_minu = _atomic("minu", "a[i] = min(a[i], v) compared as unsigned")
atomic_maxu = _atomic("maxu", "a[i] = max(a[i], v) compared as unsigned")
ATOMICS: tuple[Intrinsic, ...] = (
    atomic_swap, atomic_add, atomic_xor, atomic_and, atomic_or,
    atomic_min, atomic_max, atomic_minu, atomic_maxu,
)  # fmt: skip

INTRINSICS: tuple[Intrinsic, ...] = (
    tid, ntid, ctaid, nctaid, laneid, warpid, warpsize, barrier, shared, *ATOMICS,
)  # fmt: skip


@dataclass(frozen=True, eq=False)
class FunctionSource:
    """Where a kernel or device function comes from: its parsed definition and the module
    globals its names resolve in."""

    name: str
    filename: str
    first_line: int
    indent: int
    tree: ast.FunctionDef
    globals: dict[str, Any]

    def pos(self, node: ast.AST) -> Pos:
        line = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0)
        return Pos(self.filename, self.first_line + line - 1, col + 1 + self.indent)

    @classmethod
    def of(cls, fn: Callable[..., Any]) -> FunctionSource:
        code = getattr(fn, "__code__", None)
        filename = code.co_filename if code is not None else "<unknown>"
        try:
            lines, first = inspect.getsourcelines(fn)
        except (OSError, TypeError):
            raise CompileError(
                f"{filename}: the source of {getattr(fn, '__name__', fn)!r} is not available; "
                "define kernels in a Python file (or load text with kernels_from_source)"
            ) from None
        text = "".join(lines)
        indent = len(lines[0]) - len(lines[0].lstrip())
        try:
            module = ast.parse(textwrap.dedent(text))
        except SyntaxError as exc:  # pragma: no cover - the function compiled, so it parses
            raise CompileError(f"{filename}:{first}: {exc.msg}") from None
        tree = module.body[0]
        if not isinstance(tree, ast.FunctionDef):
            raise LanguageError(
                Pos(filename, first, indent + 1),
                f"{fn.__name__} is not a plain function definition",
                "write `def name(...):` (no async, lambda or class)",
            )
        return cls(fn.__name__, filename, first, indent, tree, fn.__globals__)


class KernelFunction:
    """A function of the kernel language (base of :class:`Kernel` and :class:`Device`)."""

    kind = "function"

    def __init__(self, fn: Callable[..., Any]) -> None:
        if not inspect.isfunction(fn):
            raise CompileError(f"@{self.kind} applies to a function, not {type(fn).__name__}")
        self.fn = fn
        self.name = fn.__name__
        self.source = FunctionSource.of(fn)
        functools.update_wrapper(self, fn)

    def __call__(self, *args: object, **kwargs: object) -> Any:
        raise CompileError(
            f"{self.kind} {self.name} is kernel-language code: compile it with "
            "reconverge.golden.compiler.compile_kernel or run it with the oracle "
            "(reconverge.golden.compiler.oracle.run); device functions are called from kernels"
        )

    def __repr__(self) -> str:
        return f"<{self.kind} {self.name} at {self.source.filename}:{self.source.first_line}>"


class Kernel(KernelFunction):
    """A kernel: launched over a grid of blocks of threads."""

    kind = "kernel"


class Device(KernelFunction):
    """A device function: called from kernels and device functions."""

    kind = "device"


def kernel(fn: Callable[..., Any]) -> Kernel:
    """Mark ``fn`` as a kernel."""
    return Kernel(fn)


def device(fn: Callable[..., Any]) -> Device:
    """Mark ``fn`` as a device function."""
    return Device(fn)


# ----------------------------------------------------------------------------------------------
# Loading kernels from files and text


def _module_kernels(namespace: dict[str, Any]) -> dict[str, Kernel]:
    return {name: obj for name, obj in namespace.items() if isinstance(obj, Kernel)}


def kernels_from_source(text: str, filename: str = "<kernels>") -> dict[str, Kernel]:
    """Execute ``text`` as a Python module named ``filename`` and return its kernels by name.
    The text is registered in :mod:`linecache` so that errors point into it."""
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace: dict[str, Any] = {"__name__": f"reconverge_kernels_{abs(hash(filename))}"}
    try:
        exec(compile(text, filename, "exec"), namespace)
    except SyntaxError as exc:
        raise CompileError(_syntax_error(filename, exc)) from None
    return _module_kernels(namespace)


def _syntax_error(filename: str | Path, exc: SyntaxError) -> str:
    """``FILE:LINE:COLUMN: why`` of a syntax error, or ``FILE: why`` when Python names no
    place (a file that is not text, such as one with NUL bytes)."""
    where = "".join(f":{n}" for n in (exc.lineno, exc.offset) if n is not None)
    return f"{filename}{where}: {exc.msg}"


def load_kernels(path: str | Path) -> dict[str, Kernel]:
    """Import the Python file ``path`` and return the kernels it defines, by name. Errors in
    the file (syntax, exceptions while importing it) are reported as one-line user errors."""
    path = Path(path)
    if not path.is_file():
        raise CompileError(f"{path}: no such file")
    name = f"reconverge_kernels_{path.stem}_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CompileError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise CompileError(_syntax_error(path, exc)) from None
    except CompileError:
        raise
    except Exception as exc:
        raise CompileError(f"{path}: importing it raised {type(exc).__name__}: {exc}") from None
    return _module_kernels(vars(module))
