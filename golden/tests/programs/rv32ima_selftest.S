# rv32ima_selftest.S: a self-checking test of every instruction of the reconverge ISA that is
# legal at run time (RV32I, RV32M, RV32A: the nine word AMOs, lr.w and sc.w; reads of the SIMT identity CSRs,
# fence / fence.i, ecall, and the SIMT custom-0 `bar` and `rhint`), in the style of riscv-tests.
#
# Every thread runs the numbered test cases below in order. A test puts its number in s11
# (TESTNUM), computes a value into a0 and the expected value into t2, and calls `check`, which
# returns when the two are equal and otherwise ends the thread (li a7, 93; ecall) with exit code
# = the failing test number. A thread that passes every test exits with 0. The branch tests do
# not go through `check`: they branch to `fail` directly in the direction that must not happen,
# and so sit right after `fail`, within reach of a B-type offset.
#
# Launch arguments (a0, a1, a2 at entry): the warp size, the block size and the grid size the
# host launched with; the CSR tests compare the SIMT identity CSRs against them.
#
# What the threads leave in global memory for the host (golden/tests/test_selftest.py):
#   counter  the number of threads that ran: every thread amoadds 1
#   gmax     amomax.w of every thread's global id (initially -2^31): the largest global id
#   gmin     amomin.w of every thread's global id (initially 2^31-1): 0
#   gswap    amoswap.w of every thread's global id (initially -1): the last one swapped in
#   gor      amoor.w of 1 << (gid mod 32) (initially 0)
#   gand     amoand.w of ~(1 << (gid mod 32)) (initially -1)
#   gxor     amoxor.w of every global id (initially 0): their exclusive or
#   gminu    amominu.w of every global id (initially 0xffffffff): 0
#   gmaxu    amomaxu.w of 0x80000000 | gid (initially 0x7fffffff): 0x80000000 | the largest gid
#   lrsc     incremented by every thread with an lr.w / sc.w retry loop: the thread count
#   results  4 words per thread at results + 16 * gid, gid = ctaid * ntid + tid:
#              [0] ctaid << 24 | warpid << 16 | laneid << 8 | tid
#              [1] the old value amoadd.w returned from counter
#              [2] the old value amoswap.w returned from gswap
#              [3] the word read from shared memory after the second barrier: the value
#                  0x80000000 | ctaid << 16 | n that thread n = (tid - 1) mod ntid stored
#
# Registers: s0 tid, s1 ntid, s2 ctaid, s3 nctaid, s4 laneid, s5 warpid, s6 warpsize,
# s7 global thread id, s8/s9/s10 the launch arguments, s11 the test number, t6 this thread's
# results entry; `check` clobbers only ra. sp starts at the top of the thread's local memory.
#
# GNU as does not know `bar` and `rhint`: test_selftest.py rewrites them to the equivalent
# `.word` / `.insn` directives before assembling this file with GNU as, for the byte-for-byte
# comparison with the project's assembler. CSRs are named by number for the same reason.

    .text
    .globl _start
_start:
    mv   s8, a0                 # launch argument: warp size
    mv   s9, a1                 # launch argument: block size
    mv   s10, a2                # launch argument: grid size
    j    tests

# check: return when a0 == t2, otherwise fall through to fail.
check:
    bne  a0, t2, fail
    ret

# fail: end this thread with the number of the failing test as its exit code.
fail:
    mv   a0, s11
    li   a7, 93
    ecall

tests:
# ---- Conditional branches -------------------------------------------------------------------
# A case that must be taken branches over `j fail`; one that must not be taken branches to fail.

    li   s11, 1                 # beq: taken on equal 0x80000000; not taken on 0 vs 0x80000000
    li   a1, 0x80000000
    li   a2, 0x80000000
    beq  a1, a2, 1f
    j    fail
1:
    beq  zero, a1, fail

    li   s11, 2                 # bne: taken on 0 vs 0x80000000; not taken on equal -1
    li   a1, 0x80000000
    bne  zero, a1, 1f
    j    fail
1:
    li   a1, -1
    li   a2, -1
    bne  a1, a2, fail

    li   s11, 3                 # blt is signed: -1 < 0 and -2^31 < 2^31-1 taken;
    li   a1, -1                 # 2^31-1 < -2^31 and equal operands not taken
    blt  a1, zero, 1f
    j    fail
1:
    li   a1, 0x80000000
    li   a2, 0x7fffffff
    blt  a1, a2, 2f
    j    fail
2:
    blt  a2, a1, fail
    blt  a2, a2, fail

    li   s11, 4                 # bge is signed: equal and 2^31-1 >= -2^31 taken; -1 >= 0 not
    li   a1, -1
    li   a2, -1
    bge  a1, a2, 1f
    j    fail
1:
    li   a1, 0x7fffffff
    li   a2, 0x80000000
    bge  a1, a2, 2f
    j    fail
2:
    li   a1, -1
    bge  a1, zero, fail

    li   s11, 5                 # bltu is unsigned: 0x7fffffff < 0x80000000 and 0 < 0xffffffff
    li   a1, 0x7fffffff         # taken; 0xffffffff < 0 and equal operands not taken
    li   a2, 0x80000000
    bltu a1, a2, 1f
    j    fail
1:
    li   a1, 0xffffffff
    bltu zero, a1, 2f
    j    fail
2:
    bltu a1, zero, fail
    bltu a1, a1, fail

    li   s11, 6                 # bgeu is unsigned: equal and 0xffffffff >= 0 taken;
    li   a1, 0xffffffff         # 0x7fffffff >= 0x80000000 not taken
    li   a2, 0xffffffff
    bgeu a1, a2, 1f
    j    fail
1:
    bgeu a1, zero, 2f
    j    fail
2:
    li   a1, 0x7fffffff
    li   a2, 0x80000000
    bgeu a1, a2, fail

    li   s11, 7                 # a backward branch closes a loop: 1 + 2 + ... + 10 = 55
    li   a0, 0
    li   a1, 1
    li   a2, 11
1:
    add  a0, a0, a1
    addi a1, a1, 1
    blt  a1, a2, 1b
    li   t2, 55
    jal  check

# ---- Register-register ALU ------------------------------------------------------------------

    li   s11, 8                 # add: 13 + 11 = 24
    li   a1, 13
    li   a2, 11
    add  a0, a1, a2
    li   t2, 24
    jal  check

    li   s11, 9                 # add wraps on signed overflow: 0x7fffffff + 1 = 0x80000000
    li   a1, 0x7fffffff
    li   a2, 1
    add  a0, a1, a2
    li   t2, 0x80000000
    jal  check

    li   s11, 10                # add with rd == rs1 == rs2: -1 + -1 = -2
    li   a0, -1
    add  a0, a0, a0
    li   t2, -2
    jal  check

    li   s11, 11                # sub wraps: 0 - 1 = 0xffffffff
    li   a1, 0
    li   a2, 1
    sub  a0, a1, a2
    li   t2, 0xffffffff
    jal  check

    li   s11, 12                # sub wraps: 0x80000000 - 1 = 0x7fffffff
    li   a1, 0x80000000
    li   a2, 1
    sub  a0, a1, a2
    li   t2, 0x7fffffff
    jal  check

    li   s11, 13                # sll: 1 << 31 = 0x80000000
    li   a1, 1
    li   a2, 31
    sll  a0, a1, a2
    li   t2, 0x80000000
    jal  check

    li   s11, 14                # sll uses only rs2[4:0]: 3 << 33 = 3 << 1 = 6
    li   a1, 3
    li   a2, 33
    sll  a0, a1, a2
    li   t2, 6
    jal  check

    li   s11, 15                # slt is signed: -1 < 1
    li   a1, -1
    li   a2, 1
    slt  a0, a1, a2
    li   t2, 1
    jal  check

    li   s11, 16                # slt is signed: not 1 < -1
    li   a1, 1
    li   a2, -1
    slt  a0, a1, a2
    li   t2, 0
    jal  check

    li   s11, 17                # slt: not -2^31 < -2^31 (equal)
    li   a1, 0x80000000
    slt  a0, a1, a1
    li   t2, 0
    jal  check

    li   s11, 18                # sltu is unsigned: 1 < 0xffffffff
    li   a1, 1
    li   a2, 0xffffffff
    sltu a0, a1, a2
    li   t2, 1
    jal  check

    li   s11, 19                # sltu is unsigned: not 0xffffffff < 1
    li   a1, 0xffffffff
    li   a2, 1
    sltu a0, a1, a2
    li   t2, 0
    jal  check

    li   s11, 20                # xor: 0xff00ff00 ^ 0x0ff00ff0 = 0xf0f0f0f0
    li   a1, 0xff00ff00
    li   a2, 0x0ff00ff0
    xor  a0, a1, a2
    li   t2, 0xf0f0f0f0
    jal  check

    li   s11, 21                # srl is logical: 0x80000000 >> 31 = 1
    li   a1, 0x80000000
    li   a2, 31
    srl  a0, a1, a2
    li   t2, 1
    jal  check

    li   s11, 22                # srl uses only rs2[4:0]: 0xf0000000 >> 36 = >> 4 = 0x0f000000
    li   a1, 0xf0000000
    li   a2, 36
    srl  a0, a1, a2
    li   t2, 0x0f000000
    jal  check

    li   s11, 23                # sra is arithmetic: 0x80000000 >> 31 = 0xffffffff
    li   a1, 0x80000000
    li   a2, 31
    sra  a0, a1, a2
    li   t2, 0xffffffff
    jal  check

    li   s11, 24                # sra of a positive value shifts in zeros: 0x7ffffff0 >> 4
    li   a1, 0x7ffffff0
    li   a2, 4
    sra  a0, a1, a2
    li   t2, 0x07ffffff
    jal  check

    li   s11, 25                # sra uses only rs2[4:0]: 0x80000000 >> -31 = >> 1 = 0xc0000000
    li   a1, 0x80000000
    li   a2, -31
    sra  a0, a1, a2
    li   t2, 0xc0000000
    jal  check

    li   s11, 26                # or: 0xff00ff00 | 0x0ff00ff0 = 0xfff0fff0
    li   a1, 0xff00ff00
    li   a2, 0x0ff00ff0
    or   a0, a1, a2
    li   t2, 0xfff0fff0
    jal  check

    li   s11, 27                # and: 0xff00ff00 & 0x0ff00ff0 = 0x0f000f00
    li   a1, 0xff00ff00
    li   a2, 0x0ff00ff0
    and  a0, a1, a2
    li   t2, 0x0f000f00
    jal  check

# ---- Register-immediate ALU (12-bit immediates are sign-extended) ---------------------------

    li   s11, 28                # addi with the most negative immediate: 0 + -2048
    li   a1, 0
    addi a0, a1, -2048
    li   t2, 0xfffff800
    jal  check

    li   s11, 29                # addi wraps: 0x7fffffff + 2047 = 0x800007fe
    li   a1, 0x7fffffff
    addi a0, a1, 2047
    li   t2, 0x800007fe
    jal  check

    li   s11, 30                # slti is signed: -1 < 0
    li   a1, -1
    slti a0, a1, 0
    li   t2, 1
    jal  check

    li   s11, 31                # slti is signed: not 0 < -1
    li   a1, 0
    slti a0, a1, -1
    li   t2, 0
    jal  check

    li   s11, 32                # sltiu compares with the sign-extended immediate unsigned:
    li   a1, 0x7fffffff         # 0x7fffffff < 0xfffff800
    sltiu a0, a1, -2048
    li   t2, 1
    jal  check

    li   s11, 33                # sltiu: not 0xffffffff < 0xffffffff
    li   a1, 0xffffffff
    sltiu a0, a1, -1
    li   t2, 0
    jal  check

    li   s11, 34                # sltiu with immediate 1 is seqz: 0 < 1
    li   a1, 0
    sltiu a0, a1, 1
    li   t2, 1
    jal  check

    li   s11, 35                # xori with -1 is not: ~0x00ff00ff = 0xff00ff00
    li   a1, 0x00ff00ff
    xori a0, a1, -1
    li   t2, 0xff00ff00
    jal  check

    li   s11, 36                # xori: 0x00ff00ff ^ 0x70f = 0x00ff07f0
    li   a1, 0x00ff00ff
    xori a0, a1, 0x70f
    li   t2, 0x00ff07f0
    jal  check

    li   s11, 37                # ori with a negative immediate: 1 | 0xfffff800 = 0xfffff801
    li   a1, 1
    ori  a0, a1, -2048
    li   t2, 0xfffff801
    jal  check

    li   s11, 38                # ori: 0xff00ff00 | 0x70f = 0xff00ff0f
    li   a1, 0xff00ff00
    ori  a0, a1, 0x70f
    li   t2, 0xff00ff0f
    jal  check

    li   s11, 39                # andi with a negative immediate: 0x12345678 & -16 = 0x12345670
    li   a1, 0x12345678
    andi a0, a1, -16
    li   t2, 0x12345670
    jal  check

    li   s11, 40                # andi: 0xff00ff00 & 0x70f = 0x700
    li   a1, 0xff00ff00
    andi a0, a1, 0x70f
    li   t2, 0x700
    jal  check

    li   s11, 41                # slli: 0x12345678 << 4 = 0x23456780
    li   a1, 0x12345678
    slli a0, a1, 4
    li   t2, 0x23456780
    jal  check

    li   s11, 42                # slli by 31: 3 << 31 = 0x80000000
    li   a1, 3
    slli a0, a1, 31
    li   t2, 0x80000000
    jal  check

    li   s11, 43                # srli is logical: 0xffffffff >> 1 = 0x7fffffff
    li   a1, 0xffffffff
    srli a0, a1, 1
    li   t2, 0x7fffffff
    jal  check

    li   s11, 44                # srli by 31: 0x80000000 >> 31 = 1
    li   a1, 0x80000000
    srli a0, a1, 31
    li   t2, 1
    jal  check

    li   s11, 45                # srai is arithmetic: 0x80000000 >> 1 = 0xc0000000
    li   a1, 0x80000000
    srai a0, a1, 1
    li   t2, 0xc0000000
    jal  check

    li   s11, 46                # srai by 31 of a negative value: -1
    li   a1, 0x80000000
    srai a0, a1, 31
    li   t2, 0xffffffff
    jal  check

    li   s11, 47                # srai of a positive value: 0x7fffffff >> 30 = 1
    li   a1, 0x7fffffff
    srai a0, a1, 30
    li   t2, 1
    jal  check

    li   s11, 48                # shift by 0 is the identity: slli, srli and srai by 0
    li   a1, 0x80000001
    slli a0, a1, 0
    srli a0, a0, 0
    srai a0, a0, 0
    li   t2, 0x80000001
    jal  check

# ---- Upper immediates -----------------------------------------------------------------------

    li   s11, 49                # lui places the immediate in bits 31:12 and clears bits 11:0
    li   a0, -1
    lui  a0, 0x12345
    li   t2, 0x12345000
    jal  check

    li   s11, 50                # lui with bit 31 set: 0xfffff000
    lui  a0, 0xfffff
    li   t2, 0xfffff000
    jal  check

    li   s11, 51                # auipc 0 gives its own address (compared with lui/addi %hi/%lo)
auipc_here:
    auipc a0, 0
    lui  t2, %hi(auipc_here)
    addi t2, t2, %lo(auipc_here)
    jal  check

    li   s11, 52                # auipc adds imm << 12 to its own address: pc + 0x1000
auipc_plus:
    auipc a0, 1
    lui  t2, %hi(auipc_plus)
    addi t2, t2, %lo(auipc_plus)
    li   t3, 0x1000
    add  t2, t2, t3
    jal  check

    li   s11, 53                # auipc with a negative immediate: pc - 0x1000
auipc_minus:
    auipc a0, 0xfffff
    lui  t2, %hi(auipc_minus)
    addi t2, t2, %lo(auipc_minus)
    li   t3, 0x1000
    sub  t2, t2, t3
    jal  check

# ---- Jumps ----------------------------------------------------------------------------------

    li   s11, 54                # jal jumps and links the address of the next instruction
    jal  a0, 1f
2:
    j    fail
1:
    la   t2, 2b
    jal  check

    li   s11, 55                # jalr jumps to rs1 + imm and links the next address
    la   t1, 1f
    jalr a0, 0(t1)
2:
    j    fail
1:
    la   t2, 2b
    jal  check

    li   s11, 56                # jalr clears bit 0 of rs1 + imm: (L + 3) + -2 = L + 1 -> L
    la   t1, 1f
    addi t1, t1, 3
    jalr a0, -2(t1)
2:
    j    fail
1:
    la   t2, 2b
    jal  check

    li   s11, 57                # jalr with rd == rs1 jumps to the old rs1, then links
    la   a0, 1f
    jalr a0, 0(a0)
2:
    j    fail
1:
    la   t2, 2b
    jal  check

# ---- Writes to x0 are discarded -------------------------------------------------------------
# Each test writes x0, then copies x0 to a0 and compares it with 0 built by `lui t2, 0`
# (which does not read x0).

    li   s11, 58                # ALU results written to x0: add, addi, lui, auipc, mul
    li   a1, 5
    add  x0, a1, a1
    addi x0, a1, 7
    lui  x0, 0x12345
    auipc x0, 1
    mul  x0, a1, a1
    mv   a0, x0
    lui  t2, 0
    jal  check

    li   s11, 59                # the link of jal x0 and jalr x0
    jal  x0, 1f
    j    fail
1:
    la   t1, 2f
    jalr x0, 0(t1)
    j    fail
2:
    mv   a0, x0
    lui  t2, 0
    jal  check

    li   s11, 60                # a load into x0 (the loaded word is 0x01807fff)
    la   t1, load_data
    lw   x0, 0(t1)
    mv   a0, x0
    lui  t2, 0
    jal  check

    li   s11, 61                # csrr into x0 (the block size is at least 1)
    csrr x0, 0xcc1
    mv   a0, x0
    lui  t2, 0
    jal  check

# ---- RV32M: multiplication ------------------------------------------------------------------

    li   s11, 62                # mul keeps the low 32 bits: 0x12345678 * 0x9abcdef0
    li   a1, 0x12345678
    li   a2, 0x9abcdef0
    mul  a0, a1, a2
    li   t2, 0x242d2080
    jal  check

    li   s11, 63                # mul wraps on overflow: 0x7fffffff * 2 = 0xfffffffe
    li   a1, 0x7fffffff
    li   a2, 2
    mul  a0, a1, a2
    li   t2, 0xfffffffe
    jal  check

    li   s11, 64                # mul: -2^31 * -1 wraps to -2^31
    li   a1, 0x80000000
    li   a2, -1
    mul  a0, a1, a2
    li   t2, 0x80000000
    jal  check

    li   s11, 65                # mul of mixed signs: -7 * 3 = -21
    li   a1, -7
    li   a2, 3
    mul  a0, a1, a2
    li   t2, -21
    jal  check

    li   s11, 66                # mulh signed x signed: -1 * -1 = 1, high word 0
    li   a1, -1
    li   a2, -1
    mulh a0, a1, a2
    li   t2, 0
    jal  check

    li   s11, 67                # mulh: -2^31 * -2^31 = 2^62, high word 0x40000000
    li   a1, 0x80000000
    li   a2, 0x80000000
    mulh a0, a1, a2
    li   t2, 0x40000000
    jal  check

    li   s11, 68                # mulh of a small negative product: -2 * 3, high word -1
    li   a1, -2
    li   a2, 3
    mulh a0, a1, a2
    li   t2, 0xffffffff
    jal  check

    li   s11, 69                # mulh: 0x12345678 * 0x9abcdef0 (negative), high word
    li   a1, 0x12345678
    li   a2, 0x9abcdef0
    mulh a0, a1, a2
    li   t2, 0xf8cc93d6
    jal  check

    li   s11, 70                # mulh: (2^31-1)^2, high word 0x3fffffff
    li   a1, 0x7fffffff
    mulh a0, a1, a1
    li   t2, 0x3fffffff
    jal  check

    li   s11, 71                # mulhsu signed x unsigned: -1 * 0xffffffff, high word -1
    li   a1, -1
    li   a2, 0xffffffff
    mulhsu a0, a1, a2
    li   t2, 0xffffffff
    jal  check

    li   s11, 72                # mulhsu: -2^31 * 0xffffffff = 0x80000000_80000000
    li   a1, 0x80000000
    li   a2, 0xffffffff
    mulhsu a0, a1, a2
    li   t2, 0x80000000
    jal  check

    li   s11, 73                # mulhsu: 2 * 0xffffffff (rs2 unsigned), high word 1
    li   a1, 2
    li   a2, 0xffffffff
    mulhsu a0, a1, a2
    li   t2, 1
    jal  check

    li   s11, 74                # mulhsu: 0x12345678 * 0x9abcdef0 (rs2 unsigned), high word
    li   a1, 0x12345678
    li   a2, 0x9abcdef0
    mulhsu a0, a1, a2
    li   t2, 0x0b00ea4e
    jal  check

    li   s11, 75                # mulhu unsigned x unsigned: 0xffffffff^2, high word 0xfffffffe
    li   a1, 0xffffffff
    mulhu a0, a1, a1
    li   t2, 0xfffffffe
    jal  check

    li   s11, 76                # mulhu: 0x80000000 * 2, high word 1
    li   a1, 0x80000000
    li   a2, 2
    mulhu a0, a1, a2
    li   t2, 1
    jal  check

    li   s11, 77                # mulhu: 0x12345678 * 0x9abcdef0, high word
    li   a1, 0x12345678
    li   a2, 0x9abcdef0
    mulhu a0, a1, a2
    li   t2, 0x0b00ea4e
    jal  check

# ---- RV32M: division (rounds towards zero; the spec's results for x / 0 and overflow) -------

    li   s11, 78                # div: 20 / 6 = 3
    li   a1, 20
    li   a2, 6
    div  a0, a1, a2
    li   t2, 3
    jal  check

    li   s11, 79                # div rounds towards zero: 7 / -2 = -3
    li   a1, 7
    li   a2, -2
    div  a0, a1, a2
    li   t2, -3
    jal  check

    li   s11, 80                # div rounds towards zero: -7 / 2 = -3
    li   a1, -7
    li   a2, 2
    div  a0, a1, a2
    li   t2, -3
    jal  check

    li   s11, 81                # div: -7 / -2 = 3
    li   a1, -7
    li   a2, -2
    div  a0, a1, a2
    li   t2, 3
    jal  check

    li   s11, 82                # div by zero gives -1: 5 / 0
    li   a1, 5
    li   a2, 0
    div  a0, a1, a2
    li   t2, -1
    jal  check

    li   s11, 83                # div overflow: -2^31 / -1 = -2^31
    li   a1, 0x80000000
    li   a2, -1
    div  a0, a1, a2
    li   t2, 0x80000000
    jal  check

    li   s11, 84                # divu: 0xffffffff / 10 = 0x19999999
    li   a1, 0xffffffff
    li   a2, 10
    divu a0, a1, a2
    li   t2, 0x19999999
    jal  check

    li   s11, 85                # divu is unsigned: 0x80000000 / 0xffffffff = 0
    li   a1, 0x80000000
    li   a2, -1
    divu a0, a1, a2
    li   t2, 0
    jal  check

    li   s11, 86                # divu by zero gives 0xffffffff: 5 / 0
    li   a1, 5
    li   a2, 0
    divu a0, a1, a2
    li   t2, 0xffffffff
    jal  check

    li   s11, 87                # rem: 20 % 6 = 2
    li   a1, 20
    li   a2, 6
    rem  a0, a1, a2
    li   t2, 2
    jal  check

    li   s11, 88                # rem takes the sign of the dividend: 7 % -2 = 1
    li   a1, 7
    li   a2, -2
    rem  a0, a1, a2
    li   t2, 1
    jal  check

    li   s11, 89                # rem takes the sign of the dividend: -7 % 2 = -1
    li   a1, -7
    li   a2, 2
    rem  a0, a1, a2
    li   t2, -1
    jal  check

    li   s11, 90                # rem by zero gives the dividend: -5 % 0 = -5
    li   a1, -5
    li   a2, 0
    rem  a0, a1, a2
    li   t2, -5
    jal  check

    li   s11, 91                # rem overflow: -2^31 % -1 = 0
    li   a1, 0x80000000
    li   a2, -1
    rem  a0, a1, a2
    li   t2, 0
    jal  check

    li   s11, 92                # remu: 0xffffffff % 10 = 5
    li   a1, 0xffffffff
    li   a2, 10
    remu a0, a1, a2
    li   t2, 5
    jal  check

    li   s11, 93                # remu is unsigned: 0xfffffff9 % 2 = 1
    li   a1, -7
    li   a2, 2
    remu a0, a1, a2
    li   t2, 1
    jal  check

    li   s11, 94                # remu by zero gives the dividend: 0x80000000 % 0
    li   a1, 0x80000000
    li   a2, 0
    remu a0, a1, a2
    li   t2, 0x80000000
    jal  check

# ---- Loads from global memory (load_data holds the bytes ff 7f 80 01 01 80 fe 7f) -----------

    li   s11, 95                # lb sign-extends 0xff
    la   t1, load_data
    lb   a0, 0(t1)
    li   t2, 0xffffffff
    jal  check

    li   s11, 96                # lb of 0x7f stays positive
    lb   a0, 1(t1)
    li   t2, 0x7f
    jal  check

    li   s11, 97                # lb sign-extends 0x80
    lb   a0, 2(t1)
    li   t2, 0xffffff80
    jal  check

    li   s11, 98                # lbu zero-extends 0xff
    lbu  a0, 0(t1)
    li   t2, 0xff
    jal  check

    li   s11, 99                # lbu zero-extends 0x80
    lbu  a0, 2(t1)
    li   t2, 0x80
    jal  check

    li   s11, 100               # lh of 0x7fff stays positive
    lh   a0, 0(t1)
    li   t2, 0x7fff
    jal  check

    li   s11, 101               # lh sign-extends 0x8001
    lh   a0, 4(t1)
    li   t2, 0xffff8001
    jal  check

    li   s11, 102               # lh of the upper halfword 0x0180
    lh   a0, 2(t1)
    li   t2, 0x0180
    jal  check

    li   s11, 103               # lhu zero-extends 0x8001
    lhu  a0, 4(t1)
    li   t2, 0x8001
    jal  check

    li   s11, 104               # lhu of the upper halfword 0x7ffe
    lhu  a0, 6(t1)
    li   t2, 0x7ffe
    jal  check

    li   s11, 105               # lw of a whole word
    lw   a0, 0(t1)
    li   t2, 0x01807fff
    jal  check

    li   s11, 106               # lw with a negative offset
    addi t3, t1, 8
    lw   a0, -4(t3)
    li   t2, 0x7ffe8001
    jal  check

    li   s11, 107               # lw with rd == rs1
    mv   a0, t1
    lw   a0, 4(a0)
    li   t2, 0x7ffe8001
    jal  check

# ---- Stores to local memory (each thread has its own copy: no races between threads) -------

    li   s11, 108               # sp starts at the top of the thread's local memory
    mv   a0, sp
    li   t2, 0x70000000
    jal  check
    addi sp, sp, -32            # frame for the store, AMO and fence tests

    li   s11, 109               # sw then lw round trip
    li   a1, 0x11223344
    sw   a1, 0(sp)
    lw   a0, 0(sp)
    li   t2, 0x11223344
    jal  check

    li   s11, 110               # sb overwrites only byte 1, storing the low byte of rs2
    li   a1, 0xffffffaa
    sb   a1, 1(sp)
    lw   a0, 0(sp)
    li   t2, 0x1122aa44
    jal  check

    li   s11, 111               # sh overwrites only bytes 2-3, storing the low half of rs2
    li   a1, 0x1234eeff
    sh   a1, 2(sp)
    lw   a0, 0(sp)
    li   t2, 0xeeffaa44
    jal  check

    li   s11, 112               # sb at byte 3 and sh at bytes 0-1
    li   a1, 0x99
    sb   a1, 3(sp)
    li   a1, 0x5566
    sh   a1, 0(sp)
    lw   a0, 0(sp)
    li   t2, 0x99ff5566
    jal  check

    li   s11, 113               # loads of stored sub-words: lb 0x99, lh 0x99ff, lhu 0x5566
    lb   a0, 3(sp)              # a0 = lb + lh + lhu = 0xffffff99 + 0xffff99ff + 0x5566
    lh   a1, 2(sp)
    lhu  a2, 0(sp)
    add  a0, a0, a1
    add  a0, a0, a2
    li   t2, 0xffffeefe
    jal  check

    li   s11, 114               # sw with a negative offset
    addi t3, sp, 8
    li   a1, 0xcafe1234
    sw   a1, -4(t3)
    lw   a0, 4(sp)
    li   t2, 0xcafe1234
    jal  check

# ---- AMOs on a private word: they return the old value and update memory --------------------

    li   s11, 115               # amoadd.w returns the old value 100
    addi t3, sp, 8
    li   a1, 100
    sw   a1, 0(t3)
    li   a2, -7
    amoadd.w a0, a2, (t3)
    li   t2, 100
    jal  check

    li   s11, 116               # amoadd.w stored 100 + -7
    lw   a0, 0(t3)
    li   t2, 93
    jal  check

    li   s11, 117               # amoadd.w wraps: 0x7fffffff + 1
    li   a1, 0x7fffffff
    sw   a1, 0(t3)
    li   a2, 1
    amoadd.w x0, a2, (t3)
    lw   a0, 0(t3)
    li   t2, 0x80000000
    jal  check

    li   s11, 118               # amoswap.w returns the old value
    li   a1, 0x12345678
    sw   a1, 0(t3)
    li   a2, 0xcafef00d
    amoswap.w a0, a2, (t3)
    li   t2, 0x12345678
    jal  check

    li   s11, 119               # amoswap.w stored rs2
    lw   a0, 0(t3)
    li   t2, 0xcafef00d
    jal  check

    li   s11, 120               # amomin.w is signed: min(5, -3) returns the old 5
    li   a1, 5
    sw   a1, 0(t3)
    li   a2, -3
    amomin.w a0, a2, (t3)
    li   t2, 5
    jal  check

    li   s11, 121               # amomin.w stored -3
    lw   a0, 0(t3)
    li   t2, -3
    jal  check

    li   s11, 122               # amomin.w keeps -2^31 against 1 (signed comparison)
    li   a1, 0x80000000
    sw   a1, 0(t3)
    li   a2, 1
    amomin.w a0, a2, (t3)
    lw   a0, 0(t3)
    li   t2, 0x80000000
    jal  check

    li   s11, 123               # amomax.w is signed: max(-1, 1) returns the old -1
    li   a1, -1
    sw   a1, 0(t3)
    li   a2, 1
    amomax.w a0, a2, (t3)
    li   t2, -1
    jal  check

    li   s11, 124               # amomax.w stored 1
    lw   a0, 0(t3)
    li   t2, 1
    jal  check

    li   s11, 125               # amomax.w keeps 2^31-1 against -2^31 (signed comparison)
    li   a1, 0x7fffffff
    sw   a1, 0(t3)
    li   a2, 0x80000000
    amomax.w a0, a2, (t3)
    lw   a0, 0(t3)
    li   t2, 0x7fffffff
    jal  check

    li   s11, 147               # amoxor.w returns the old value
    li   a1, 0x0ff00ff0
    sw   a1, 0(t3)
    li   a2, 0x00ffff00
    amoxor.w a0, a2, (t3)
    li   t2, 0x0ff00ff0
    jal  check

    li   s11, 148               # amoxor.w stored old ^ rs2
    lw   a0, 0(t3)
    li   t2, 0x0f0ff0f0
    jal  check

    li   s11, 149               # amoand.w returns the old value
    li   a1, 0xf0f0f0f0
    sw   a1, 0(t3)
    li   a2, 0x3c3c3c3c
    amoand.w.aq a0, a2, (t3)
    li   t2, 0xf0f0f0f0
    jal  check

    li   s11, 150               # amoand.w stored old & rs2
    lw   a0, 0(t3)
    li   t2, 0x30303030
    jal  check

    li   s11, 151               # amoor.w returns the old value
    li   a1, 0x0000f000
    sw   a1, 0(t3)
    li   a2, 0x0f000001
    amoor.w.rl a0, a2, (t3)
    li   t2, 0x0000f000
    jal  check

    li   s11, 152               # amoor.w stored old | rs2
    lw   a0, 0(t3)
    li   t2, 0x0f00f001
    jal  check

    li   s11, 153               # amominu.w is unsigned: minu(0x80000000, 5) returns the old value
    li   a1, 0x80000000
    sw   a1, 0(t3)
    li   a2, 5
    amominu.w a0, a2, (t3)
    li   t2, 0x80000000
    jal  check

    li   s11, 154               # amominu.w stored 5; and keeps 5 against 0xffffffff
    li   a2, -1
    amominu.w.aqrl x0, a2, (t3)
    lw   a0, 0(t3)
    li   t2, 5
    jal  check

    li   s11, 155               # amomaxu.w is unsigned: maxu(1, 0xffffffff) returns the old 1
    li   a1, 1
    sw   a1, 0(t3)
    li   a2, -1
    amomaxu.w a0, a2, (t3)
    li   t2, 1
    jal  check

    li   s11, 156               # amomaxu.w stored 0xffffffff; and keeps it against 0x7fffffff
    li   a2, 0x7fffffff
    amomaxu.w x0, a2, (t3)
    lw   a0, 0(t3)
    li   t2, -1
    jal  check

# ---- lr.w / sc.w on a private word (local memory: only this thread's own writes reach it) ----

    li   s11, 157               # lr.w loads the word
    li   a1, 0x600d
    sw   a1, 0(t3)
    lr.w a0, (t3)
    li   t2, 0x600d
    jal  check

    li   s11, 158               # sc.w with the reservation held stores and writes 0 to rd
    li   a2, 0x5c5c
    sc.w a0, a2, (t3)
    lw   a1, 0(t3)
    li   t2, 0x5c5c
    bne  a1, t2, fail
    li   t2, 0
    jal  check

    li   s11, 159               # the sc.w ended the reservation: a second sc.w fails (rd = 1)
    li   a2, 0xbad             # and stores nothing
    sc.w a0, a2, (t3)
    lw   a1, 0(t3)
    li   t2, 0x5c5c
    bne  a1, t2, fail
    li   t2, 1
    jal  check

    li   s11, 160               # sc.w to a word other than the reserved one fails
    lr.w.aq a1, (t3)
    addi t4, t3, 4
    sw   zero, 0(t4)
    li   a2, 0xbad
    sc.w.rl a0, a2, (t4)
    lw   a1, 0(t4)
    bnez a1, fail
    li   t2, 1
    jal  check

    li   s11, 161               # a store to the reserved word breaks the reservation
    lr.w.aqrl a1, (t3)
    sw   a1, 0(t3)
    sc.w.aqrl a0, a2, (t3)
    li   t2, 1
    jal  check

    li   s11, 162               # an AMO to the reserved word breaks it too
    lr.w a1, (t3)
    amoadd.w x0, zero, (t3)
    sc.w a0, a2, (t3)
    li   t2, 1
    jal  check

    li   s11, 163               # a new lr.w replaces the reservation: sc.w to the first fails
    lr.w a1, (t3)
    lr.w a1, (t4)
    sc.w a0, a2, (t3)
    li   t2, 1
    jal  check

# ---- fence and fence.i are no-ops -----------------------------------------------------------

    li   s11, 126               # a stored value and the registers survive fence and fence.i
    li   a1, 0x5eed
    sw   a1, 16(sp)
    fence
    fence rw, rw
    fence.i
    lw   a0, 16(sp)
    add  a0, a0, a1
    li   t2, 0xbdda
    jal  check

# ---- SIMT identity CSRs ---------------------------------------------------------------------

    csrr s0, 0xcc0              # tid: thread index in the block
    csrr s1, 0xcc1              # ntid: block size
    csrr s2, 0xcc2              # ctaid: block index
    csrr s3, 0xcc3              # nctaid: grid size
    csrr s4, 0xcc4              # laneid
    csrr s5, 0xcc5              # warpid: warp index in the block
    csrr s6, 0xcc6              # warpsize

    li   s11, 127               # warpsize is the launch's warp size
    mv   a0, s6
    mv   t2, s8
    jal  check

    li   s11, 128               # ntid is the launch's block size
    mv   a0, s1
    mv   t2, s9
    jal  check

    li   s11, 129               # nctaid is the launch's grid size
    mv   a0, s3
    mv   t2, s10
    jal  check

    li   s11, 130               # tid = warpid * warpsize + laneid
    mul  a0, s5, s6
    add  a0, a0, s4
    mv   t2, s0
    jal  check

    li   s11, 131               # tid < ntid
    sltu a0, s0, s1
    li   t2, 1
    jal  check

    li   s11, 132               # ctaid < nctaid
    sltu a0, s2, s3
    li   t2, 1
    jal  check

    li   s11, 133               # laneid < warpsize
    sltu a0, s4, s6
    li   t2, 1
    jal  check

    li   s11, 134               # csrrc with rs1 = x0 only reads: tid
    csrrc a0, 0xcc0, x0
    mv   t2, s0
    jal  check

    li   s11, 135               # csrrsi with uimm = 0 only reads: ctaid
    csrrsi a0, 0xcc2, 0
    mv   t2, s2
    jal  check

    li   s11, 136               # csrrci with uimm = 0 only reads: warpid
    csrrci a0, 0xcc5, 0
    mv   t2, s5
    jal  check

    li   s11, 137               # the global thread id fits the results array (256 entries)
    mul  s7, s2, s1
    add  s7, s7, s0
    sltiu a0, s7, 256
    li   t2, 1
    jal  check

    la   t6, results            # t6 = &results[gid]: 16 bytes per thread
    slli t1, s7, 4
    add  t6, t6, t1
    slli t1, s2, 24             # results[gid][0] = ctaid << 24 | warpid << 16 | laneid << 8 | tid
    slli t3, s5, 16
    or   t1, t1, t3
    slli t3, s4, 8
    or   t1, t1, t3
    or   t1, t1, s0
    sw   t1, 0(t6)
    sw   s7, 20(sp)             # kept in local memory until test 146 checks it is private

# ---- AMOs on global words that every thread updates -----------------------------------------

    mul  t4, s1, s3             # t4 = threads in the grid

    li   s11, 138               # amoadd.w 1 to counter: the old value is < the thread count
    la   t1, counter
    li   a1, 1
    amoadd.w a1, a1, (t1)
    sw   a1, 4(t6)
    sltu a0, a1, t4
    li   t2, 1
    jal  check

    li   s11, 139               # amoswap.w gid into gswap: the old value is -1 or a global id
    la   t1, gswap
    amoswap.w a1, s7, (t1)
    sw   a1, 8(t6)
    addi a0, a1, 1              # old + 1 (unsigned) <= the thread count
    addi t3, t4, 1
    sltu a0, a0, t3
    li   t2, 1
    jal  check

    li   s11, 140               # amomax.w / amomin.w of gid into gmax / gmin, results to x0
    la   t1, gmax
    amomax.w x0, s7, (t1)
    la   t1, gmin
    amomin.w x0, s7, (t1)
    mv   a0, x0
    lui  t2, 0
    jal  check

    li   s11, 164               # amoor.w / amoand.w of this thread's bit into gor / gand,
    li   t3, 1                  # amoxor.w / amominu.w of gid into gxor / gminu, amomaxu.w of
    sll  t3, t3, s7             # 0x80000000 | gid into gmaxu (results to x0)
    la   t1, gor
    amoor.w x0, t3, (t1)
    not  t3, t3
    la   t1, gand
    amoand.w x0, t3, (t1)
    la   t1, gxor
    amoxor.w x0, s7, (t1)
    la   t1, gminu
    amominu.w x0, s7, (t1)
    li   t3, 0x80000000
    or   t3, t3, s7
    la   t1, gmaxu
    amomaxu.w x0, t3, (t1)
    mv   a0, x0
    lui  t2, 0
    jal  check

    li   s11, 165               # lr.w / sc.w retry loop adding 1 to lrsc: the value this thread
    la   t1, lrsc               # read is below the thread count
1:
    lr.w a1, (t1)
    addi a2, a1, 1
    sc.w a3, a2, (t1)
    rhint 2f
    bnez a3, 1b
2:
    sltu a0, a1, t4
    li   t2, 1
    jal  check

# ---- Divergence with reconvergence hints ----------------------------------------------------

    li   s11, 141               # if/else on the lane's parity; rhint names the join point
    andi t1, s4, 1
    rhint 2f
    beqz t1, 1f
    li   a0, 3                  # odd lanes
    j    2f
1:
    li   a0, 5                  # even lanes
2:
    slli t1, t1, 1              # expected 5 - 2 * (laneid & 1)
    li   t2, 5
    sub  t2, t2, t1
    jal  check

    li   s11, 142               # a loop of laneid + 1 iterations: 0 + 1 + ... + laneid
    li   a0, 0
    li   a1, 0
1:
    add  a0, a0, a1
    addi a1, a1, 1
    rhint 2f
    bgeu s4, a1, 1b
2:
    addi t2, s4, 1              # expected laneid * (laneid + 1) / 2
    mul  t2, t2, s4
    srli t2, t2, 1
    jal  check

# ---- Barriers and shared memory -------------------------------------------------------------

    li   s11, 143               # shared memory is at 0x40000000: thread tid stores
    li   t0, 0x40000000         # ctaid << 16 | tid at shared + 4 * tid; after bar it reads
    slli t1, s0, 2              # the word of thread n = (tid + 1) mod ntid
    add  t1, t0, t1
    slli a1, s2, 16
    or   a1, a1, s0
    sw   a1, 0(t1)
    bar
    addi t3, s0, 1
    remu t3, t3, s1
    slli t4, t3, 2
    add  t4, t0, t4
    lw   a0, 0(t4)
    slli t2, s2, 16
    or   t2, t2, t3
    jal  check

    li   s11, 144               # a second bar before anyone overwrites its word: every thread
    bar                         # stores 0x80000000 | ctaid << 16 | tid; after a third bar it
    li   a2, 0x80000000         # reads thread n = (tid - 1) mod ntid's word
    or   a1, a1, a2
    sw   a1, 0(t1)
    bar
    add  t3, s0, s1
    addi t3, t3, -1
    remu t3, t3, s1
    slli t4, t3, 2
    add  t4, t0, t4
    lw   a0, 0(t4)
    sw   a0, 12(t6)
    slli t2, s2, 16
    or   t2, t2, t3
    or   t2, t2, a2
    jal  check

    li   s11, 145               # shared memory is per block: the word read back is this block's
    lw   a0, 0(t1)
    mv   t2, a1
    jal  check

    li   s11, 146               # local memory is per thread: the global id stored at 20(sp)
    lw   a0, 20(sp)             # before the barriers is still this thread's own
    mv   t2, s7
    jal  check

# ---- All tests passed -----------------------------------------------------------------------

    addi sp, sp, 32
    li   a0, 0
    li   a7, 93
    ecall

    .data
counter:                        # every thread amoadds 1
    .word 0
gmax:                           # amomax.w of every global id
    .word 0x80000000
gmin:                           # amomin.w of every global id
    .word 0x7fffffff
gswap:                          # amoswap.w of every global id
    .word 0xffffffff
gor:                            # amoor.w of 1 << (gid mod 32)
    .word 0
gand:                           # amoand.w of ~(1 << (gid mod 32))
    .word 0xffffffff
gxor:                           # amoxor.w of every global id
    .word 0
gminu:                          # amominu.w of every global id
    .word 0xffffffff
gmaxu:                          # amomaxu.w of 0x80000000 | gid
    .word 0x7fffffff
lrsc:                           # lr.w / sc.w increments
    .word 0
load_data:                      # bytes ff 7f 80 01 01 80 fe 7f, read by the load tests
    .word 0x01807fff
    .word 0x7ffe8001
results:                        # 256 entries of 4 words, indexed by global thread id
    .zero 4096
