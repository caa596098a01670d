"""The oracle: a kernel run as plain Python, one generator per thread, giving the memory every
compiled run must reproduce.

The checked kernel and its device functions are executed by Python itself; only what the
language defines differently from Python is changed in their syntax tree before compiling it:

* every int is an :class:`I32` (int32 with RV32IM semantics: :mod:`int32`);
* ``barrier()`` becomes ``yield``, so every thread is a generator that stops at barriers; a
  device call becomes ``yield from`` (a device function may reach a barrier too);
* the intrinsics, shared arrays, ``range`` and ``min``/``max``/``abs`` go to the thread's
  context object; loops count their iterations against a step limit.

Blocks run one after another (like the golden functional model). In a block, each thread runs
until it finishes or reaches a barrier; when no thread can run, the barrier completes if every
thread waits at the same ``barrier()`` call, and it is an :class:`OracleError` otherwise
(threads that finished never arrive: the rule of docs/isa.md for ``bar``). The threads of a
block run in thread order between barriers, so a kernel whose result depends on the order of
unsynchronised accesses (a data race) may give another result on the SM: the oracle defines
results for race-free kernels, and atomics serialised in any order.
"""

from __future__ import annotations

import ast
import copy
import sys
import traceback
from collections.abc import Callable, Generator, Iterator, Mapping
from typing import Any

import numpy as np

from reconverge.golden.compiler import frontend, int32, lang, ssa
from reconverge.golden.compiler.errors import OracleError
from reconverge.golden.compiler.ir import Module
from reconverge.golden.compiler.names import Scope
from reconverge.golden.isa import MASK32, sext
from reconverge.golden.memory import AMO_OPS

DEFAULT_STEP_LIMIT = 2_000_000


def _v(x: object) -> int:
    if isinstance(x, I32):
        return x.v
    if isinstance(x, bool | int):
        return int32.wrap(int(x))
    raise TypeError(f"not an int32 value: {x!r}")


class I32:
    """An int32 with the kernel language's operators (:mod:`int32`)."""

    __slots__ = ("v",)

    def __init__(self, value: object) -> None:
        self.v = _v(value)

    def __repr__(self) -> str:
        return f"I32({self.v})"

    def __int__(self) -> int:
        return self.v

    __index__ = __int__

    def __bool__(self) -> bool:
        return self.v != 0

    def __hash__(self) -> int:
        return hash(self.v)

    def __neg__(self) -> I32:
        return I32(-self.v)

    def __pos__(self) -> I32:
        return self

    def __invert__(self) -> I32:
        return I32(~self.v)

    def __abs__(self) -> I32:
        return I32(abs(self.v))


def _binary(op: str, reflected: bool = False) -> Callable[[I32, object], I32]:
    fn = int32.BINARY[op][1]

    def method(self: I32, other: object) -> I32:
        try:
            o = _v(other)
        except TypeError:
            return NotImplemented  # type: ignore[return-value]
        return I32(fn(o, self.v) if reflected else fn(self.v, o))

    return method


for _op, _dunder in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("div", "floordiv"),
                     ("rem", "mod"), ("and", "and"), ("or", "or"), ("xor", "xor"),
                     ("shl", "lshift"), ("shr", "rshift")):  # fmt: skip
    setattr(I32, f"__{_dunder}__", _binary(_op))
    setattr(I32, f"__r{_dunder}__", _binary(_op, reflected=True))
for _op, _dunder in (
    ("lt", "lt"),
    ("le", "le"),
    ("gt", "gt"),
    ("ge", "ge"),
    ("eq", "eq"),
    ("ne", "ne"),
):
    setattr(I32, f"__{_dunder}__", _binary(_op))


class OracleArray:
    """An int32 array as a kernel sees it: bounds-checked word access."""

    __slots__ = ("name", "words")

    def __init__(self, name: str, values: object) -> None:
        self.name = name
        self.words = [int32.wrap(int(x)) for x in np.asarray(values, dtype=np.int64).ravel()]

    def _index(self, i: object) -> int:
        k = _v(i)
        if not 0 <= k < len(self.words):
            raise OracleError(
                f"index {k} out of bounds of array {self.name} ({len(self.words)} words)"
            )
        return k

    def __getitem__(self, i: object) -> I32:
        return I32(self.words[self._index(i)])

    def __setitem__(self, i: object, value: object) -> None:
        self.words[self._index(i)] = _v(value)

    def array(self) -> np.ndarray:
        return np.array(self.words, dtype=np.int64).astype(np.int32)


def _atomic(op: Callable[[int, int], int]) -> Callable[[int, int], int]:
    """An AMO of ``golden.memory.AMO_OPS`` (on uint32 words) on the oracle's int32 values."""
    return lambda old, v: sext(op(old & MASK32, v & MASK32), 32)


_ATOMICS: dict[str, Callable[[int, int], int]] = {name: _atomic(op) for name, op in AMO_OPS.items()}


class _Budget:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.steps = 0


class _Thread:
    """One thread's view of the machine: identity, its block's shared arrays, the intrinsics."""

    def __init__(
        self,
        tid: int,
        block: int,
        *,
        ntid: int,
        nctaid: int,
        warp_size: int,
        shared: dict[str, OracleArray],
        budget: _Budget,
    ) -> None:
        self.ids = {
            "tid": tid,
            "ntid": ntid,
            "ctaid": block,
            "nctaid": nctaid,
            "laneid": tid % warp_size,
            "warpid": tid // warp_size,
            "warpsize": warp_size,
        }
        self.shared = shared
        self.budget = budget

    def csr(self, name: str) -> I32:
        return I32(self.ids[name])

    def tick(self) -> None:
        self.budget.steps += 1
        if self.budget.steps > self.budget.limit:
            raise OracleError(f"no completion within {self.budget.limit} loop iterations")

    def range(self, *args: I32) -> Iterator[I32]:
        for value in range(*(int(a) for a in args)):
            self.tick()
            yield I32(value)

    def atomic(self, op: str, array: OracleArray, index: object, value: object) -> I32:
        k = array._index(index)
        old = array.words[k]
        array.words[k] = _ATOMICS[op](old, _v(value))
        return I32(old)

    @staticmethod
    def min(a: object, b: object) -> I32:
        return I32(min(_v(a), _v(b)))

    @staticmethod
    def max(a: object, b: object) -> I32:
        return I32(max(_v(a), _v(b)))

    @staticmethod
    def abs(a: object) -> I32:
        return I32(abs(_v(a)))


# ----------------------------------------------------------------------------------------------
# Syntax-tree transformation


CTX = "__rc"


def _ctx(attr: str) -> ast.expr:
    return ast.Attribute(ast.Name(CTX, ast.Load()), attr, ast.Load())


def _call(func: ast.expr, args: list[ast.expr]) -> ast.Call:
    return ast.Call(func, args, [])


def _i32(value: int) -> ast.expr:
    return _call(ast.Name("__I32", ast.Load()), [ast.Constant(value)])


def _fn_name(name: str) -> str:
    return f"__fn_{name}"


class _Transformer(ast.NodeTransformer):
    def __init__(self, scope: Scope) -> None:
        self.scope = scope

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.decorator_list = []
        node.returns = None
        for a in node.args.args:
            a.annotation = None
        node.args.args.insert(0, ast.arg(CTX))
        node.name = _fn_name(node.name)
        body = [self.visit(s) for s in node.body]
        generator = ast.If(ast.Constant(False), [ast.Expr(ast.Yield(None))], [])
        node.body = [generator, *[s for s in body if s is not None]]
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.expr:
        if isinstance(node.value, bool | int):
            return _i32(int32.wrap(int(node.value)))
        return node

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if not isinstance(node.ctx, ast.Load) or node.id in self.scope.locals:
            return node
        what = self.scope.resolve(node)
        if what.kind == "const":
            return _i32(what.obj)
        if what.kind == "shared":
            return ast.Subscript(_ctx("shared"), ast.Constant(node.id), ast.Load())
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
        what = self.scope.resolve(node)
        return _i32(what.obj) if what.kind == "const" else node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return _call(ast.Name("__I32", ast.Load()), [node])
        return node

    def visit_Assign(self, node: ast.Assign) -> ast.stmt:
        if (
            isinstance(node.value, ast.Call)
            and self.scope._global_object(node.value.func) is lang.shared
        ):
            return ast.Pass()
        self.generic_visit(node)
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.stmt:
        return ast.Assign([node.target], self.visit(node.value))  # type: ignore[arg-type]

    def _loop_body(self, body: list[ast.stmt]) -> list[ast.stmt]:
        return [ast.Expr(_call(_ctx("tick"), [])), *[self.visit(s) for s in body]]

    def visit_While(self, node: ast.While) -> ast.While:
        node.test = self.visit(node.test)
        node.body = self._loop_body(node.body)
        return node

    def visit_For(self, node: ast.For) -> ast.For:
        call = node.iter
        assert isinstance(call, ast.Call)
        node.iter = _call(_ctx("range"), [self.visit(a) for a in call.args])
        node.body = [self.visit(s) for s in node.body]
        return node

    def visit_Call(self, node: ast.Call) -> ast.expr:
        what = self.scope.resolve(node.func)  # type: ignore[arg-type]
        args = [self.visit(a) for a in node.args]
        if what.kind == "intrinsic":
            fn: lang.Intrinsic = what.obj
            if fn.kind == "csr":
                return _call(_ctx("csr"), [ast.Constant(fn.name)])
            if fn.kind == "barrier":
                return ast.Yield(ast.Constant(str(self.scope.pos(node))))
            return _call(_ctx("atomic"), [ast.Constant(fn.name.removeprefix("atomic_")), *args])
        if what.kind == "builtin":
            return _call(_ctx(what.obj), args)
        assert what.kind == "device"
        target = ast.Name(_fn_name(what.obj.name), ast.Load())
        return ast.YieldFrom(_call(target, [ast.Name(CTX, ast.Load()), *args]))


def _compile(module: Module) -> dict[str, Any]:
    """The generator functions of every function of ``module``, by name."""
    namespace: dict[str, Any] = {"__I32": I32}
    for name, obj in module.sources.items():
        src: lang.FunctionSource = obj.source
        tree = _Transformer(Scope(src, obj.kind)).visit(copy.deepcopy(src.tree))
        wrapper = ast.Module([tree], [])
        ast.fix_missing_locations(wrapper)
        ast.increment_lineno(wrapper, src.first_line - 1)
        exec(compile(wrapper, src.filename, "exec"), namespace)
        namespace[name] = namespace[_fn_name(name)]
    return namespace


# ----------------------------------------------------------------------------------------------
# Running


def _arguments(
    module: Module, args: Mapping[str, object]
) -> tuple[list[object], dict[str, OracleArray]]:
    fn = module.kernel
    names = [p.name for p in fn.params]
    unknown = sorted(set(args) - set(names))
    missing = [n for n in names if n not in args]
    if unknown or missing:
        raise OracleError(
            f"kernel {fn.name}({', '.join(names)}): "
            + "; ".join(
                part
                for part in (
                    f"missing argument(s) {', '.join(missing)}" if missing else "",
                    f"unknown argument(s) {', '.join(unknown)}" if unknown else "",
                )
                if part
            )
        )
    values: list[object] = []
    arrays: dict[str, OracleArray] = {}
    for p in fn.params:
        if p.kind == "array":
            arrays[p.name] = OracleArray(p.name, args[p.name])
            values.append(arrays[p.name])
        else:
            values.append(I32(int(args[p.name])))  # type: ignore[call-overload]
    return values, arrays


def _located(exc: BaseException, filenames: set[str]) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename in filenames]
    return f"{frames[-1].filename}:{frames[-1].lineno}: " if frames else ""


def run(
    k: lang.Kernel,
    args: Mapping[str, object],
    *,
    grid: int = 1,
    block: int = 1,
    warp_size: int = 32,
    step_limit: int = DEFAULT_STEP_LIMIT,
) -> dict[str, np.ndarray]:
    """Run kernel ``k`` with ``args`` (by parameter name: ints, and int32 array-likes for
    ``Array`` parameters) over ``grid`` blocks of ``block`` threads; return every array
    argument's final contents (int32 arrays, by name)."""
    module = frontend.build_module(k)
    for fn in module.functions.values():
        ssa.to_ssa(fn)  # the same checks as the compiler (variables used before assignment)
    namespace = _compile(module)
    values, arrays = _arguments(module, args)
    filenames = {obj.source.filename for obj in module.sources.values()}
    entry = namespace[module.kernel.name]
    budget = _Budget(step_limit)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))
    try:
        for b in range(grid):
            shared = {
                name: OracleArray(name, np.zeros(arr.words, np.int64))
                for name, arr in module.kernel.shared.items()
            }
            threads = [
                _Thread(
                    t, b, ntid=block, nctaid=grid, warp_size=warp_size, shared=shared, budget=budget
                )
                for t in range(block)
            ]
            gens = [entry(th, *values) for th in threads]
            _run_block(b, gens)
    except OracleError as exc:
        raise OracleError(f"{_located(exc, filenames)}{exc}") from None
    except RecursionError as exc:
        raise OracleError(f"{_located(exc, filenames)}device calls nested too deeply") from None
    finally:
        sys.setrecursionlimit(limit)
    return {name: arr.array() for name, arr in arrays.items()}


def _run_block(block: int, gens: list[Generator[Any, None, None]]) -> None:
    live = dict(enumerate(gens))
    finished = 0
    while live:
        waiting: dict[int, str] = {}
        for t, gen in list(live.items()):
            try:
                waiting[t] = next(gen)
            except StopIteration:
                del live[t]
                finished += 1
        if not waiting:
            return
        places = sorted(set(waiting.values()))
        if finished or len(places) > 1:
            what = (
                f"threads wait at different barriers ({', '.join(places)})"
                if len(places) > 1
                else f"{finished} thread(s) of the block finished and never reach it"
            )
            raise OracleError(
                f"block {block}: the barrier at {places[0]} can never complete: {what}"
            )
