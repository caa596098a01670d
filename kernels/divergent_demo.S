# The built-in program of `reconverge demo`: every thread counts the Collatz steps of
# n = (global thread id + 1) and stores the count in result[global thread id].
# Both the loop exit and the if/else inside the loop depend on n, so the threads of a warp
# diverge and reconverge; each divergent branch is preceded by its reconvergence hint.
    .text
    .globl _start
_start:
    csrr    t0, tid             # thread index in block
    csrr    t1, ntid            # block size
    csrr    t2, ctaid           # block index
    mul     t2, t2, t1
    add     t0, t0, t2          # t0 = global thread id
    addi    a1, t0, 1           # n
    li      a2, 0               # steps
    li      t3, 1
loop:
    rhint   done                # the loop exit reconverges at done
    beq     a1, t3, done
    andi    t4, a1, 1
    rhint   next                # the if/else reconverges at next
    bnez    t4, odd
    srli    a1, a1, 1           # even: n = n / 2
    j       next
odd:
    slli    t5, a1, 1
    add     a1, a1, t5
    addi    a1, a1, 1           # odd: n = 3n + 1
next:
    addi    a2, a2, 1
    j       loop
done:
    la      t5, result
    slli    t6, t0, 2
    add     t5, t5, t6
    sw      a2, 0(t5)
    li      a0, 0
    li      a7, 93              # exit(0)
    ecall

    .bss
    .align  2
    .globl  result
result:
    .space  4096
