"""Random SIMT programs for property tests: Hypothesis strategies that build a program
(assignments, divergent if/else, loops with tid-dependent trip counts and break/continue,
jump tables through ``jalr``, calls of device functions with caller-allocated frames, bounded
recursion, early exits, global loads and stores, barriers with shared memory, AMOs and
``lr.w``/``sc.w`` retry loops) and render it as assembly. Only a jump table carries a
reconvergence hint (its join: an indirect jump has no successors in the binary's control-flow
graph); every other reconvergence PC comes from the binary's IPDOMs.

Conditions diverge on the thread's identity (tid, lane, warp, block: the SIMT CSRs) and on
data (the variables, which loads from ``input`` feed). Every thread stores its variables to
``out[gid * NVARS ...]`` and exits with ``v0 & 0xff``. Loops are bounded and recursion depth
is bounded, so every program terminates; barriers only appear at the top level of the kernel
(reached by every thread) and never together with early exits (a thread that exited can never
arrive). The threads communicate only through barriers (shared memory) and atomics, whose
results never flow back into the variables: each AMO word of ``acc`` takes one operation
whose final value does not depend on the order of the threads (add, and, or, xor, min, max,
minu, maxu; the ``lr.w``/``sc.w`` loops add), so every policy must leave the same memory.
A program without barriers and atomics (:attr:`Program.communicates` false) can run one
thread at a time elsewhere: :func:`thread_source` gives the program of one thread, the SIMT
instructions replaced by what they mean for it, for qemu-user.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hypothesis import strategies as st

NVARS = 4
VARS = ("s1", "s2", "s3", "s4")  # v0..v3
COUNTERS = ("s5", "s6", "s7")  # loop counters by nesting depth
LIMITS = ("s8", "s9", "s10")  # loop trip counts by nesting depth
TID, GID = "s0", "s11"
OPS = ("add", "sub", "xor", "and", "or", "mul", "sll", "srl")
INPUT_WORDS = 64
#: The AMO of each word of ``acc`` (word i takes ATOMICS[i]); the lr.w / sc.w loops add into
#: the word after them. The initial words are each operation's identity-like start values.
ATOMICS = ("add", "and", "or", "xor", "min", "max", "minu", "maxu")
ACC_INIT = (0, 0xFFFFFFFF, 0, 0, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0)
LRSC_WORD = len(ATOMICS)
ACC_WORDS = LRSC_WORD + 1
#: Condition kinds: on variables (data), the thread index, the lane, the warp, the block.
CONDITIONS = ("lt", "odd", "mod3", "tidlt", "lanelt", "warpodd", "ctaeven", "datalt")


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
    has_atomics: bool = False
    has_retries: bool = False  # lr.w / sc.w loops: how often they retry depends on timing

    @property
    def communicates(self) -> bool:
        """Whether threads see each other's work (barriers with shared memory, atomics)."""
        return self.has_barrier or self.has_atomics


def _cond(draw: st.DrawFn) -> tuple:
    """A condition on the variables (data), the thread's identity, or both, so that it
    diverges."""
    return (
        draw(st.sampled_from(CONDITIONS)),
        draw(st.integers(0, NVARS - 1)),
        draw(st.integers(0, NVARS - 1)),
        draw(st.integers(0, 7)),
    )


@st.composite
def _statements(
    draw: st.DrawFn, depth: int, loop_depth: int, ctx: dict, escape: int = 0
) -> list[Node]:
    """Statements at nesting ``depth`` inside ``loop_depth`` loops, of which ``escape`` are
    outside the innermost jump table (break and continue may not leave a jump table's case,
    nor may an exit: its join is the case's reconvergence point)."""
    out: list[Node] = []
    for _ in range(draw(st.integers(1, 4 if depth == 0 else 3))):
        choices = ["assign", "assign", "store", "load"]
        if depth < 3:
            choices += ["if", "if", "switch"]
        if loop_depth < len(COUNTERS) and depth < 3:
            choices.append("loop")
        if loop_depth > escape:
            choices += ["break", "continue"]
        if ctx["functions"]:
            choices.append("call")
        choices.append("recurse")
        if depth == 0 and ctx["barriers"] and not ctx["exit"]:
            choices.append("barrier")
        if depth > 0 and not ctx["barrier"] and not ctx["in_switch"]:
            choices.append("exit")
        if ctx["atomics"]:
            choices += ["atomic", "lrsc"]
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
            then = draw(_statements(depth + 1, loop_depth, ctx, escape))
            other = draw(st.one_of(st.just([]), _statements(depth + 1, loop_depth, ctx, escape)))
            out.append(Node("if", _cond(draw), then, other))
        elif kind == "switch":
            outer, ctx["in_switch"] = ctx["in_switch"], True
            cases = [
                Node("case", (), draw(_statements(depth + 1, loop_depth, ctx, loop_depth)))
                for _ in range(draw(st.integers(2, 5)))
            ]
            ctx["in_switch"] = outer
            out.append(Node("switch", (draw(st.integers(0, NVARS - 1)), len(cases)), cases))
        elif kind == "loop":
            trip = draw(st.sampled_from(("tid", "var", "const")))
            body = draw(_statements(depth + 1, loop_depth + 1, ctx, escape))
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
        elif kind == "atomic":
            word = draw(st.integers(0, len(ATOMICS) - 1))
            out.append(Node("atomic", (word, draw(st.integers(0, NVARS - 1)))))
        elif kind == "lrsc":
            out.append(Node("lrsc", (draw(st.integers(0, NVARS - 1)),)))
        else:
            ctx["exit"] = True
            out.append(Node("exit", (_cond(draw),)))
    return out


@st.composite
def programs(
    draw: st.DrawFn,
    *,
    barriers: bool = True,
    unstructured: bool = True,
    atomics: bool = True,
) -> Program:
    """A random program. ``barriers=False`` leaves barriers out, ``atomics=False`` AMOs and
    lr.w / sc.w; ``unstructured=False`` leaves out break, continue, early exits and jump
    tables, so that every branch reconverges at its IPDOM."""
    functions = draw(st.integers(0, 2))
    ctx = {"functions": functions, "exit": not unstructured, "barrier": False,
           "barriers": barriers, "break": False, "in_switch": False,
           "atomics": atomics}  # fmt: skip
    kernel = draw(_statements(0, 0, ctx))
    if not unstructured:
        kernel = _strip_unstructured(kernel)
    program = Program(kernel, functions)
    program.has_break = _contains(kernel, ("break", "continue"))
    program.has_exit = _contains(kernel, ("exit",))
    program.has_barrier = _contains(kernel, ("barrier",))
    program.has_atomics = _contains(kernel, ("atomic", "lrsc"))
    program.has_retries = _contains(kernel, ("lrsc",))
    return program


def _strip_unstructured(nodes: list[Node]) -> list[Node]:
    kept = []
    for node in nodes:
        if node.kind in ("break", "continue", "exit", "barrier", "switch"):
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
        self.tables: list[tuple[str, list[str]]] = []  # jump tables: (label, case labels)

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
        elif kind == "tidlt":
            self.emit(f"li   t1, {k}")
            self.emit(f"bge  {TID}, t1, {false_label}")
        elif kind == "lanelt":
            self.emit("csrr t1, laneid")
            self.emit(f"li   t2, {k}")
            self.emit(f"bge  t1, t2, {false_label}")
        elif kind == "warpodd":
            self.emit("csrr t1, warpid")
            self.emit("andi t1, t1, 1")
            self.emit(f"beqz t1, {false_label}")
        elif kind == "ctaeven":
            self.emit("csrr t1, ctaid")
            self.emit(f"add  t1, t1, {va}")
            self.emit("andi t1, t1, 1")
            self.emit(f"bnez t1, {false_label}")
        else:  # datalt: a loaded input word against a variable
            self.emit(f"andi t1, {va}, {INPUT_WORDS - 1}")
            self.emit("slli t1, t1, 2")
            self.emit("la   t2, input")
            self.emit("add  t1, t1, t2")
            self.emit("lw   t1, 0(t1)")
            self.emit(f"bge  t1, {vb}, {false_label}")

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

    def do_switch(self, node: Node) -> None:
        """A jump table: case (v + tid) mod K, each case ending at the join, which the hint
        names (the reconvergence PC of the indirect jump)."""
        var, k = node.args
        table, join = self.label("table"), self.label("join")
        cases = [self.label("case") for _ in node.body]
        self.emit(f"add  t1, {VARS[var]}, {TID}")
        self.emit(f"li   t2, {k}")
        self.emit("remu t1, t1, t2")
        self.emit("slli t1, t1, 2")
        self.emit(f"la   t2, {table}")
        self.emit("add  t1, t1, t2")
        self.emit("lw   t1, 0(t1)")
        self.emit(f"rhint {join}")
        self.emit("jr   t1")
        for label, case in zip(cases, node.body, strict=True):
            self.lines.append(f"{label}:")
            self.block(case.body)
            self.emit(f"j    {join}")
        self.lines.append(f"{join}:")
        self.tables.append((table, cases))

    def do_atomic(self, node: Node) -> None:
        word, var = node.args
        self.emit("la   t2, acc")
        self.emit(f"addi t2, t2, {4 * word}")
        self.emit(f"amo{ATOMICS[word]}.w x0, {VARS[var]}, (t2)")

    def do_lrsc(self, node: Node) -> None:
        """acc[LRSC_WORD] += v with an lr.w / sc.w retry loop (the loaded value is not kept)."""
        (var,) = node.args
        retry = self.label("retry")
        self.emit("la   t2, acc")
        self.emit(f"addi t2, t2, {4 * LRSC_WORD}")
        self.lines.append(f"{retry}:")
        self.emit("lr.w t1, (t2)")
        self.emit(f"add  t1, t1, {VARS[var]}")
        self.emit("sc.w t1, t1, (t2)")
        self.emit(f"bnez t1, {retry}")

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
    for table, cases in r.tables:
        r.lines.append(f"{table}:")
        r.lines += [f"    .word {case}" for case in cases]
    r.lines.append("acc:")
    r.lines += [f"    .word {value:#x}" for value in (*ACC_INIT, 0)]
    r.lines += ["out:", f"    .space {4 * NVARS * 256}"]
    return "\n".join(r.lines) + "\n"


#: The SIMT CSRs a program reads, by assembler name.
_CSR = re.compile(r"^(\s*)csrr\s+(\w+),\s*(tid|ntid|ctaid|nctaid|laneid|warpid|warpsize)\s*$", re.M)


def thread_source(source: str, identity: dict[str, int]) -> str:
    """The program of one thread (``identity``: the value of each SIMT CSR for it, by name) for
    a plain RISC-V simulator: every ``csrr`` of a SIMT CSR becomes ``li`` of its value and every
    ``rhint`` a ``nop`` — one instruction each, as long as the values fit an ``addi``, so that
    the thread executes as many instructions as on the SM."""
    if any(not 0 <= v < 2048 for v in identity.values()):
        raise ValueError(f"identity values must fit an addi immediate: {identity}")
    source = _CSR.sub(lambda m: f"{m[1]}li   {m[2]}, {identity[m[3]]}", source)
    return re.sub(r"(?m)^(\s*)rhint\s+\S+\s*$", r"\1nop", source)
