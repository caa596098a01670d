# A co-simulation test program (testbench/tests/test_cosim_sm.py; run with --grid 1 --block 16
# --arg 5): indirect jumps to up to five targets (the target groups of one update: seed 003's
# stacks and seed 002's tables take two per clock), a `ret` without a call to three, a barrier,
# shared memory, AMOs, a division. With v(t) = 100 + t mod 5 + 10 (t mod 3 + 1):
# result[tid] = v(tid) + v((tid + 1) mod ntid); counter = threads; hist[tid mod 2] sums the
# neighbours' values.
    .text
    .globl _start
_start:
    csrr    s0, tid
    remu    t0, s0, a0          # case = tid mod a0 (a0 = 5)
    la      t1, table
    slli    t0, t0, 2
    add     t1, t1, t0
    lw      t1, 0(t1)
    rhint   joined              # the jump table reconverges at joined
    jalr    x0, 0(t1)           # indirect jump: up to five targets
case0:
    li      s1, 100
    j       joined
case1:
    li      s1, 101
    j       joined
case2:
    li      s1, 102
    j       joined
case3:
    li      s1, 103
    j       joined
case4:
    li      s1, 104
joined:
    li      t0, 3
    remu    t0, s0, t0          # second case = tid mod 3
    slli    t0, t0, 2
    la      t1, returns
    add     t1, t1, t0
    lw      ra, 0(t1)
    rhint   rejoined            # a return without a call: an indirect jump to three places
    ret
return0:
    addi    s1, s1, 10
    j       rejoined
return1:
    addi    s1, s1, 20
    j       rejoined
return2:
    addi    s1, s1, 30
rejoined:
    la      t2, shared_base
    lw      t2, 0(t2)
    slli    t3, s0, 2
    add     t3, t2, t3
    sw      s1, 0(t3)           # shared[tid] = s1
    bar
    csrr    t4, ntid
    addi    t5, s0, 1
    remu    t5, t5, t4
    slli    t5, t5, 2
    add     t5, t2, t5
    lw      s2, 0(t5)           # neighbour's value
    la      t6, counter
    li      a1, 1
    amoadd.w a2, a1, (t6)       # every thread increments
    andi    a3, s0, 1
    la      a4, hist
    slli    a3, a3, 2
    add     a4, a4, a3
    amoadd.w x0, s2, (a4)       # two words, many threads each
    la      a5, result
    slli    a6, s0, 2
    add     a5, a5, a6
    add     s3, s1, s2
    sw      s3, 0(a5)
    li      a0, 0
    li      a7, 93
    ecall

    .data
    .align  2
table:
    .word   case0, case1, case2, case3, case4
returns:
    .word   return0, return1, return2
shared_base:
    .word   0x40000000
counter:
    .word   0
hist:
    .word   0, 0
    .bss
    .align  2
result:
    .space  512
