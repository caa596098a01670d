"""Control-flow graph clean-up after the front end."""

from __future__ import annotations

from reconverge.golden import graphs
from reconverge.golden.compiler.ir import Function


def remove_unreachable(fn: Function) -> None:
    """Drop blocks the entry cannot reach (the code after a return, an exit nothing reaches)."""
    live = graphs.reachable(fn.entry, fn.succ)
    fn.blocks = {label: b for label, b in fn.blocks.items() if label in live}
    if fn.exit not in fn.blocks:
        fn.exit = ""  # the function never returns (an infinite loop)


def merge_straight_line(fn: Function) -> None:
    """Merge a block into its predecessor when that predecessor ends with ``jmp`` to it and is
    its only predecessor (keeps the layout order and the direction of every jump)."""
    changed = True
    while changed:
        changed = False
        preds = graphs.predecessors(fn.entry, fn.succ)
        for label, block in list(fn.blocks.items()):
            if block.term is None or block.term.op != "jmp":
                continue
            target = block.term.attr
            if target in (label, fn.entry, fn.exit) or preds.get(target) != [label]:
                continue
            nxt = fn.blocks.pop(target)
            block.instrs.extend(nxt.instrs)
            block.term = nxt.term
            changed = True
            break
