"""Random SIMT programs for property tests: Hypothesis strategies that build a structured program
(assignments, divergent if/else, loops with tid-dependent trip counts and break/continue,
calls of device functions with caller-allocated frames, bounded recursion, early exits,
global loads and stores, barriers with shared memory) and render it as assembly without
reconvergence hints, so that the SM takes every reconvergence PC from the binary's IPDOMs.

Every thread stores its variables to ``out[gid * NVARS ...]`` and exits with ``v0 & 0xff``.
Loops are bounded and recursion depth is bounded, so every program terminates; barriers only
appear at the top level of the kernel (reached by every thread) and never together with early
exits (a thread that exited can never arrive).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st

NVARS = 4
VARS = ("s1", "s2", "s3", "s4")  # v0..v3
COUNTERS = ("s5", "s6", "s7")  # loop counters by nesting depth
LIMITS = ("s8", "s9", "s10")  # loop trip counts by nesting depth
TID, GID = "s0", "s11"
OPS = ("add", "sub", "xor", "and", "or", "mul", "sll", "srl")
INPUT_WORDS = 64


@dataclass
class Node:
    kind: str
    args: tuple = ()
    body: list[Node] = field(default_factory=list)
    other: list[Node] = field(default_factory=list)


@dataclass
class Program:
    kernel: list[Node]
    functions: int  # number of leaf device functions f0..
    has_break: bool = False
    has_exit: bool = False
    has_barrier: bool = False


def _cond(draw: st.DrawFn) -> tuple:
    """A condition on a variable and the thread id (so that it diverges)."""
    return (
        draw(st.sampled_from(("lt", "odd", "mod3", "tidlt"))),
        draw(st.integers(0, NVARS - 1)),
        draw(st.integers(0, NVARS - 1)),
        draw(st.integers(0, 7)),
    )


@st.composite
def _statements(draw: st.DrawFn, depth: int, loop_depth: int, ctx: dict) -> list[Node]:
    out: list[Node] = []
    for _ in range(draw(st.integers(1, 4 if depth == 0 else 3))):
        choices = ["assign", "assign", "store", "load"]
        if depth < 3:
            choices += ["if", "if"]
        if loop_depth < len(COUNTERS) and depth < 3:
            choices.append("loop")
        if loop_depth:
            choices += ["break", "continue"]
        if ctx["functions"]:
            choices.append("call")
        choices.append("recurse")
        if depth == 0 and not ctx["exit"]:
            choices.append("barrier")
        if depth > 0 and not ctx["barrier"]:
            choices.append("exit")
        kind = draw(st.sampled_from(choices))
        if kind == "assign":
            out.append(
                Node(
                    "assign",
                    (
                        draw(st.integers(0, NVARS - 1)),
                        draw(st.sampled_from(OPS)),
                        draw(st.integers(0, NVARS - 1)),
                        draw(st.one_of(st.integers(0, NVARS - 1), st.just("tid"))),
                    ),
                )
            )
        elif kind == "store":
            out.append(Node("store", (draw(st.integers(0, NVARS - 1)),)))
        elif kind == "load":
            out.append(
                Node("load", (draw(st.integers(0, NVARS - 1)), draw(st.integers(0, NVARS - 1))))
            )
        elif kind == "if":
            then = draw(_statements(depth + 1, loop_depth, ctx))
            other = draw(st.one_of(st.just([]), _statements(depth + 1, loop_depth, ctx)))
            out.append(Node("if", _cond(draw), then, other))
        elif kind == "loop":
            trip = draw(st.sampled_from(("tid", "var", "const")))
            body = draw(_statements(depth + 1, loop_depth + 1, ctx))
            out.append(Node("loop", (trip, draw(st.integers(0, NVARS - 1)), loop_depth), body))
        elif kind in ("break", "continue"):
            ctx["break"] = True
            out.append(Node(kind, (_cond(draw), loop_depth - 1)))
        elif kind == "call":
            out.append(
                Node(
                    "call",
                    (draw(st.integers(0, ctx["functions"] - 1)), draw(st.integers(0, NVARS - 1))),
                )
            )
        elif kind == "recurse":
            out.append(Node("recurse", (draw(st.integers(0, NVARS - 1)),)))
        elif kind == "barrier":
            ctx["barrier"] = True
            out.append(Node("barrier", (draw(st.integers(0, NVARS - 1)),)))
        else:
            ctx["exit"] = True
            out.append(Node("exit", (_cond(draw),)))
    return out


@st.composite
def programs(draw: st.DrawFn, *, barriers: bool = True, unstructured: bool = True) -> Program:
    """A random program. ``barriers=False`` leaves barriers out; ``unstructured=False`` leaves
    out break, continue and early exits, so that every branch reconverges at its IPDOM."""
    functions = draw(st.integers(0, 2))
    ctx = {"functions": functions, "exit": not unstructured, "barrier": not barriers,
           "break": False}  # fmt: skip
    kernel = draw(_statements(0, 0, ctx))
    if not unstructured:
        kernel = _strip_unstructured(kernel)
    program = Program(kernel, functions)
    program.has_break = _contains(kernel, ("break", "continue"))
    program.has_exit = _contains(kernel, ("exit",))
    program.has_barrier = _contains(kernel, ("barrier",))
    return program


def _strip_unstructured(nodes: list[Node]) -> list[Node]:
    kept = []
    for node in nodes:
        if node.kind in ("break", "continue", "exit", "barrier"):
            continue
        node.body = _strip_unstructured(node.body)
        node.other = _strip_unstructured(node.other)
        kept.append(node)
    return kept or [Node("store", (0,))]


def _contains(nodes: list[Node], kinds: tuple[str, ...]) -> bool:
    return any(n.kind in kinds or _contains(n.body + n.other, kinds) for n in nodes)


# ----------------------------------------------------------------------------------------------
# Rendering


class _Renderer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.labels = 0
        self.loops: list[tuple[str, str]] = []  # (continue label, exit label)

    def label(self, stem: str) -> str:
        self.labels += 1
        return f"{stem}{self.labels}"

    def emit(self, text: str) -> None:
        self.lines.append(f"    {text}")

    def cond(self, cond: tuple, false_label: str) -> None:
        """Branch to ``false_label`` when ``cond`` does not hold."""
        kind, a, b, k = cond
        va, vb = VARS[a], VARS[b]
        if kind == "lt":
            self.emit(f"bge  {va}, {vb}, {false_label}")
        elif kind == "odd":
            self.emit(f"add  t1, {va}, {TID}")
            self.emit("andi t1, t1, 1")
            self.emit(f"beqz t1, {false_label}")
        elif kind == "mod3":
            self.emit(f"add  t1, {va}, {TID}")
            self.emit("li   t2, 3")
            self.emit("remu t1, t1, t2")
            self.emit(f"bnez t1, {false_label}")
        else:
            self.emit(f"li   t1, {k}")
            self.emit(f"bge  {TID}, t1, {false_label}")

    def block(self, nodes: list[Node]) -> None:
        for node in nodes:
            getattr(self, f"do_{node.kind}")(node)

    def do_assign(self, node: Node) -> None:
        dst, op, a, b = node.args
        src_b = TID if b == "tid" else VARS[b]
        if op in ("sll", "srl"):
            self.emit(f"andi t1, {src_b}, 7")
            src_b = "t1"
        self.emit(f"{op:<4} {VARS[dst]}, {VARS[a]}, {src_b}")

    def do_store(self, node: Node) -> None:
        (var,) = node.args
        self.emit(f"slli t1, {GID}, {2 + 2}")  # gid * NVARS * 4
        self.emit("la   t2, out")
        self.emit("add  t1, t1, t2")
        self.emit(f"sw   {VARS[var]}, {4 * var}(t1)")

    def do_load(self, node: Node) -> None:
        dst, index = node.args
        self.emit(f"andi t1, {VARS[index]}, {INPUT_WORDS - 1}")
        self.emit("slli t1, t1, 2")
        self.emit("la   t2, input")
        self.emit("add  t1, t1, t2")
        self.emit("lw   t1, 0(t1)")
        self.emit(f"add  {VARS[dst]}, {VARS[dst]}, t1")

    def do_if(self, node: Node) -> None:
        other, join = self.label("else"), self.label("join")
        self.cond(node.args, other)
        self.block(node.body)
        if node.other:
            self.emit(f"j    {join}")
        self.lines.append(f"{other}:")
        self.block(node.other)
        self.lines.append(f"{join}:")

    def do_loop(self, node: Node) -> None:
        trip, var, depth = node.args
        counter, limit = COUNTERS[depth], LIMITS[depth]
        head, cont, done = self.label("loop"), self.label("next"), self.label("done")
        if trip == "tid":
            self.emit(f"andi {limit}, {TID}, 3")
        elif trip == "var":
            self.emit(f"andi {limit}, {VARS[var]}, 3")
        else:
            self.emit(f"li   {limit}, 2")
        self.emit(f"li   {counter}, 0")
        self.emit(f"bge  {counter}, {limit}, {done}")
        self.lines.append(f"{head}:")
        self.loops.append((cont, done))
        self.block(node.body)
        self.loops.pop()
        self.lines.append(f"{cont}:")
        self.emit(f"addi {counter}, {counter}, 1")
        self.emit(f"blt  {counter}, {limit}, {head}")
        self.lines.append(f"{done}:")

    def _jump_if(self, cond: tuple, target: str) -> None:
        skip = self.label("skip")
        self.cond(cond, skip)
        self.emit(f"j    {target}")
        self.lines.append(f"{skip}:")

    def do_break(self, node: Node) -> None:
        cond, depth = node.args
        self._jump_if(cond, self.loops[depth][1])

    def do_continue(self, node: Node) -> None:
        cond, depth = node.args
        self._jump_if(cond, self.loops[depth][0])

    def _call(self, function: str, var: int) -> None:
        self.emit(f"mv   a0, {VARS[var]}")
        self.emit("addi sp, sp, -16")  # the caller allocates the callee's frame (seed 000)
        self.emit(f"call {function}")
        self.emit("addi sp, sp, 16")
        self.emit(f"add  {VARS[var]}, {VARS[var]}, a0")

    def do_call(self, node: Node) -> None:
        function, var = node.args
        self._call(f"f{function}", var)

    def do_recurse(self, node: Node) -> None:
        (var,) = node.args
        self.emit(f"andi a1, {TID}, 3")  # recursion depth 0..3, per thread
        self._call("depth", var)

    def do_barrier(self, node: Node) -> None:
        (var,) = node.args
        self.emit("li   t2, 0x40000000")
        self.emit(f"slli t1, {TID}, 2")
        self.emit("add  t1, t1, t2")
        self.emit(f"sw   {VARS[var]}, 0(t1)")
        self.emit("bar")
        self.emit(f"addi t1, {TID}, 1")
        self.emit("csrr t2, ntid")
        self.emit("remu t1, t1, t2")
        self.emit("slli t1, t1, 2")
        self.emit("li   t2, 0x40000000")
        self.emit("add  t1, t1, t2")
        self.emit("lw   t1, 0(t1)")
        self.emit(f"add  {VARS[var]}, {VARS[var]}, t1")
        self.emit("bar")  # nobody overwrites shared words before all have read them

    def do_exit(self, node: Node) -> None:
        (cond,) = node.args
        skip = self.label("stay")
        self.cond(cond, skip)
        self.emit(f"andi a0, {VARS[0]}, 255")
        self.emit("li   a7, 93")
        self.emit("ecall")
        self.lines.append(f"{skip}:")


def render(program: Program) -> str:
    r = _Renderer()
    r.lines += ["    .text", "    .globl _start", "_start:"]
    r.emit(f"csrr {TID}, tid")
    r.emit("csrr t1, ntid")
    r.emit("csrr t2, ctaid")
    r.emit("mul  t1, t1, t2")
    r.emit(f"add  {GID}, t1, {TID}")
    for i, var in enumerate(VARS):
        r.emit(f"addi {var}, {TID}, {3 * i + 1}")
    r.block(program.kernel)
    for i in range(NVARS):
        r.do_store(Node("store", (i,)))
    r.emit(f"andi a0, {VARS[0]}, 255")
    r.emit("li   a7, 93")
    r.emit("ecall")
    for k in range(program.functions):  # leaf device functions: a0 -> a0, with a branch
        r.lines.append(f"f{k}:")
        r.emit("sw   ra, 12(sp)")
        r.emit(f"andi t1, a0, {k + 1}")
        r.emit(f"beqz t1, f{k}_even")
        r.emit(f"addi a0, a0, {7 * k + 5}")
        r.lines.append(f"f{k}_even:")
        r.emit(f"xori a0, a0, {k + 3}")
        r.emit("lw   ra, 12(sp)")
        r.emit("ret")
    # depth(a0, a1): a0 + a1 by recursion on a1 (a1 in 0..3), frames allocated by the caller
    r.lines.append("depth:")
    r.emit("sw   ra, 12(sp)")
    r.emit("beqz a1, depth_done")
    r.emit("addi a1, a1, -1")
    r.emit("addi a0, a0, 1")
    r.emit("addi sp, sp, -16")
    r.emit("call depth")
    r.emit("addi sp, sp, 16")
    r.lines.append("depth_done:")
    r.emit("lw   ra, 12(sp)")
    r.emit("ret")
    r.lines += ["    .data", "input:"]
    r.lines += [f"    .word {(i * 2654435761) & 0xFFFFFFFF:#x}" for i in range(INPUT_WORDS)]
    r.lines += ["out:", f"    .space {4 * NVARS * 256}"]
    return "\n".join(r.lines) + "\n"
