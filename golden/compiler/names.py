"""Name resolution of kernel-language functions (shared by the front end and the oracle):
what every name refers to, by Python's rules, and which parameters are arrays."""

from __future__ import annotations

import ast
import builtins
import types
from dataclasses import dataclass
from typing import Any

from reconverge.golden.compiler import int32, lang
from reconverge.golden.compiler.errors import LanguageError, Pos
from reconverge.golden.compiler.ir import Param

BUILTIN_FUNCS = {"min": 2, "max": 2, "abs": 1}


def const_value(pos: Pos, value: object) -> int:
    """A literal or module constant as an int32 (ints and bools that fit 32 bits)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        if not -(1 << 31) <= value < (1 << 32):
            raise LanguageError(pos, f"the constant {value} does not fit in 32 bits")
        return int32.wrap(value)
    what = "None" if value is None else type(value).__name__
    raise LanguageError(pos, f"a {what} value is not in the language", "use int32 values")


# ----------------------------------------------------------------------------------------------
# Names


@dataclass(frozen=True)
class Resolved:
    """What a name refers to: ``kind`` is one of ``local`` (a variable, int parameters
    included), ``array`` (an array parameter), ``shared`` (a shared array), ``const`` (a module
    constant; ``obj`` is its value), ``intrinsic``, ``device``, ``builtin`` (min, max, abs,
    range)."""

    kind: str
    obj: Any = None


@dataclass(frozen=True)
class Signature:
    params: tuple[Param, ...]
    returns: bool


def walk_body(nodes: list[ast.stmt]) -> list[ast.AST]:
    """Every node of a function body, not descending into nested definitions."""
    out: list[ast.AST] = []
    work: list[ast.AST] = list(nodes)
    while work:
        node = work.pop()
        out.append(node)
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            work.extend(ast.iter_child_nodes(node))
    return out


class Scope:
    """Name resolution of one kernel-language function, by Python's rules: a name assigned
    anywhere in the function is local to it; other names are module globals (constants, device
    functions, intrinsics) or builtins."""

    def __init__(self, src: lang.FunctionSource, kind: str) -> None:
        self.src = src
        self.kind = kind
        self.locals: set[str] = set()  # filled below; globals resolve meanwhile
        self.params = self._params()
        body = walk_body(src.tree.body)
        self.shared_names = {
            n.targets[0].id
            for n in body
            if isinstance(n, ast.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0], ast.Name)
            and isinstance(n.value, ast.Call)
            and self._global_object(n.value.func) is lang.shared
        }
        assigned = {
            t.id
            for n in body
            for t in self._targets(n)
            if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)
        }
        arrays = {p.name for p in self.params if p.kind == "array"}
        ints = {p.name for p in self.params if p.kind == "int"}
        self.locals = (assigned | ints) - self.shared_names - arrays

    @staticmethod
    def _targets(node: ast.AST) -> list[ast.expr]:
        if isinstance(node, ast.Assign):
            return list(node.targets)
        if isinstance(node, ast.AugAssign | ast.AnnAssign | ast.For):
            return [node.target]
        if isinstance(node, ast.NamedExpr):
            return [node.target]
        return []

    def pos(self, node: ast.AST) -> Pos:
        return self.src.pos(node)

    def _params(self) -> tuple[Param, ...]:
        args = self.src.tree.args
        where = self.pos(self.src.tree)
        if args.vararg or args.kwarg or args.kwonlyargs or args.defaults or args.posonlyargs:
            raise LanguageError(
                where,
                f"{self.src.name}: only plain positional parameters are allowed",
                "remove defaults, *args, **kwargs and keyword-only parameters",
            )
        params = []
        for a in args.args:
            params.append(Param(a.arg, self._param_kind(a), self.pos(a)))
        return tuple(params)

    def _param_kind(self, a: ast.arg) -> str:
        if a.annotation is None:
            return "int"
        obj = self._annotation(a.annotation)
        if obj is lang.Array:
            return "array"
        if obj is int:
            return "int"
        raise LanguageError(
            self.pos(a.annotation),
            f"parameter {a.arg!r} has an unsupported annotation",
            "annotate arrays with Array and int32 scalars with int (or nothing)",
        )

    def _annotation(self, node: ast.expr) -> object:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                return None
        return self._global_object(node)

    def _global_object(self, node: ast.expr) -> object:
        """The module-level object an expression ``name`` or ``module.name`` refers to, or
        None (locals shadow globals)."""
        if isinstance(node, ast.Name):
            if node.id in self.locals:
                return None
            if node.id in self.src.globals:
                return self.src.globals[node.id]
            return getattr(builtins, node.id, None)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            base = self._global_object(node.value)
            if isinstance(base, types.ModuleType):
                return getattr(base, node.attr, None)
        return None

    def resolve(self, node: ast.expr) -> Resolved:
        """What ``node`` (a Name, or ``module.name``) refers to; a LanguageError otherwise."""
        if isinstance(node, ast.Name):
            if node.id in self.locals:
                return Resolved("local")
            param = next((p for p in self.params if p.name == node.id), None)
            if param is not None:
                return Resolved("array")
            if node.id in self.shared_names:
                return Resolved("shared")
        obj = self._global_object(node)
        name = ast.unparse(node)
        if obj is None and not (isinstance(node, ast.Name) and node.id in self.src.globals):
            raise LanguageError(self.pos(node), f"name {name!r} is not defined")
        if isinstance(obj, lang.Intrinsic):
            return Resolved("intrinsic", obj)
        if isinstance(obj, lang.Device):
            return Resolved("device", obj)
        if isinstance(obj, lang.Kernel):
            return Resolved("kernel", obj)
        if obj is range or (
            isinstance(node, ast.Name)
            and node.id in BUILTIN_FUNCS
            and obj is getattr(builtins, node.id)
        ):
            return Resolved("builtin", node.id if isinstance(node, ast.Name) else "range")
        if isinstance(obj, bool | int):
            return Resolved("const", const_value(self.pos(node), obj))
        kind = type(obj).__name__
        raise LanguageError(
            self.pos(node),
            f"{name!r} is a {kind}, which kernels cannot use",
            "kernels use int constants, device functions and the language intrinsics",
        )

    def signature(self) -> Signature:
        returns = any(
            isinstance(n, ast.Return) and n.value is not None for n in walk_body(self.src.tree.body)
        )
        return Signature(self.params, returns)
