"""SSA construction (Cytron et al. 1991) in loop-closed form.

Phi functions go to the iterated dominance frontier of each variable's definitions, pruned by
liveness, and additionally to every exit block of a loop that defines the variable while the
variable is live there. The second kind is what the GSA form calls an eta function (Tu and
Padua 1995; seed 004 Sec 3.3): the value a variable has when the threads leave the loop, which
may differ between threads even when the value inside the loop does not (``d_in`` and
``d_out`` of seed 004 Fig 2.2). Every version of a variable ``x`` is named ``x.k`` in the order
the renaming walk creates them.
"""

from __future__ import annotations

from reconverge.golden import graphs
from reconverge.golden.compiler.errors import LanguageError
from reconverge.golden.compiler.ir import Block, Function, Instr, Value

#: Operand of a phi on a path where the variable has no value yet.
UNDEFINED = Value("<undefined>")


def variable_liveness(fn: Function) -> dict[str, set[Value]]:
    """Source variables live on entry to each block (before SSA construction)."""
    gen: dict[str, set[Value]] = {}
    kill: dict[str, set[Value]] = {}
    for label, block in fn.blocks.items():
        g, k = set(), set()
        for ins in block.all():
            g |= {u for u in ins.uses() if u in fn.variables and u not in k}
            if ins.dest in fn.variables:
                k.add(ins.dest)
        gen[label], kill[label] = g, k
    return graphs.live_sets(fn.entry, fn.succ, gen, kill)[0]  # type: ignore[return-value]


def to_ssa(fn: Function) -> None:
    """Rewrite ``fn`` (IR on source variables) into loop-closed SSA form, in place. Raises a
    LanguageError for a variable read on a path where it was never assigned."""
    idom = graphs.immediate_dominators(fn.entry, fn.succ)
    frontier = graphs.dominance_frontiers(fn.entry, fn.succ)
    loops = graphs.natural_loops(fn.entry, fn.succ)
    live = variable_liveness(fn)
    enclosing: dict[str, list[str]] = {label: [] for label in fn.blocks}
    for header, loop in loops.items():
        for label in loop.body:
            enclosing[label].append(header)  # type: ignore[index]
    _place_phis(fn, frontier, loops, enclosing, live)
    _Renamer(fn, idom).run()
    _check_defined(fn)
    remove_dead_phis(fn)
    fn.variables = set()


def _place_phis(
    fn: Function,
    frontier: dict[str, set[str]],
    loops: dict[str, graphs.Loop],
    enclosing: dict[str, list[str]],
    live: dict[str, set[Value]],
) -> None:
    preds = graphs.predecessors(fn.entry, fn.succ)
    defs: dict[Value, set[str]] = {v: set() for v in fn.variables}
    for label, block in fn.blocks.items():
        for ins in block.instrs:
            if ins.dest in defs:
                defs[ins.dest].add(label)
    for var in sorted(fn.variables, key=lambda v: v.name):
        placed: set[str] = set()
        work = list(defs[var])
        while work:
            label = work.pop()
            targets = set(frontier[label])
            for header in enclosing[label]:
                targets |= set(loops[header].exit_blocks)  # type: ignore[arg-type]
            for y in sorted(targets):
                if y in placed or var not in live[y]:
                    continue
                placed.add(y)
                block = fn.blocks[y]
                phi = Instr("phi", var, [var] * len(preds[y]), list(preds[y]))
                block.instrs.insert(0, phi)
                if y not in defs[var]:
                    work.append(y)


class _Renamer:
    def __init__(self, fn: Function, idom: dict[str, str | None]) -> None:
        self.fn = fn
        self.children = graphs.dominator_tree(idom)
        self.stacks: dict[Value, list[Value]] = {v: [] for v in fn.variables}
        self.counts: dict[str, int] = {}

    def fresh(self, var: Value) -> Value:
        k = self.counts.get(var.name, 0)
        self.counts[var.name] = k + 1
        version = Value(f"{var.name}.{k}", var=var.name)
        self.stacks[var].append(version)
        return version

    def current(self, var: Value) -> Value:
        stack = self.stacks[var]
        return stack[-1] if stack else UNDEFINED

    def run(self) -> None:
        order = list(self.fn.blocks)
        # Iterative dominator-tree walk (children in layout order).
        work: list[tuple[str, bool]] = [(self.fn.entry, False)]
        pushed: dict[str, list[Value]] = {}
        while work:
            label, done = work.pop()
            if done:
                for var in pushed.pop(label):
                    self.stacks[var].pop()
                continue
            pushed[label] = self.block(self.fn.blocks[label])
            work.append((label, True))
            kids = sorted(self.children[label], key=order.index)
            work.extend((kid, False) for kid in reversed(kids))

    def block(self, block: Block) -> list[Value]:
        defined: list[Value] = []
        for ins in block.all():
            if ins.op != "phi":
                ins.args = [
                    self.current(a) if isinstance(a, Value) and a in self.stacks else a
                    for a in ins.args
                ]
            if ins.dest is not None and ins.dest in self.stacks:
                var = ins.dest
                ins.dest = self.fresh(var)
                defined.append(var)
        for succ in block.succs():
            for phi in self.fn.blocks[succ].phis:
                for i, pred in enumerate(phi.attr):
                    arg = phi.args[i]
                    if pred == block.label and isinstance(arg, Value) and arg in self.stacks:
                        phi.args[i] = self.current(arg)
        return defined


def _check_defined(fn: Function) -> None:
    """A variable read where some path reaches it unassigned is an error at that read."""
    maybe: set[Value] = set()
    changed = True
    while changed:
        changed = False
        for _, ins in fn.instructions():
            if (
                ins.op == "phi"
                and ins.dest not in maybe
                and any(a is UNDEFINED or a in maybe for a in ins.args)
            ):
                maybe.add(ins.dest)  # type: ignore[arg-type]
                changed = True
    for _, ins in fn.instructions():
        if ins.op == "phi":
            continue
        for a in ins.args:
            if a is UNDEFINED or a in maybe:
                name = a.var if a is not UNDEFINED else "a variable"
                raise LanguageError(
                    ins.pos,
                    f"variable {name!r} may be used before it is assigned",
                    f"assign {name} on every path that leads here",
                )


def remove_dead_phis(fn: Function) -> None:
    """Drop phis whose value nothing but dead phis uses."""
    while True:
        used = {u for _, ins in fn.instructions() for u in ins.uses() if ins.op != "phi"}
        # Phis used by live phis are live too: close over phi operands.
        phis = {ins.dest: ins for _, ins in fn.instructions() if ins.op == "phi"}
        work = [v for v in used if v in phis]
        live = set(work)
        while work:
            for u in phis[work.pop()].uses():
                if u in phis and u not in live:
                    live.add(u)
                    work.append(u)
        dead = set(phis) - live - used
        if not dead:
            return
        for block in fn.blocks.values():
            block.instrs = [i for i in block.instrs if i.dest not in dead]
