# qemu_start.S: start-up code that runs main.c thread by thread in one qemu-riscv32 process
# (Linux user mode): the physical reference of `make bench` (docs/performance.md). Used in place
# of kernels/crt0.S, with main.c built with -DQEMU_USER (its thread id then comes from qemu_gid).
#
#   qemu-riscv32 PROGRAM N
#
# runs main() for the global thread ids 0 .. N-1 in turn; the exit status is 0 when every thread
# returned 0, else the first non-zero return value (2 without N). One process for all threads:
# qemu's start-up is paid once. .bss is zero-filled by the loader as on the SM; each thread
# writes only its own results[] slot, so running them one after the other is what the SM's
# concurrent threads compute.

    .section .text.init, "ax", @progbits
    .globl _start
_start:
    .option push
    .option norelax
    la   gp, __global_pointer$
    .option pop
    lw   t0, 0(sp)              # argc
    li   a0, 2
    li   t1, 2
    blt  t0, t1, exit
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
    li   s0, 0                  # the global thread id (s0, s1 survive the call)
next:
    li   a0, 0
    bgeu s0, s1, exit
    la   t0, qemu_gid
    sw   s0, 0(t0)
    call main
    bnez a0, exit
    addi s0, s0, 1
    j    next
exit:
    li   a7, 93                 # exit(a0), as crt0.S ends a thread on the SM
    ecall
