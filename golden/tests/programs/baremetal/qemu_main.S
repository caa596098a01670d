# qemu_main.S: runs main.c thread by thread in one qemu-riscv32 process (Linux user mode): the
# physical reference of `make bench` (docs/performance.md). Linked with kernels/crt0.S and with
# main.c built with -DQEMU_USER (its thread id is then qemu_gid), and with -Wl,--wrap=main, so
# that crt0.S's call of main reaches __wrap_main here and __real_main is main.c's:
#
#   qemu-riscv32 PROGRAM N
#
# runs main() for the global thread ids 0 .. N-1 in turn; the exit status is 0 when every
# thread returned 0, else the first non-zero return value (2 without N). One process for all
# threads: qemu's start-up is paid once. .bss is zero-filled by the loader as on the SM, and each
# thread writes only its own results[] slot, so running them one after the other computes what
# the SM's concurrent threads compute.
#
# crt0.S calls main with sp as the loader left it (it leaves sp alone): argc at 0(sp), argv
# after it. This function never returns to its caller's frame state (crt0.S only exits), so it keeps
# its return address and counters in callee-saved registers without a frame.

    .text
    .globl __wrap_main
__wrap_main:
    mv   s2, ra
    lw   t0, 0(sp)              # argc
    li   a0, 2
    li   t1, 2
    blt  t0, t1, done
    lw   t0, 8(sp)              # argv[1]: N, in decimal
    li   s1, 0
    li   t2, 10
parse:
    lbu  t1, 0(t0)
    beqz t1, threads
    addi t1, t1, -48
    mul  s1, s1, t2
    add  s1, s1, t1
    addi t0, t0, 1
    j    parse
threads:
    li   s0, 0                  # the global thread id
next:
    li   a0, 0
    bgeu s0, s1, done
    la   t0, qemu_gid
    sw   s0, 0(t0)
    call __real_main
    bnez a0, done
    addi s0, s0, 1
    j    next
done:
    mv   ra, s2
    ret                         # to crt0.S, which exits with a0
