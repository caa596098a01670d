"""The SM's lanes (docs/sm-hardware.md, "Stages": lanes): what one thread's instruction
computes, exactly as ``golden/semantics.py`` defines it.

* :class:`Multiplier` (combinational): the four partial products of the 33 x 33 signed
  multiply that serves the four RV32M multiplies, each at most 17 x 17 bits, so that each is
  one of the ECP5's 18 x 18 DSP multipliers. The SM computes them in the read stage from the
  register file's words and registers them into the execute stage (docs/sm-hardware.md,
  "Results"): a DSP multiplier and the sum of its outputs in one clock behind the operand
  selects was the SM's longest path.
* :class:`Lane` (combinational): the register result of ALU, multiply (the partial products'
  sum), CSR read, ``lui`` / ``auipc`` and the link of ``jal`` / ``jalr``; the next PC (a taken
  branch's or a jump's target, the ``bar``'s own PC, else PC + 4, as golden's ``Outcome``); a
  misaligned jump or taken-branch target (golden's "misaligned instruction address"); the
  store data. One adder for the ALU (``add``, ``sub``, the set-less-thans and the branches'
  orders share it), one right shifter for the three shifts, one adder each for the PC-relative
  target and PC + 4; the memory address and ``jalr`` sum, :func:`address`, comes in with the
  operands: the SM computes it in the read stage, so the lane's ``jalr`` target and the LSU's
  address checks start at a register.
* :class:`Divider`: the RV32M divisions, iterative restoring division on the operands'
  magnitudes, ``steps`` quotient bits per cycle; division by zero and -2^31 / -1 give what
  RV32M and golden's ``_div`` define. The SM has one per thread position, with
  ``golden.config.Latencies.div_steps`` steps (docs/sm-hardware.md, "Results").

The operation tables below name golden's operations; each asserts at import that it covers
exactly golden's set, so an operation added to golden cannot be silently missing here.
"""

from __future__ import annotations

from collections.abc import Callable

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value, signed, unsigned
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from reconverge.golden.config import division_cycles
from reconverge.golden.isa import ILEN_BYTES, SPECS, XLEN, Spec
from reconverge.golden.semantics import ALU_OPS, BRANCH_CONDS, IMM_OPS
from reconverge.golden.sm import decode as golden
from reconverge.golden.sm.events import DIV_OPS, MUL_OPS
from reconverge.hdl.sm.decode import DECODED, Op

WORD = unsigned(XLEN)
SHAMT_BITS = (XLEN - 1).bit_length()
#: Multiply operand signedness (rs1, rs2) of each RV32M multiply; the low word needs none.
MUL_SIGNS: dict[str, tuple[bool, bool]] = {
    "mul": (False, False),
    "mulh": (True, True),
    "mulhsu": (True, False),
    "mulhu": (False, False),
}
#: (signed, remainder) of each RV32M division.
DIV_KINDS: dict[str, tuple[bool, bool]] = {
    "div": (True, False),
    "divu": (False, False),
    "rem": (True, True),
    "remu": (False, True),
}


def _adder(a: Value, b: Value, subtract: Value, signed_compare: Value) -> tuple[Value, Value]:
    """``a + b``, or ``a - b`` when ``subtract``, and whether ``a < b`` (signed when
    ``signed_compare``, from the subtraction): one carry chain of 34 bits for ``add``, ``sub``,
    the set-less-thans and the branches' orders. The operands are widened by their sign (or 0)
    to 33 bits, so the difference's bit 32 is the order; the 1 below both operands carries the
    subtraction's + 1 into bit 1 (``a + ~b + 1``)."""
    wide_a = Cat(a, signed_compare & a[-1])
    wide_b = Cat(b, signed_compare & b[-1])
    total = (Cat(Const(1, 1), wide_a) + Cat(subtract, wide_b ^ subtract.replicate(XLEN + 1)))[1:]
    return total[:XLEN], total[XLEN]


def _shifter(a: Value, shamt: Value, left: Value, arithmetic: Value) -> Value:
    """``sll``, ``srl`` and ``sra`` on one right shifter: a left shift is the right shift of
    the bit-reversed word, reversed; ``sra`` shifts the sign in."""
    source = Mux(left, a[::-1], a)
    shifted = (Cat(source, arithmetic & a[-1]).as_signed() >> shamt)[:XLEN]
    return Mux(left, shifted[::-1], shifted)


def _alu(
    sum_: Value, less: Value, shifted: Value, a: Value, b: Value, mul_low: Value, mul_high: Value
) -> dict[str, Value]:
    """The register-register operations of ``golden.semantics.ALU_OPS`` but the divisions,
    from the shared adder (:func:`_adder`: ``sum_``, ``less``) and shifter (``shifted``)."""
    ops = dict.fromkeys(("add", "sub"), sum_)
    ops.update(dict.fromkeys(("sll", "srl", "sra"), shifted))
    ops.update(dict.fromkeys(("slt", "sltu"), less))
    ops.update({"xor": a ^ b, "or": a | b, "and": a & b})
    ops.update({name: mul_high for name in MUL_SIGNS})
    ops["mul"] = mul_low
    return ops


#: The ALU operations the adder subtracts for, and those whose order is signed (with the
#: register-immediate forms of each, :func:`forms`).
SUBTRACTS = ("sub", "slt", "sltu")
SIGNED_ORDERS = ("slt",)
#: Branch conditions of ``golden.semantics.BRANCH_CONDS`` from the adder's comparison: whether
#: the order is signed, and the condition as a function of (equal, less than).
BRANCHES: dict[str, tuple[bool, Callable[[Value, Value], Value]]] = {
    "beq": (False, lambda eq, lt: eq),
    "bne": (False, lambda eq, lt: ~eq),
    "blt": (True, lambda eq, lt: lt),
    "bge": (True, lambda eq, lt: ~lt),
    "bltu": (False, lambda eq, lt: lt),
    "bgeu": (False, lambda eq, lt: ~lt),
}

_PROBE = _alu(*(Const(i, XLEN) for i in range(7)))
_ALU_NAMES = set(_PROBE)
#: The values the lane's result selects among: the ALU's (a shared one once), ``lui``'s
#: immediate, ``auipc``'s target, a CSR's value and the link of ``jal`` / ``jalr``.
RESULTS = len({id(value) for value in _PROBE.values()}) + 4
if set(ALU_OPS) - DIV_OPS != _ALU_NAMES or set(MUL_SIGNS) != MUL_OPS:
    raise AssertionError(f"lane ALU {sorted(_ALU_NAMES)} is not golden's {sorted(ALU_OPS)}")
if set(BRANCHES) != set(BRANCH_CONDS) or set(DIV_KINDS) != DIV_OPS:
    raise AssertionError("lane branch conditions or divisions differ from golden's")


def op(name: str) -> Op:
    """The :data:`Op` value of a mnemonic."""
    return Op[golden.op_member(name)]


def forms(*names: str) -> list[Op]:
    """The :data:`Op` values of the ALU operations ``names`` and their register-immediate
    forms (``golden.semantics.IMM_OPS``)."""
    return [op(n) for n in names] + [op(i) for i, base in IMM_OPS.items() if base in names]


#: What the ALU's adder and shifter do for an instruction (:func:`alu_controls`): the SM
#: decodes it in the read stage and registers it with the operands, so that the execute
#: stage's carry chain starts at registers rather than behind the operation's decode.
ALU_CONTROLS = data.StructLayout(
    {"subtract": 1, "signed_order": 1, "shift_left": 1, "shift_arithmetic": 1}
)


#: The operations that set each of :data:`ALU_CONTROLS` (the subtraction also for every
#: branch, from the decoded ``is_branch``): the adder subtracts for ``sub`` and the
#: set-less-thans, its order is signed for ``slt(i)``, ``blt`` and ``bge``; the shifter
#: shifts left for ``sll(i)``, the sign in for ``sra(i)``.
ALU_CONTROL_OPS: tuple[list[Op], ...] = (
    forms(*SUBTRACTS),
    forms(*SIGNED_ORDERS) + [op(n) for n, (signed, _) in BRANCHES.items() if signed],
    forms("sll"),
    forms("sra"),
)


def alu_controls(instr: data.View) -> Value:
    """The :data:`ALU_CONTROLS` of the decoded instruction ``instr``
    (:data:`ALU_CONTROL_OPS`)."""
    subtract, signed_order, left, arithmetic = (instr.op.matches(*ops) for ops in ALU_CONTROL_OPS)
    return Cat(instr.is_branch | subtract, signed_order, left, arithmetic)


def _ops(pred: Callable[[Spec], bool]) -> list[Op]:
    """The :data:`Op` values of the specs satisfying ``pred``."""
    return [op(s.name) for s in SPECS if pred(s)]


#: Where each operand of the 33 x 33 multiply is split: the low 16 bits (unsigned) and the
#: high 17 (signed), so that every partial product fits an 18 x 18 signed DSP multiplier.
MUL_SPLIT = 16
#: Bits of an operand's high part.
MUL_HIGH = XLEN + 1 - MUL_SPLIT
#: The partial products (low x low, low x high, high x low, high x high of rs1 x rs2; a low
#: part enters a mixed product as a signed value, one bit wider).
PARTIALS = data.StructLayout(
    {
        "ll": unsigned(2 * MUL_SPLIT),
        "lh": signed(2 * MUL_HIGH),
        "hl": signed(2 * MUL_HIGH),
        "hh": signed(2 * MUL_HIGH),
    }
)


class Multiplier(wiring.Component):
    """The partial products of ``instr``'s multiply of ``a`` (rs1) by ``b`` (rs2): each
    operand widened to 33 bits by the sign the multiply gives it (:data:`MUL_SIGNS`; the low
    word needs none), split at :data:`MUL_SPLIT`. :func:`product` sums them."""

    def __init__(self) -> None:
        super().__init__(
            wiring.Signature(
                {"instr": In(DECODED), "a": In(WORD), "b": In(WORD), "partials": Out(PARTIALS)}
            )
        )

    def elaborate(self, platform: object) -> Module:
        m = Module()
        op = self.instr.op
        sign_a = _ops(lambda s: MUL_SIGNS.get(s.name, (False, False))[0])
        sign_b = _ops(lambda s: MUL_SIGNS.get(s.name, (False, False))[1])
        wide_a = Signal(signed(XLEN + 1), name="mul_a")
        wide_b = Signal(signed(XLEN + 1), name="mul_b")
        m.d.comb += [
            wide_a.eq(Cat(self.a, self.a[-1] & op.matches(*sign_a))),
            wide_b.eq(Cat(self.b, self.b[-1] & op.matches(*sign_b))),
        ]
        low_a, high_a = wide_a.as_unsigned()[:MUL_SPLIT], wide_a[MUL_SPLIT:].as_signed()
        low_b, high_b = wide_b.as_unsigned()[:MUL_SPLIT], wide_b[MUL_SPLIT:].as_signed()
        p = self.partials
        m.d.comb += [
            p.ll.eq(low_a * low_b),
            p.lh.eq(low_a * high_b),
            p.hl.eq(high_a * low_b),
            p.hh.eq(high_a * high_b),
        ]
        return m


def product(partials: data.View) -> Value:
    """The low 64 bits of the multiply whose :data:`PARTIALS` these are: high x high above
    low x low is their concatenation, so one sum of 35 bits (the middle products) and one of
    64 (the middle one shifted in, sign-extended)."""
    middle = partials.lh.as_signed() + partials.hl.as_signed()
    outer = Cat(partials.ll, partials.hh[: 2 * (XLEN - MUL_SPLIT)])
    shifted = Cat(Const(0, MUL_SPLIT), middle)
    inner = Cat(shifted, shifted[-1].replicate(2 * XLEN - len(shifted)))
    return (outer + inner)[: 2 * XLEN]


def address(a: Value, imm: Value) -> Value:
    """The memory address and ``jalr`` sum: rs1 + the immediate (an AMO's is 0), 32 bits."""
    return (a + imm)[:XLEN]


class Lane(wiring.Component):
    """One lane: ``instr`` (:data:`DECODED`) at ``pc`` with ``a`` = rs1, ``b`` = rs2,
    ``addr`` = :func:`address` of rs1 and the immediate, ``alu`` = :func:`alu_controls` of
    ``instr``, ``partials`` = its multiply's partial products (:class:`Multiplier`) and
    ``csr_value`` = this thread's value of CSR ``instr.csr``. ``result`` is 0 for the
    instructions whose register another unit writes (loads, AMOs: the LSU; divisions: the
    :class:`Divider`) or that write none; ``store_data`` matters only to stores and AMOs."""

    def __init__(self) -> None:
        super().__init__(
            wiring.Signature(
                {
                    "instr": In(DECODED),
                    "pc": In(WORD),
                    "a": In(WORD),
                    "b": In(WORD),
                    "addr": In(WORD),
                    "alu": In(ALU_CONTROLS),
                    "partials": In(PARTIALS),
                    "csr_value": In(WORD),
                    "result": Out(WORD),
                    "next_pc": Out(WORD),
                    "bad_target": Out(1),
                    "store_data": Out(WORD),
                }
            )
        )

    def elaborate(self, platform: object) -> Module:
        m = Module()
        instr, pc, a = self.instr, self.pc, self.a

        def named(name: str, value: Value, shape: object = WORD) -> Signal:
            sig = Signal(shape, name=name)
            m.d.comb += sig.eq(value)
            return sig

        immediate_ops = _ops(lambda s: s.name in IMM_OPS)
        uses_imm = named("uses_imm", instr.op.matches(*immediate_ops), 1)
        b = named("alu_b", Mux(uses_imm, instr.imm, self.b))
        wide = named("product", product(self.partials), 2 * XLEN)
        controls = self.alu
        total, less = _adder(a, b, controls.subtract, controls.signed_order)
        sum_ = named("sum", total)
        less = named("less", less, 1)
        shifted = named(
            "shifted",
            _shifter(a, b[:SHAMT_BITS], controls.shift_left, controls.shift_arithmetic),
        )
        alu = _alu(sum_, less, shifted, a, b, wide[:XLEN], wide[XLEN:])

        seq_pc = named("seq_pc", pc + ILEN_BYTES)
        pc_target = named("pc_target", pc + instr.imm)  # branches, jal, auipc
        jalr_target = named("jalr_target", self.addr & ~1)

        # one case per distinct value: the operations that share the adder, the shifter or
        # the high product select it together
        cases: dict[int, tuple[Value, list[str]]] = {}
        for name, value in alu.items():
            cases.setdefault(id(value), (value, []))[1].append(name)
        with m.Switch(instr.op):
            for value, names in cases.values():
                with m.Case(*forms(*names)):
                    m.d.comb += self.result.eq(value)
            with m.Case(op("lui")):
                m.d.comb += self.result.eq(instr.imm)
            with m.Case(op("auipc")):
                m.d.comb += self.result.eq(pc_target)
            with m.Case(*_ops(lambda s: bool(golden.spec_fields(s)["is_csr"]))):
                m.d.comb += self.result.eq(self.csr_value)
            with m.Case(op("jal"), op("jalr")):
                m.d.comb += self.result.eq(seq_pc)

        # a branch's operands are rs1 and rs2 (no branch takes the immediate as ``b``)
        equal = named("equal", a == b, 1)
        taken = Signal(name="taken")
        with m.Switch(instr.op):
            for name, (_, cond) in BRANCHES.items():
                with m.Case(op(name)):
                    m.d.comb += taken.eq(cond(equal, less))

        with m.If(instr.is_branch):
            m.d.comb += self.next_pc.eq(Mux(taken, pc_target, seq_pc))
        with m.Elif(instr.is_jal):
            m.d.comb += self.next_pc.eq(pc_target)
        with m.Elif(instr.is_jalr):
            m.d.comb += self.next_pc.eq(jalr_target)
        with m.Elif(instr.is_bar):
            m.d.comb += self.next_pc.eq(pc)
        with m.Else():
            m.d.comb += self.next_pc.eq(seq_pc)
        # a taken branch, a jump: its target misaligned, known from the targets' low bits
        # (the PC is aligned, so pc + imm has the immediate's) without the full sums
        low = (ILEN_BYTES - 1).bit_length()
        imm_low = instr.imm[:low] != 0
        bad_branch = instr.is_branch & taken & imm_low
        bad_jump = (instr.is_jal & imm_low) | (instr.is_jalr & (jalr_target[:low] != 0))
        m.d.comb += [
            self.bad_target.eq(bad_branch | bad_jump),
            self.store_data.eq(self.b),
        ]
        return m


# ----------------------------------------------------------------------------------------------
# The divider


def _state_layout(tag_width: int, dividend_bits: int) -> data.StructLayout:
    """What the divider holds during a division: the partial remainder, the dividend shifting
    into the quotient (``dividend_bits`` >= 32: zeros above the operand when the steps do not
    divide 32), the divisor magnitude, the result signs and selection, the request's tag, and
    the iterations left."""
    return data.StructLayout(
        {
            "left": range(XLEN + 1),
            "tag": tag_width,
            "rem": XLEN,
            "quo": dividend_bits,
            "divisor": XLEN,
            "neg_quo": 1,
            "neg_rem": 1,
            "want_rem": 1,
        }
    )


class Divider(wiring.Component):
    """RV32M ``div``/``divu``/``rem``/``remu``, iterative: restoring division on the operands'
    magnitudes, ``steps`` quotient bits per cycle (1 is radix 2, 2 radix 4). A request
    (``req``: ``valid``, ``op`` of :data:`Op`, ``a``, ``b``, ``tag``) is taken at the clock edge
    of its cycle c; its result is on ``resp`` (``valid``, ``result``, ``tag``) in cycle
    c + ``cycles`` (:func:`~reconverge.golden.config.division_cycles`), when the last
    iteration's steps and the result's sign run combinationally; a new request may come in that
    cycle. ``busy`` is high from c + 1 until then; a request while busy is a caller's error
    (the SM's rule 6 issues none). ``req.op`` other than a division is treated as ``divu``."""

    def __init__(self, steps: int, tag_width: int = 1) -> None:
        if not 1 <= steps <= XLEN:
            raise ValueError(f"divider steps per cycle must be in 1..{XLEN}, not {steps}")
        if tag_width < 1:
            raise ValueError(f"tag width must be >= 1, not {tag_width}")
        self.steps = steps
        self.cycles = division_cycles(steps)
        self.tag_width = tag_width
        req = wiring.Signature(
            {
                "valid": Out(1),
                "op": Out(Op),
                "a": Out(WORD),
                "b": Out(WORD),
                "tag": Out(tag_width),
            }
        )
        resp = wiring.Signature({"valid": Out(1), "result": Out(WORD), "tag": Out(tag_width)})
        super().__init__(wiring.Signature({"req": In(req), "resp": Out(resp), "busy": Out(1)}))

    def elaborate(self, platform: object) -> Module:
        m = Module()
        layout = _state_layout(self.tag_width, self.cycles * self.steps)
        req = self.req
        signed_ops = [op(n) for n, (sign, _) in DIV_KINDS.items() if sign]
        rem_ops = [op(n) for n, (_, rem) in DIV_KINDS.items() if rem]
        is_signed = Signal(name="is_signed")
        neg_a = Signal(name="neg_a")
        neg_b = Signal(name="neg_b")
        start = Signal(layout, name="start")
        m.d.comb += [
            is_signed.eq(req.op.matches(*signed_ops)),
            neg_a.eq(is_signed & req.a[-1]),
            neg_b.eq(is_signed & req.b[-1]),
            start.left.eq(self.cycles),
            start.tag.eq(req.tag),
            start.rem.eq(0),
            start.quo.eq(Mux(neg_a, -req.a, req.a)[:XLEN]),
            start.divisor.eq(Mux(neg_b, -req.b, req.b)),
            start.neg_quo.eq((neg_a ^ neg_b) & (req.b != 0)),  # x / 0 = all ones, unsigned
            start.neg_rem.eq(neg_a),
            start.want_rem.eq(req.op.matches(*rem_ops)),
        ]
        state = Signal(layout, name="state")
        iteration = state
        for step in range(1, self.steps + 1):
            iteration = self._step(m, layout, iteration, step)
        busy = Signal(name="busy_now")
        last = Signal(name="last")
        m.d.comb += [
            busy.eq(state.left != 0),
            last.eq(state.left == 1),
            self.busy.eq(busy),
        ]
        with m.If(req.valid):
            m.d.sync += state.eq(start)
        with m.Elif(busy):
            m.d.sync += [state.eq(iteration), state.left.eq(state.left - 1)]
        # the quotient or the remainder, then its sign: one negation
        magnitude = Signal(WORD, name="magnitude")
        negative = Signal(name="negative")
        m.d.comb += [
            magnitude.eq(Mux(iteration.want_rem, iteration.rem, iteration.quo[:XLEN])),
            negative.eq(Mux(iteration.want_rem, iteration.neg_rem, iteration.neg_quo)),
            self.resp.valid.eq(last),
            self.resp.tag.eq(state.tag),
            self.resp.result.eq(Mux(negative, -magnitude, magnitude)),
        ]
        return m

    def _step(self, m: Module, layout: data.StructLayout, state: data.View, step: int) -> data.View:
        """One restoring step: shift the next dividend bit into the remainder, subtract the
        divisor when it fits (one subtraction: it fits when the difference has no borrow),
        shift the quotient bit in."""
        trial = Signal(XLEN + 1, name=f"trial{step}")
        difference = Signal(XLEN + 2, name=f"difference{step}")  # the top bit: the borrow
        fits = Signal(name=f"fits{step}")
        after = Signal(layout, name=f"step{step}")
        m.d.comb += [
            trial.eq(Cat(state.quo[-1], state.rem)),
            difference.eq(trial - state.divisor),
            fits.eq(~difference[-1]),
            after.eq(state),
            after.rem.eq(Mux(fits, difference, trial)),
            after.quo.eq(Cat(fits, state.quo[:-1])),
        ]
        return after
