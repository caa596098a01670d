# kernels/crt0.S: start-up code for bare-metal C programs on the reconverge SM (link with
# kernels/link.ld; README.md, "Bare-metal programs", gives the command).
#
# Every thread of every block starts here, concurrently, at 0x80000000.
#   * gp is set to __global_pointer$ (with relaxation off, so that this `la` is not itself
#     relaxed into a gp-relative access) for the gp-relative accesses the linker relaxes to.
#   * sp is left alone: the SM initialises it per thread to the top of the thread's own local
#     memory, so every thread has a private stack.
#   * .bss is NOT zeroed here. All threads share global memory, and a thread zeroing .bss could
#     wipe what a faster thread has already stored there. The loader zero-fills .bss instead
#     (it is the zero-filled tail, p_memsz beyond p_filesz, of the data PT_LOAD segment), so
#     .bss is zero before any thread starts.
#   * main's return value is this thread's exit code: ecall with a7 = 93 (exit), code in a0.

    .section .text.init, "ax", @progbits
    .globl _start
_start:
    .option push
    .option norelax
    la   gp, __global_pointer$
    .option pop
    call main
    li   a7, 93
    ecall
