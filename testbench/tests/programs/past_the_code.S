# A co-simulation regression (testbench/tests/test_cosim_sm.py): a jump past the end of the
# code into the part of the instruction store the testbench does not load. Golden fetches word
# 0 there, an illegal instruction; the SM's store held word 0 with predecode bits of 0 (not
# faulting), so the SM ran on through zeros until the testbench's watchdog.
    .text
    .globl _start
_start:
    la   t0, _start
    addi t0, t0, 40       # 10 words on: the program has 7
    jr   t0
    li   a0, 0
    li   a7, 93
    ecall
