"""Code generation: the whole pipeline from a kernel to a :class:`~launch.Program`.

front end -> SSA -> GSA -> analyses (:mod:`analysis`) -> instruction selection (:mod:`isel`)
-> register allocation and spill rewriting (:mod:`regalloc`) -> assembly text, assembled by
:func:`reconverge.golden.asm.assemble` (the only encoder).

The emitted code:

* the kernel comes first (``_start``), then the device functions; blocks keep the front end's
  layout (loops contiguous, exits after them), so reconvergence points lie at higher addresses
  than the code that precedes them except for loop back edges (seed 000 Sec 3);
* a ``rhint`` naming the reconvergence point — the branch's immediate postdominator in the
  machine CFG — precedes every conditional branch the degree-2 analysis does not prove
  uniform; uniform branches get none;
* the kernel's prologue lowers ``sp`` by its frame, stores the arguments ``a0``..``a7`` into it
  (their home, like PTX's parameter space) and, when some spill slot is in shared memory,
  points ``gp`` at its warp's slice of the spill area;
* ``exit`` is ``li a0, 0; li a7, 93; ecall``; a caller stores the arguments into the
  callee's frame, moves ``sp`` down to it *before* ``jal`` and back after (so calling threads
  have the lower SP from the jump on: seed 000 Listing 1); a device function saves ``ra`` when
  it calls and returns its value in ``a0``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from reconverge.golden import graphs
from reconverge.golden.asm import assemble
from reconverge.golden.compiler import analysis, isel, lang, machine, regalloc
from reconverge.golden.compiler.errors import CompileError
from reconverge.golden.compiler.launch import BranchInfo, Program, ValueCheck
from reconverge.golden.compiler.machine import MFunction, MInstr, Reg, VReg
from reconverge.golden.image import Image
from reconverge.golden.isa import REG_NUMBERS, decode
from reconverge.golden.memmap import GLOBAL_BASE, SHARED_BASE

WORD = 4
SPILL_ALIGN = 16


@dataclass
class _Compiled:
    mf: MFunction
    alloc: regalloc.Allocation
    frame: int


def recursive_functions(ma: analysis.ModuleAnalysis) -> set[str]:
    """Functions on a cycle of the call graph."""
    calls = {name: fa.function.callees() for name, fa in ma.functions.items()}
    return {
        name
        for name in calls
        if any(name in graphs.reachable(c, calls.__getitem__) for c in calls[name])
    }


def _stack_bytes(
    ma: analysis.ModuleAnalysis, frames: dict[str, int], recursive: set[str]
) -> int | None:
    if recursive:
        return None
    memo: dict[str, int] = {}

    def depth(name: str) -> int:
        if name not in memo:
            callees = ma.functions[name].function.callees()
            memo[name] = frames[name] + max((depth(c) for c in callees), default=0)
        return memo[name]

    return depth(ma.module.kernel.name)


class _Emitter:
    """Writes the assembly text, counting instructions (each line one word, so PCs are known)
    and recording what the Program reports per PC."""

    def __init__(self, spill_base: int, per_warp: int, hints: bool) -> None:
        self.lines = ["    .text", "    .globl _start", "_start:"]
        self.hints = hints
        self.count = 0
        self.spill_base = spill_base
        self.per_warp = per_warp
        self.checks: dict[int, list[ValueCheck]] = {}
        self.spill_code: dict[int, str] = {}
        self.block_pc: dict[str, int] = {}
        self.pending: list[tuple[int, str, MInstr, str | None]] = []  # branches

    @property
    def pc(self) -> int:
        return GLOBAL_BASE + WORD * self.count

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    def label(self, name: str) -> None:
        self.lines.append(f"{name}:")

    def ins(self, text: str, comment: str = "") -> None:
        self.lines.append(f"    {text}" + (f"    # {comment}" if comment else ""))
        self.count += 1

    def const(self, reg: str, value: int) -> None:
        for ins in machine.const_sequence(reg, value):
            self.ins(ins.format())

    def branches(self) -> tuple[BranchInfo, ...]:
        return tuple(
            BranchInfo(
                pc,
                fname,
                uniform=not ins.divergent,
                reconverge=self.block_pc[reconv] if reconv else None,
                hinted=ins.divergent and reconv is not None,
            )
            for pc, fname, ins, reconv in self.pending
        )

    def prologue(self, mf: MFunction, frame: int) -> None:
        if mf.kind != "kernel":
            if mf.calls:
                self.ins(f"sw ra, {frame - WORD}(sp)")
            return
        if frame:
            self.ins(f"addi sp, sp, {-frame}", "frame")
        for k in range(mf.params):
            self.ins(f"sw a{k}, {WORD * k}(sp)", f"parameter {k}")
        if self.per_warp:
            self.ins("csrr t0, warpid", "gp = this warp's shared spill slots")
            self.const("t1", self.per_warp)
            self.ins("mul t0, t0, t1")
            self.const("gp", self.spill_base)
            self.ins("add gp, gp, t0")

    def function(self, c: _Compiled) -> None:
        mf, frame = c.mf, c.frame
        assignment = c.alloc.assignment

        def reg(r: Reg) -> str:
            return r if isinstance(r, str) else assignment[r]

        self.label(mf.name)
        self.prologue(mf, frame)
        ipdom = graphs.immediate_postdominators(mf.entry, mf.succ)
        labels = list(mf.blocks)
        for index, (label, block) in enumerate(mf.blocks.items()):
            nxt = labels[index + 1] if index + 1 < len(labels) else None
            self.label(label)
            self.block_pc[label] = self.pc
            instrs = block.instrs
            for i, ins in enumerate(instrs):
                if ins.op == "mv" and reg(ins.defs[0]) == reg(ins.uses[0]):
                    continue
                if ins.op == "j" and ins.target == nxt:
                    continue
                if ins.is_branch:
                    follow = instrs[i + 1] if i + 1 < len(instrs) else None
                    ins = _arrange_branch(ins, follow, nxt)
                    reconv = ipdom[label] or mf.exit
                    if ins.divergent and reconv is not None and self.hints:
                        self.ins(f"rhint {reconv}", "reconvergence point")
                    self.pending.append((self.pc, mf.name, ins, reconv))
                self.instr(ins, mf, frame, reg)

    def instr(self, ins: MInstr, mf: MFunction, frame: int, reg: Callable[[Reg], str]) -> None:
        comment = ins.note or (f"line {ins.pos.line}" if ins.pos else "")
        if ins.op == "exit":
            self.ins("li a0, 0", comment)
            self.ins("li a7, 93")
            self.ins("ecall")
            return
        if ins.op == "ret":
            if mf.calls:
                self.ins(f"lw ra, {frame - WORD}(sp)")
            self.ins("ret", comment)
            return
        pc = self.pc
        self.ins(ins.format(reg), comment)
        if ins.spill:
            self.spill_code[pc] = ins.spill
        if ins.partial:
            return
        for d in ins.defs:
            if isinstance(d, VReg) and d.state is not None and not d.state.is_top:
                origin = d.origin or d
                check = ValueCheck(mf.name, origin.name, REG_NUMBERS[reg(d)], d.state)
                self.checks.setdefault(pc, []).append(check)


def compile_kernel(
    k: lang.Kernel, allocator: str = "linear", regs: int = 16, *, hints: bool = True
) -> Program:
    """Compile kernel ``k`` with ``allocator`` (linear, divergent, remat, affine) and a budget of
    ``regs`` registers per thread; ``hints=False`` leaves out the reconvergence hints (for the
    policies that do not use them: stack-less, PPC implicit)."""
    if not isinstance(k, lang.Kernel):
        raise CompileError(f"compile_kernel needs a @kernel function, not {k!r}")
    if allocator not in regalloc.ALLOCATORS:
        raise CompileError(
            f"unknown allocator {allocator!r} (one of {', '.join(regalloc.ALLOCATORS)})"
        )
    module = analysis.build_ir(k)
    ir_text = module.format()
    ma = analysis.analyse_module(module)
    gsa_text = module.format()
    recursive = recursive_functions(ma)
    frames: dict[str, int] = {}
    shared_base: dict[str, int] = {}
    compiled: dict[str, _Compiled] = {}
    for name, fa in ma.functions.items():
        mf = isel.lower(fa, frames.__getitem__)
        shared_ok = allocator in ("divergent", "affine") and name not in recursive
        alloc = regalloc.allocate(
            mf, regs, allocator, shared_ok=shared_ok, shared_base=lambda n=name: shared_base[n]
        )
        # A device function's frame always has the ra slot: every call lowers sp.
        frame = WORD * (mf.params + alloc.local_slots) + (WORD if mf.kind == "device" else 0)
        if frame >= 2048:
            raise CompileError(f"{name}: a frame of {frame} bytes is too large (at most 2047)")
        frames[name] = frame
        compiled[name] = _Compiled(mf, alloc, frame)
    offset = 0
    for name, c in compiled.items():
        shared_base[name] = offset
        offset += WORD * c.alloc.shared_slots
    per_warp = offset
    user = sum(WORD * a.words for a in module.kernel.shared.values())
    spill_base = SHARED_BASE + -(-user // SPILL_ALIGN) * SPILL_ALIGN
    out = _Emitter(spill_base, per_warp, hints)
    for c in compiled.values():
        out.function(c)
    image = assemble(out.text, f"{k.name}.S")
    _check_size(image, out.count)
    image = replace(image, spills=_spill_accesses(image, out.spill_code))
    return Program(
        kernel=k.name,
        params=tuple(module.kernel.params),
        image=image,
        asm=out.text,
        allocator=allocator,
        regs=regs,
        frames=frames,
        shared_user_bytes=user,
        shared_spill_base=spill_base,
        shared_spill_per_warp=per_warp,
        stack_bytes=_stack_bytes(ma, frames, recursive),
        checks={pc: tuple(v) for pc, v in out.checks.items()},
        spill_code=out.spill_code,
        branches=out.branches(),
        allocations={name: c.alloc for name, c in compiled.items()},
        analysis=ma,
        ir_text=ir_text,
        gsa_text=gsa_text,
    )


def _spill_accesses(image: Image, spill_code: Mapping[int, str]) -> dict[int, str]:
    """The spill code's memory accesses, for the SM's dynamic spill metrics: "load" or
    "store" by PC (rematerialisation and address arithmetic are not accesses)."""
    out = {}
    for pc in spill_code:
        word = image.read_word(pc)
        spec = decode(word).spec if word is not None else None
        if spec is not None and (spec.is_load or spec.is_store):
            out[pc] = "load" if spec.is_load else "store"
    return out


def _check_size(image: Image, count: int) -> None:
    code = next(s for s in image.segments if s.vaddr == GLOBAL_BASE)
    if len(code.data) != WORD * count:  # pragma: no cover - a bug in the emitter
        raise AssertionError(f"emitted {count} instructions but assembled {len(code.data)} bytes")


def _arrange_branch(ins: MInstr, follow: MInstr | None, nxt: str | None) -> MInstr:
    """Fall through instead of jumping: ``b T; j F`` becomes ``b T`` when F is next, and
    ``b!cond F`` when T is next (the ``j`` is then skipped as a jump to the next block)."""
    if follow is not None and follow.is_jump and ins.target == nxt:
        follow.target, ins.target = ins.target, follow.target
        ins.op = machine.INVERSE[ins.op]
    return ins
