# A co-simulation regression (testbench/tests/test_cosim_sm.py; run with --grid 2 --block 20):
# a random program (golden/tests/randprog.py) that found an SM bug. Each block has three warps,
# the SM four warp slots: block 1 enters the slots blocks 0's first and last warps leave while
# its second warp still loops in lr.w / sc.w. The SM then named block 1 by block 0's first slot,
# which made block 0's remaining warp a member of block 1's barrier (a barrier deadlock in
# hardware, none in golden) and gave both blocks one shared-memory window.
    .text
    .globl _start
_start:
    csrr s0, tid
    csrr t1, ntid
    csrr t2, ctaid
    mul  t1, t1, t2
    add  s11, t1, s0
    addi s1, s0, 1
    addi s2, s0, 4
    addi s3, s0, 7
    addi s4, s0, 10
    li   t2, 0x40000000
    slli t1, s0, 2
    add  t1, t1, t2
    sw   s1, 0(t1)
    bar
    addi t1, s0, 1
    csrr t2, ntid
    remu t1, t1, t2
    slli t1, t1, 2
    li   t2, 0x40000000
    add  t1, t1, t2
    lw   t1, 0(t1)
    add  s1, s1, t1
    bar
    mv   a0, s1
    addi sp, sp, -16
    call f0
    addi sp, sp, 16
    add  s1, s1, a0
    la   t2, acc
    addi t2, t2, 32
retry1:
    lr.w t1, (t2)
    add  t1, t1, s1
    sc.w t1, t1, (t2)
    bnez t1, retry1
    slli t1, s11, 4
    la   t2, out
    add  t1, t1, t2
    sw   s1, 0(t1)
    slli t1, s11, 4
    la   t2, out
    add  t1, t1, t2
    sw   s2, 4(t1)
    slli t1, s11, 4
    la   t2, out
    add  t1, t1, t2
    sw   s3, 8(t1)
    slli t1, s11, 4
    la   t2, out
    add  t1, t1, t2
    sw   s4, 12(t1)
    andi a0, s1, 255
    li   a7, 93
    ecall
f0:
    sw   ra, 12(sp)
    andi t1, a0, 1
    beqz t1, f0_even
    addi a0, a0, 5
f0_even:
    xori a0, a0, 3
    lw   ra, 12(sp)
    ret
depth:
    sw   ra, 12(sp)
    beqz a1, depth_done
    addi a1, a1, -1
    addi a0, a0, 1
    addi sp, sp, -16
    call depth
    addi sp, sp, 16
depth_done:
    lw   ra, 12(sp)
    ret
    .data
input:
    .word 0x0
    .word 0x9e3779b1
    .word 0x3c6ef362
    .word 0xdaa66d13
    .word 0x78dde6c4
    .word 0x17156075
    .word 0xb54cda26
    .word 0x538453d7
    .word 0xf1bbcd88
    .word 0x8ff34739
    .word 0x2e2ac0ea
    .word 0xcc623a9b
    .word 0x6a99b44c
    .word 0x8d12dfd
    .word 0xa708a7ae
    .word 0x4540215f
    .word 0xe3779b10
    .word 0x81af14c1
    .word 0x1fe68e72
    .word 0xbe1e0823
    .word 0x5c5581d4
    .word 0xfa8cfb85
    .word 0x98c47536
    .word 0x36fbeee7
    .word 0xd5336898
    .word 0x736ae249
    .word 0x11a25bfa
    .word 0xafd9d5ab
    .word 0x4e114f5c
    .word 0xec48c90d
    .word 0x8a8042be
    .word 0x28b7bc6f
    .word 0xc6ef3620
    .word 0x6526afd1
    .word 0x35e2982
    .word 0xa195a333
    .word 0x3fcd1ce4
    .word 0xde049695
    .word 0x7c3c1046
    .word 0x1a7389f7
    .word 0xb8ab03a8
    .word 0x56e27d59
    .word 0xf519f70a
    .word 0x935170bb
    .word 0x3188ea6c
    .word 0xcfc0641d
    .word 0x6df7ddce
    .word 0xc2f577f
    .word 0xaa66d130
    .word 0x489e4ae1
    .word 0xe6d5c492
    .word 0x850d3e43
    .word 0x2344b7f4
    .word 0xc17c31a5
    .word 0x5fb3ab56
    .word 0xfdeb2507
    .word 0x9c229eb8
    .word 0x3a5a1869
    .word 0xd891921a
    .word 0x76c90bcb
    .word 0x1500857c
    .word 0xb337ff2d
    .word 0x516f78de
    .word 0xefa6f28f
acc:
    .word 0x0
    .word 0xffffffff
    .word 0x0
    .word 0x0
    .word 0x7fffffff
    .word 0x80000000
    .word 0xffffffff
    .word 0x0
    .word 0x0
out:
    .space 4096

