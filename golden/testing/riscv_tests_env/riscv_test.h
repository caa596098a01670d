/* riscv_test.h: the reconverge SM as a target environment of the public RISC-V ISA tests
 * (riscv-tests, isa/rv32u*: the physical-memory "p" environment's macros, written for the SM).
 *
 * A test is an ordinary user program: it starts at _start in .text.init (linked at 0x80000000 by
 * golden/tests/programs/baremetal/link.ld), runs its numbered cases with the case number in
 * TESTNUM (gp), and ends the thread with the Linux exit system call (a7 = 93), which both the
 * SM (docs/isa.md) and qemu-user implement: exit code 0 when every case passed, the number of
 * the failing case otherwise. There is no trap handler and no privileged state: a test that
 * traps is a fault the simulator reports.
 */
#ifndef RECONVERGE_RISCV_TEST_H
#define RECONVERGE_RISCV_TEST_H

#define RVTEST_RV32U .macro init; .endm
#define RVTEST_RV64U RVTEST_RV32U

#define TESTNUM gp

#define RVTEST_CODE_BEGIN \
        .section .text.init; \
        .align 2; \
        .globl _start; \
_start: \
        init;

#define RVTEST_CODE_END

#define RVTEST_PASS \
        fence; \
        li a0, 0; \
        li a7, 93; \
        ecall;

#define RVTEST_FAIL \
        fence; \
        mv a0, TESTNUM; \
        li a7, 93; \
        ecall;

#define EXTRA_DATA

#define RVTEST_DATA_BEGIN \
        EXTRA_DATA \
        .align 4; \
        .globl begin_signature; \
begin_signature:

#define RVTEST_DATA_END \
        .align 4; \
        .globl end_signature; \
end_signature:

#endif
