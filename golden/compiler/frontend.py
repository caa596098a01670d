"""Front end: a kernel-language function (Python ``ast``) to IR on source variables.

Checks that the function stays inside the language (:mod:`~reconverge.golden.compiler.lang`)
and reports anything else as a :class:`LanguageError` at its ``file:line:col`` with what to
write instead. Name resolution (:class:`Scope`) is shared with the oracle, which runs the same
checked functions as Python.

Control flow is laid out in source order, which the SIMT back end relies on: the code of a loop
is contiguous, its exit follows it, ``continue`` jumps forward to a latch block at the end of
the loop (the only backward jump is the latch's), ``break`` and ``return`` jump forward. Under
the stack-less min(SP:PC) policy (seed 000) threads therefore never run ahead into the next
iteration of a loop that other threads of their warp have not finished.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

from reconverge.golden.compiler import int32, lang
from reconverge.golden.compiler.cfg import merge_straight_line, remove_unreachable
from reconverge.golden.compiler.errors import LanguageError
from reconverge.golden.compiler.ir import (
    Block,
    Const,
    Function,
    Instr,
    Module,
    Operand,
    SharedArray,
    Value,
)
from reconverge.golden.compiler.names import (
    BUILTIN_FUNCS,
    Resolved,
    Scope,
    Signature,
    const_value,
    walk_body,
)
from reconverge.golden.memmap import SHARED_BASE

MAX_KERNEL_PARAMS = 8  # a0..a7
WORD = 4

BIN_OPS: dict[type[ast.operator], str] = {
    ast.Add: "add",
    ast.Sub: "sub",
    ast.Mult: "mul",
    ast.FloorDiv: "div",
    ast.Mod: "rem",
    ast.LShift: "shl",
    ast.RShift: "shr",
    ast.BitAnd: "and",
    ast.BitOr: "or",
    ast.BitXor: "xor",
}
BAD_BIN_OPS: dict[type[ast.operator], str] = {
    ast.Div: "write // for int32 division (it truncates toward zero, like RISC-V div)",
    ast.Pow: "write the multiplications out (there is no power operator)",
    ast.MatMult: "write the arithmetic out (there is no matrix product)",
}
CMP_OPS: dict[type[ast.cmpop], str] = {
    ast.Lt: "lt",
    ast.LtE: "le",
    ast.Gt: "gt",
    ast.GtE: "ge",
    ast.Eq: "eq",
    ast.NotEq: "ne",
}

STATEMENT_HINTS: dict[type[ast.stmt], str] = {
    ast.FunctionDef: "define device functions at module level with @device",
    ast.AsyncFunctionDef: "define device functions at module level with @device",
    ast.ClassDef: "kernels work on int32 scalars and arrays only",
    ast.With: "remove the with statement",
    ast.Try: "kernels cannot raise or catch exceptions",
    ast.Raise: "kernels cannot raise exceptions; return early instead",
    ast.Assert: "check the condition with if and return early",
    ast.Import: "import at module level",
    ast.ImportFrom: "import at module level",
    ast.Global: "pass values as parameters or use arrays",
    ast.Nonlocal: "pass values as parameters or use arrays",
    ast.Delete: "remove the del statement",
    ast.Match: "write if/elif/else",
}


# ----------------------------------------------------------------------------------------------
# The builder


@dataclass
class _Loop:
    continue_to: str
    break_to: str


@dataclass
class FunctionIR:
    """The front end's product for one function: its IR and the device functions it calls."""

    function: Function
    callees: list[lang.Device] = field(default_factory=list)


class _Builder:
    def __init__(
        self,
        source: lang.FunctionSource,
        kind: str,
        signature_of: Callable[[lang.Device], Signature],
    ) -> None:
        self.scope = Scope(source, kind)
        self.src = source
        self.kind = kind
        self.signature_of = signature_of
        self.blocks: dict[str, Block] = {}
        self.created: dict[str, Block] = {}
        self.cur: Block | None = None
        self.n_temps = 0
        self.vars: dict[str, Value] = {}
        self.hidden = 0
        self.loops: list[_Loop] = []
        self.callees: list[lang.Device] = []
        self.shared: dict[str, SharedArray] = {}
        self.shared_bytes = 0
        self.array_params: dict[str, Value] = {}
        self.falls_off: str | None = None
        self.exit_label = ""
        self.returns = self.scope.signature().returns
        self.depth = 0  # statement nesting (shared arrays are declared at depth 0)

    # -- plumbing -------------------------------------------------------------------------------

    def err(self, node: ast.AST, message: str, hint: str | None = None) -> LanguageError:
        return LanguageError(self.scope.pos(node), message, hint)

    def new_block(self) -> str:
        label = f"b{len(self.created)}"
        self.created[label] = Block(label)
        return label

    def start(self, label: str) -> None:
        self.blocks[label] = self.created[label]
        self.cur = self.blocks[label]

    def emit(
        self,
        op: str,
        args: list[Operand],
        node: ast.AST | None,
        attr: object = None,
        dest: bool = True,
    ) -> Value | None:
        out = self.temp() if dest else None
        pos = self.scope.pos(node) if node is not None else None
        assert self.cur is not None and self.cur.term is None
        self.cur.instrs.append(Instr(op, out, args, attr, pos))
        return out

    def temp(self) -> Value:
        self.n_temps += 1
        return Value(f"%{self.n_temps}")

    def variable(self, name: str) -> Value:
        if name not in self.vars:
            self.vars[name] = Value(name, var=name)
        return self.vars[name]

    def hidden_variable(self, what: str) -> Value:
        self.hidden += 1
        return self.variable(f"${what}{self.hidden}")

    def assign(self, var: Value, value: Operand, node: ast.AST) -> None:
        """``var = value``: retarget the instruction that just computed ``value`` when it is a
        fresh temporary, else emit a copy."""
        assert self.cur is not None
        last = self.cur.instrs[-1] if self.cur.instrs else None
        if (
            isinstance(value, Value)
            and value.var is None
            and last is not None
            and last.dest is value
            and value.name.startswith("%")
        ):
            last.dest = var
            return
        self.cur.instrs.append(Instr("mov", var, [value], None, self.scope.pos(node)))

    def terminate(self, op: str, args: list[Operand], attr: object, node: ast.AST | None) -> None:
        assert self.cur is not None
        if self.cur.term is None:
            pos = self.scope.pos(node) if node is not None else None
            self.cur.term = Instr(op, None, args, attr, pos)

    def jump(self, target: str, node: ast.AST | None = None) -> None:
        self.terminate("jmp", [], target, node)

    @property
    def terminated(self) -> bool:
        return self.cur is None or self.cur.term is not None

    # -- functions ------------------------------------------------------------------------------

    def build(self) -> FunctionIR:
        tree = self.src.tree
        params = list(self.scope.params)
        if self.kind == "kernel" and len(params) > MAX_KERNEL_PARAMS:
            raise self.err(
                tree,
                f"a kernel takes at most {MAX_KERNEL_PARAMS} parameters (a0-a7)",
                "pass more values through an array",
            )
        if self.kind == "kernel" and self.returns:
            node = next(
                n for n in walk_body(tree.body) if isinstance(n, ast.Return) and n.value is not None
            )
            raise self.err(node, "a kernel returns no value", "write `return` without a value")
        entry = self.new_block()
        exit_label = self.exit_label = self.new_block()
        self.start(entry)
        for k, p in enumerate(params):
            if p.kind == "array":
                value = Value(p.name, var=p.name)
                self.array_params[p.name] = value
                self.cur.instrs.append(Instr("param", value, [], k, p.pos))  # type: ignore[union-attr]
            else:
                self.cur.instrs.append(  # type: ignore[union-attr]
                    Instr("param", self.variable(p.name), [], k, p.pos)
                )
        self.suite(tree.body, top=True)
        if not self.terminated:
            self.falls_off = self.cur.label  # type: ignore[union-attr]
            self.jump(exit_label)
        self.start(exit_label)
        ret_args: list[Operand] = [self.variable("$ret")] if self.returns else []
        self.terminate("ret", ret_args, None, None)
        fn = Function(
            self.src.name,
            self.kind,
            params,
            self.blocks,
            entry,
            exit_label,
            self.returns,
            self.scope.pos(tree),
            self.shared,
        )
        fn.variables = set(self.vars.values())
        self._finish(fn)
        return FunctionIR(fn, self.callees)

    def _finish(self, fn: Function) -> None:
        remove_unreachable(fn)
        if self.returns and self.falls_off in fn.blocks:
            raise self.err(
                self.src.tree,
                f"device function {fn.name} can reach its end without returning a value",
                "end every path with `return value`",
            )
        merge_straight_line(fn)

    # -- statements -----------------------------------------------------------------------------

    def suite(self, stmts: list[ast.stmt], top: bool = False) -> None:
        for i, stmt in enumerate(stmts):
            if top and i == 0 and _is_docstring(stmt):
                continue
            if self.terminated:
                self.start(self.new_block())  # unreachable code: checked, then dropped
            self.stmt(stmt)

    def nested(self, stmts: list[ast.stmt]) -> None:
        self.depth += 1
        self.suite(stmts)
        self.depth -= 1

    def stmt(self, node: ast.stmt) -> None:
        handler = getattr(self, f"stmt_{type(node).__name__}", None)
        if handler is None:
            hint = STATEMENT_HINTS.get(type(node), "see docs/compiler.md for the language")
            raise self.err(
                node, f"the {type(node).__name__} statement is not in the language", hint
            )
        handler(node)

    def stmt_Pass(self, node: ast.Pass) -> None:
        pass

    def stmt_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Call):
            self.call(node.value, want_value=False)
            return
        raise self.err(node, "this expression statement does nothing", "remove it")

    def stmt_Assign(self, node: ast.Assign) -> None:
        if len(node.targets) != 1:
            raise self.err(
                node, "chained assignment is not in the language", "assign one name at a time"
            )
        target = node.targets[0]
        if isinstance(target, ast.Tuple | ast.List):
            raise self.err(
                target, "unpacking is not in the language", "assign each name separately"
            )
        if (
            isinstance(node.value, ast.Call)
            and self.scope._global_object(node.value.func) is lang.shared
        ):
            self.declare_shared(target, node.value)
            return
        value = self.expr(node.value)
        self.store_target(target, value, node)

    def stmt_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is None or not isinstance(node.target, ast.Name):
            raise self.err(node, "a bare annotation declares nothing", "assign a value: x: int = 0")
        if self.scope._annotation(node.annotation) is not int:
            raise self.err(
                node.annotation, "local variables are int32", "annotate with int or nothing"
            )
        self.store_target(node.target, self.expr(node.value), node)

    def store_target(self, target: ast.expr, value: Operand, node: ast.AST) -> None:
        if isinstance(target, ast.Name):
            self.assign(self.local(target), value, node)
        elif isinstance(target, ast.Subscript):
            base = self.array(target.value)
            index = self.index(target)
            addr = self.address(base, index, target)
            self.emit("store", [addr, value], node, dest=False)
        elif isinstance(target, ast.Tuple | ast.List):
            raise self.err(
                target, "unpacking is not in the language", "assign each name separately"
            )
        else:
            raise self.err(target, "only variables and array elements can be assigned")

    def local(self, target: ast.Name) -> Value:
        what = (
            self.scope.resolve(target) if target.id not in self.scope.locals else Resolved("local")
        )
        if what.kind != "local":
            raise self.err(
                target,
                f"{target.id!r} is an array and cannot be assigned",
                f"assign its elements: {target.id}[i] = ...",
            )
        return self.variable(target.id)

    def stmt_AugAssign(self, node: ast.AugAssign) -> None:
        op = self.binop_name(node.op, node)
        if isinstance(node.target, ast.Name):
            var = self.local(node.target)
            self.assign(var, self.binary(op, var, self.expr(node.value), node), node)
            return
        if isinstance(node.target, ast.Subscript):
            base = self.array(node.target.value)
            index = self.index(node.target)
            addr = self.address(base, index, node.target)
            old = self.emit("load", [addr], node.target)
            new = self.binary(op, old, self.expr(node.value), node)  # type: ignore[arg-type]
            self.emit("store", [addr, new], node, dest=False)
            return
        raise self.err(node.target, "only variables and array elements can be assigned")

    def declare_shared(self, target: ast.expr, call: ast.Call) -> None:
        if self.kind != "kernel":
            raise self.err(
                call,
                "shared arrays are declared in kernels",
                "pass the array to the device function",
            )
        if self.depth:
            raise self.err(call, "shared arrays are declared at the top level of the kernel body")
        if not isinstance(target, ast.Name):
            raise self.err(target, "a shared array needs a name: buf = shared(n)")
        if target.id in self.shared:
            raise self.err(target, f"shared array {target.id!r} is declared twice")
        self.check_call_shape(call, 1)
        size = self.expr(call.args[0])
        if not isinstance(size, Const) or size.value <= 0:
            raise self.err(
                call.args[0],
                "the size of a shared array is a positive constant",
                "write shared(64)",
            )
        self.shared[target.id] = SharedArray(
            target.id, size.value, self.shared_bytes, self.scope.pos(target)
        )
        self.shared_bytes += WORD * size.value

    def stmt_If(self, node: ast.If) -> None:
        then, join = self.new_block(), self.new_block()
        other = self.new_block() if node.orelse else join
        self.cond(node.test, then, other)
        self.start(then)
        self.nested(node.body)
        self.jump(join)
        if node.orelse:
            self.start(other)
            self.nested(node.orelse)
            self.jump(join)
        self.start(join)

    def stmt_While(self, node: ast.While) -> None:
        if node.orelse:
            raise self.err(node, "while ... else is not in the language", "use a flag variable")
        header, body, latch, after = (self.new_block() for _ in range(4))
        self.jump(header)
        self.start(header)
        self.cond(node.test, body, after)
        self.loop_body(node.body, body, latch, after)
        self.start(latch)
        self.jump(header, node)
        self.start(after)

    def loop_body(self, stmts: list[ast.stmt], body: str, latch: str, after: str) -> None:
        self.start(body)
        self.loops.append(_Loop(latch, after))
        self.nested(stmts)
        self.loops.pop()
        self.jump(latch)

    def stmt_For(self, node: ast.For) -> None:
        if node.orelse:
            raise self.err(node, "for ... else is not in the language", "use a flag variable")
        if not isinstance(node.target, ast.Name):
            raise self.err(node.target, "the loop variable must be a plain name")
        call = node.iter
        if not (
            isinstance(call, ast.Call) and self.resolve_callee(call) == Resolved("builtin", "range")
        ):
            raise self.err(
                node.iter,
                "for loops iterate over range(...) only",
                "write for i in range(a, b, step)",
            )
        if call.keywords or not 1 <= len(call.args) <= 3:
            raise self.err(call, "range takes 1 to 3 positional arguments")
        args = [self.expr(a) for a in call.args]
        start, stop = (Const(0), args[0]) if len(args) == 1 else (args[0], args[1])
        step = args[2] if len(args) == 3 else Const(1)
        if not isinstance(step, Const) or step.value == 0:
            raise self.err(
                call.args[2] if len(call.args) == 3 else call,
                "the step of range must be a nonzero constant",
                "write a while loop for a variable step",
            )
        it, end = self.hidden_variable("it"), self.hidden_variable("end")
        self.assign(it, start, node)
        self.assign(end, stop, node)
        header, body, latch, after = (self.new_block() for _ in range(4))
        self.jump(header)
        self.start(header)
        test = self.emit("lt" if step.value > 0 else "gt", [it, end], node)
        self.terminate("br", [test], (body, after), node)  # type: ignore[list-item]
        self.start(body)
        self.assign(self.local(node.target), it, node.target)
        self.loops.append(_Loop(latch, after))
        self.nested(node.body)
        self.loops.pop()
        self.jump(latch)
        self.start(latch)
        self.assign(it, self.binary("add", it, step, node), node)
        self.jump(header, node)
        self.start(after)

    def stmt_Break(self, node: ast.Break) -> None:
        self.jump(self.loops[-1].break_to, node)

    def stmt_Continue(self, node: ast.Continue) -> None:
        self.jump(self.loops[-1].continue_to, node)

    def stmt_Return(self, node: ast.Return) -> None:
        if node.value is not None:
            self.assign(self.variable("$ret"), self.expr(node.value), node)
        elif self.returns:
            raise self.err(
                node, f"{self.src.name} returns a value on other paths", "return a value here too"
            )
        self.jump(self.exit_label, node)

    # -- conditions -----------------------------------------------------------------------------

    def cond(self, node: ast.expr, then: str, other: str) -> None:
        """Branch to ``then`` when ``node`` is true, else to ``other`` (short-circuit)."""
        if isinstance(node, ast.BoolOp):
            for value in node.values[:-1]:
                nxt = self.new_block()
                if isinstance(node.op, ast.And):
                    self.cond(value, nxt, other)
                else:
                    self.cond(value, then, nxt)
                self.start(nxt)
            self.cond(node.values[-1], then, other)
            return
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            self.cond(node.operand, other, then)
            return
        if isinstance(node, ast.Compare) and len(node.ops) > 1:
            self.cond_chain(node, then, other)
            return
        value = self.expr(node)
        if isinstance(value, Const):
            self.jump(then if value.value else other, node)
            return
        self.terminate("br", [value], (then, other), node)

    def cond_chain(self, node: ast.Compare, then: str, other: str) -> None:
        left = self.expr(node.left)
        for i, (op, right_node) in enumerate(zip(node.ops, node.comparators, strict=True)):
            right = self.expr(right_node)
            test = self.binary(self.cmp_name(op, node), left, right, node)
            if i == len(node.ops) - 1:
                if isinstance(test, Const):
                    self.jump(then if test.value else other, node)
                else:
                    self.terminate("br", [test], (then, other), node)
                return
            nxt = self.new_block()
            if isinstance(test, Const):
                self.jump(nxt if test.value else other, node)
            else:
                self.terminate("br", [test], (nxt, other), node)
            self.start(nxt)
            left = right

    # -- expressions ----------------------------------------------------------------------------

    def expr(self, node: ast.expr) -> Operand:
        handler = getattr(self, f"expr_{type(node).__name__}", None)
        if handler is None:
            raise self.err(
                node,
                f"this expression ({type(node).__name__}) is not in the language",
                "kernels compute with int32 scalars, array elements and calls",
            )
        return handler(node)

    def expr_Constant(self, node: ast.Constant) -> Operand:
        return Const(const_value(self.scope.pos(node), node.value))

    def expr_Name(self, node: ast.Name) -> Operand:
        what = self.scope.resolve(node)
        if what.kind == "local":
            return self.variable(node.id)
        if what.kind == "const":
            return Const(what.obj)
        if what.kind in ("array", "shared"):
            raise self.err(
                node,
                f"array {node.id!r} is not a value",
                f"index it ({node.id}[i]) or pass it to a device function",
            )
        raise self.err(node, f"{node.id!r} is a function", f"call it: {node.id}(...)")

    def expr_Attribute(self, node: ast.Attribute) -> Operand:
        what = self.scope.resolve(node)
        if what.kind == "const":
            return Const(what.obj)
        raise self.err(
            node, f"{ast.unparse(node)} is not a value", "call functions, use int constants"
        )

    def binop_name(self, op: ast.operator, node: ast.AST) -> str:
        if type(op) in BAD_BIN_OPS:
            raise self.err(
                node,
                f"the operator {type(op).__name__} is not in the language",
                BAD_BIN_OPS[type(op)],
            )
        return BIN_OPS[type(op)]

    def cmp_name(self, op: ast.cmpop, node: ast.AST) -> str:
        if type(op) not in CMP_OPS:
            raise self.err(
                node,
                f"the comparison {type(op).__name__} is not in the language",
                "compare int32 values with < <= > >= == !=",
            )
        return CMP_OPS[type(op)]

    def binary(self, op: str, a: Operand, b: Operand, node: ast.AST) -> Operand:
        if isinstance(a, Const) and isinstance(b, Const):
            return Const(int32.BINARY[op][1](a.value, b.value))
        return self.emit(op, [a, b], node)  # type: ignore[return-value]

    def unary(self, op: str, a: Operand, node: ast.AST) -> Operand:
        if isinstance(a, Const):
            return Const(int32.UNARY[op][1](a.value))
        return self.emit(op, [a], node)  # type: ignore[return-value]

    def expr_BinOp(self, node: ast.BinOp) -> Operand:
        op = self.binop_name(node.op, node)
        return self.binary(op, self.expr(node.left), self.expr(node.right), node)

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Operand:
        operand = self.expr(node.operand)
        if isinstance(node.op, ast.UAdd):
            return operand
        op = {ast.USub: "neg", ast.Invert: "inv", ast.Not: "lnot"}[type(node.op)]
        return self.unary(op, operand, node)

    def expr_Compare(self, node: ast.Compare) -> Operand:
        if len(node.ops) == 1:
            op = self.cmp_name(node.ops[0], node)
            return self.binary(op, self.expr(node.left), self.expr(node.comparators[0]), node)
        return self.select(node, lambda t, f: self.cond_chain(node, t, f), Const(1), Const(0))

    def expr_BoolOp(self, node: ast.BoolOp) -> Operand:
        """``a and b`` is ``a`` when ``a`` is false, else ``b`` (Python's value semantics)."""
        result = self.hidden_variable("bool")
        done = self.new_block()
        for value in node.values[:-1]:
            v = self.expr(value)
            self.assign(result, v, node)
            nxt = self.new_block()
            if isinstance(v, Const):
                self.jump(nxt if bool(v.value) == isinstance(node.op, ast.And) else done, node)
            else:
                targets = (nxt, done) if isinstance(node.op, ast.And) else (done, nxt)
                self.terminate("br", [v], targets, node)
            self.start(nxt)
        self.assign(result, self.expr(node.values[-1]), node)
        self.jump(done)
        self.start(done)
        return result

    def expr_IfExp(self, node: ast.IfExp) -> Operand:
        result = self.hidden_variable("sel")
        then, other, done = self.new_block(), self.new_block(), self.new_block()
        self.cond(node.test, then, other)
        self.start(then)
        self.assign(result, self.expr(node.body), node)
        self.jump(done)
        self.start(other)
        self.assign(result, self.expr(node.orelse), node)
        self.jump(done)
        self.start(done)
        return result

    def select(
        self, node: ast.expr, branch: Callable[[str, str], None], yes: Operand, no: Operand
    ) -> Operand:
        result = self.hidden_variable("sel")
        then, other, done = self.new_block(), self.new_block(), self.new_block()
        branch(then, other)
        for label, value in ((then, yes), (other, no)):
            self.start(label)
            self.assign(result, value, node)
            self.jump(done)
        self.start(done)
        return result

    def expr_Subscript(self, node: ast.Subscript) -> Operand:
        base = self.array(node.value)
        index = self.index(node)
        return self.emit("load", [self.address(base, index, node)], node)  # type: ignore[return-value]

    def index(self, node: ast.Subscript) -> Operand:
        if isinstance(node.slice, ast.Slice):
            raise self.err(node, "slices are not in the language", "index one element at a time")
        return self.expr(node.slice)

    def array(self, node: ast.expr) -> Operand:
        """The base address of the array ``node`` names."""
        if isinstance(node, ast.Name):
            what = self.scope.resolve(node)
            if what.kind == "array":
                return self.array_params[node.id]
            if what.kind == "shared":
                if node.id not in self.shared:
                    raise self.err(node, f"shared array {node.id!r} is used before its declaration")
                return Const(int32.wrap(SHARED_BASE + self.shared[node.id].offset))
        raise self.err(
            node,
            f"{ast.unparse(node)} is not an array",
            "index array parameters (annotated Array) and shared arrays",
        )

    def address(self, base: Operand, index: Operand, node: ast.AST) -> Operand:
        offset = self.binary("mul", index, Const(WORD), node)
        return self.binary("add", base, offset, node)

    def expr_Call(self, node: ast.Call) -> Operand:
        return self.call(node, want_value=True)  # type: ignore[return-value]

    def resolve_callee(self, node: ast.Call) -> Resolved:
        if not isinstance(node.func, ast.Name | ast.Attribute):
            raise self.err(node, "only named functions can be called")
        return self.scope.resolve(node.func)

    def check_call_shape(self, node: ast.Call, arity: int) -> None:
        name = ast.unparse(node.func)
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            raise self.err(node, f"{name}() takes positional arguments only")
        if len(node.args) != arity:
            raise self.err(
                node, f"{name}() takes {arity} argument{'s' * (arity != 1)}, not {len(node.args)}"
            )

    def call(self, node: ast.Call, want_value: bool) -> Operand | None:
        what = self.resolve_callee(node)
        name = ast.unparse(node.func)
        if what.kind == "intrinsic":
            return self.call_intrinsic(what.obj, node, want_value)
        if what.kind == "builtin" and what.obj in BUILTIN_FUNCS:
            self.check_call_shape(node, BUILTIN_FUNCS[what.obj])
            args = [self.expr(a) for a in node.args]
            if what.obj == "abs":
                return self.unary("abs", args[0], node)
            return self.binary(what.obj, args[0], args[1], node)
        if what.kind == "device":
            return self.call_device(what.obj, node, want_value)
        if what.kind == "builtin":
            raise self.err(node, "range(...) is only the iterable of a for loop")
        if what.kind == "kernel":
            raise self.err(node, f"kernel {name} cannot be called", "call a @device function")
        raise self.err(
            node,
            f"{name} cannot be called",
            "call device functions, the intrinsics and min/max/abs",
        )

    def call_intrinsic(
        self, fn: lang.Intrinsic, node: ast.Call, want_value: bool
    ) -> Operand | None:
        self.check_call_shape(node, fn.arity)
        if fn.kind == "csr":
            return self.emit("csr", [], node, attr=fn.name)
        if fn.kind == "barrier":
            if want_value:
                raise self.err(node, "barrier() gives no value", "call it as a statement")
            self.emit("barrier", [], node, dest=False)
            return None
        if fn.kind == "shared":
            raise self.err(
                node,
                "shared(n) declares an array",
                "write name = shared(n) at the top of the kernel",
            )
        base = self.array(node.args[0])
        index = self.expr(node.args[1])
        value = self.expr(node.args[2])
        addr = self.address(base, index, node)
        return self.emit("atomic", [addr, value], node, attr=fn.name.removeprefix("atomic_"))

    def call_device(self, fn: lang.Device, node: ast.Call, want_value: bool) -> Operand | None:
        sig = self.signature_of(fn)
        self.check_call_shape(node, len(sig.params))
        if want_value and not sig.returns:
            raise self.err(
                node, f"device function {fn.name} returns no value", "call it as a statement"
            )
        args: list[Operand] = []
        for param, arg in zip(sig.params, node.args, strict=True):
            if param.kind == "array":
                args.append(self.array(arg))
            else:
                if isinstance(arg, ast.Name) and self.scope.resolve(arg).kind in (
                    "array",
                    "shared",
                ):
                    raise self.err(
                        arg, f"parameter {param.name!r} of {fn.name} is an int, not an array"
                    )
                args.append(self.expr(arg))
        if fn not in self.callees:
            self.callees.append(fn)
        return self.emit("call", args, node, attr=fn.name, dest=sig.returns)


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


# ----------------------------------------------------------------------------------------------
# Programs


def build_module(k: lang.Kernel) -> Module:
    """The kernel and every device function it calls, transitively, as IR on source variables
    (checked against the language)."""
    signatures: dict[lang.Device, Signature] = {}

    def signature_of(fn: lang.Device) -> Signature:
        if fn not in signatures:
            signatures[fn] = Scope(fn.source, "device").signature()
        return signatures[fn]

    functions: dict[str, Function] = {}
    owners: dict[str, lang.KernelFunction] = {}
    work: list[lang.KernelFunction] = [k]
    while work:
        f = work.pop(0)
        if f.name in owners:
            if owners[f.name] is not f:
                raise LanguageError(
                    f.source.pos(f.source.tree),
                    f"two functions named {f.name} ({owners[f.name]!r} and {f!r})",
                    "rename one of them",
                )
            continue
        owners[f.name] = f
        built = _Builder(f.source, f.kind, signature_of).build()
        functions[f.name] = built.function
        work.extend(built.callees)
    return Module(functions[k.name], functions, owners)
