"""What the SM knows about a program before it runs it: its decoded code and the reconvergence
PC of every control instruction.

The reconvergence PC of a branch comes from the ``rhint`` right before it when there is one
(DESIGN.md, ISA); otherwise, as GPGPU-Sim does from PTX, from the immediate postdominator of the
branch in the control-flow graph recovered from the binary, so that a binary without hints (an
ordinary RV32IM program built by GCC) runs under every policy. Where both exist they must agree:
a hint that names another PC than the postdominator is an error.

The control-flow graph is intraprocedural, over instructions: a branch goes to its target and
the next instruction; ``j`` to its target; a call (``jal``/``jalr`` that links) returns to the
next instruction; a jump through a register that does not link (``ret``, ``jr``) and ``ecall``
(exit) end the function, except that a ``jr`` right after an ``rhint`` (a jump table) goes to
the hinted join: its targets are not in the binary, but every one of them reaches the join, so
the branches around the jump table postdominate through it as they do in the source. A branch
of the kernel whose postdominator is that end has no reconvergence PC
(:data:`~reconverge.golden.blocks.divergence.NEVER`): its splits meet again only by exiting; a
branch of a device function whose postdominator is the function's end reconverges
when the function returns (:data:`~reconverge.golden.blocks.divergence.RETURN`).
"""

from __future__ import annotations

from reconverge.golden.blocks.divergence import NEVER, RETURN
from reconverge.golden.errors import UserError
from reconverge.golden.graphs import immediate_postdominators
from reconverge.golden.image import Image
from reconverge.golden.isa import ILEN_BYTES, MASK32, IllegalInstruction, Instr, decode
from reconverge.golden.memmap import GLOBAL_BASE


class HintMismatch(UserError):
    """An ``rhint`` names a reconvergence PC other than the branch's immediate postdominator."""


def is_control(ins: Instr) -> bool:
    """Branches and jumps: the instructions after which PCs must be re-determined."""
    return ins.spec.is_branch or ins.spec.is_jump


def successors(pc: int, ins: Instr) -> list[int]:
    """Intraprocedural successors of the instruction ``ins`` at ``pc`` (see module doc)."""
    nxt = (pc + ILEN_BYTES) & MASK32
    if ins.spec.is_branch:
        return [nxt, (pc + ins.imm) & MASK32]
    if ins.name == "jal":
        return [nxt] if ins.rd else [(pc + ins.imm) & MASK32]
    if ins.name == "jalr":
        return [nxt] if ins.rd else []
    if ins.name in ("ecall", "ebreak"):
        return []
    return [nxt]


class Program:
    """The decoded executable segments of an image and their reconvergence PCs."""

    def __init__(self, image: Image) -> None:
        self.image = image
        self.code: dict[int, Instr] = {}
        for seg in image.segments:
            if "x" not in seg.flags:
                continue
            for off in range(0, len(seg.data) - ILEN_BYTES + 1, ILEN_BYTES):
                word = int.from_bytes(seg.data[off : off + ILEN_BYTES], "little")
                try:
                    self.code[seg.vaddr + off] = decode(word)
                except IllegalInstruction:
                    continue  # data or padding in the text: a fault only if executed
        self.hints = {
            pc + ILEN_BYTES: (pc + ins.imm) & MASK32
            for pc, ins in self.code.items()
            if ins.name == "rhint"
        }
        self.ipdom = self._postdominators()
        self._check_hints()

    def _postdominators(self) -> dict[int, int]:
        """Immediate postdominator of every control instruction (NEVER: the exit). Each
        function is its own graph: the entry point, every call target, then any code not yet
        reached (a function only called through a register) are roots in turn."""

        def succ(pc: int) -> list[int]:
            ins = self.code.get(pc)
            if ins is None:
                return []
            if ins.name == "jalr" and not ins.rd and pc in self.hints:
                return [self.hints[pc]] if self.hints[pc] in self.code else []
            return [s for s in successors(pc, ins) if s in self.code]

        calls = sorted(
            (pc + ins.imm) & MASK32 for pc, ins in self.code.items() if ins.name == "jal" and ins.rd
        )
        ipdom: dict[int, int] = {}
        entry = self.image.entry & MASK32
        for root in [entry, *calls, *sorted(self.code)]:
            if root in self.code and root not in ipdom:
                end = NEVER if root == entry else RETURN
                for pc, post in immediate_postdominators(root, succ).items():
                    ipdom.setdefault(pc, end if post is None else post)
        return {pc: ipdom.get(pc, NEVER) for pc, ins in self.code.items() if is_control(ins)}

    def _check_hints(self) -> None:
        for branch, hinted in self.hints.items():
            ins = self.code.get(branch)
            if ins is None or not ins.spec.is_branch:
                continue
            computed = self.ipdom.get(branch, NEVER)
            if hinted != computed:
                where = {NEVER: "the end of the kernel", RETURN: "the function's return"}.get(
                    computed, f"{computed:#010x}"
                )
                raise HintMismatch(
                    f"{self.image.source}: rhint at {branch - ILEN_BYTES:#010x} names "
                    f"{hinted:#010x} as the reconvergence PC of the branch at {branch:#010x}, "
                    f"but its immediate postdominator is {where}"
                )

    def rpc(self, pc: int) -> int:
        """The reconvergence PC of the control instruction at ``pc``."""
        return self.hints.get(pc, self.ipdom.get(pc, NEVER))

    def store(self, words: int) -> list[tuple[int, int]]:
        """The SM's instruction store (docs/sm-hardware.md): for each of ``words`` words from
        GLOBAL_BASE, the word the image holds there (0 outside it) and the reconvergence PC of
        the instruction at that PC (NEVER when it is not a control instruction)."""
        entries = []
        for i in range(words):
            pc = GLOBAL_BASE + ILEN_BYTES * i
            word = self.image.read_word(pc)
            ins = self.code.get(pc)
            rpc = self.rpc(pc) if ins is not None and is_control(ins) else NEVER
            entries.append((0 if word is None else word, rpc))
        return entries
