# A co-simulation test program for RV32A (testbench/tests/test_cosim_sm.py; run with --grid 4
# --block 16): lr.w / sc.w retry loops on a global word, on a block's shared word and, inside a
# divergent branch, a maximum kept with lr.w / sc.w; private lr.w / sc.w on local memory; the
# five AMOs beyond add, swap, min and max. With gid = ctaid * ntid + tid and T threads:
#   lrsc      T: every thread adds 1 with an lr.w / sc.w loop
#   blocks    T: thread 0 of each block adds its block's shared count (ntid) after a barrier
#   oddmax    the largest odd gid: the odd threads raise it with lr.w / sc.w (a CAS loop)
#   gor gand  amoor.w of 1 << (gid mod 32) into 0; amoand.w of its complement into -1
#   gxor      amoxor.w of every gid into 0
#   gminu     amominu.w of gid + 1 into 0xffffffff: 1
#   gmaxu     amomaxu.w of 0x80000000 | gid into 0x7fffffff: 0x80000000 | (T - 1)
#   result[gid] = 0x10 | (sc after lr on a private word: 0) << 0 | (a second sc: 1) << 1
#                 | (sc after lr and a store to the word: 1) << 2   = 0x16
# Four blocks of two warps on the cosim SM's four warp slots: blocks 2 and 3 enter the slots
# blocks 0 and 1 leave, so their threads must start without reservations.
    .text
    .globl _start
_start:
    csrr    s0, tid
    csrr    s1, ntid
    csrr    s2, ctaid
    mul     s3, s2, s1
    add     s3, s3, s0          # s3 = gid

    la      t0, lrsc            # lrsc += 1, retried until the sc.w succeeds
1:
    lr.w    t1, (t0)
    addi    t1, t1, 1
    sc.w    t2, t1, (t0)
    rhint   2f
    bnez    t2, 1b
2:
    la      t0, shared_count    # the block's shared word += 1, the same way, after thread 0
    lw      t0, 0(t0)           # zeroed it (the SM does not clear shared memory between
    rhint   3f                  # the blocks that use a warp slot)
    bnez    s0, 3f
    sw      zero, 0(t0)
3:
    bar
1:
    lr.w.aq t1, (t0)
    addi    t1, t1, 1
    sc.w.rl t2, t1, (t0)
    rhint   2f
    bnez    t2, 1b
2:
    bar
    rhint   3f
    bnez    s0, 3f              # thread 0: blocks += the block's count
    lw      t1, 0(t0)
    la      t3, blocks
    amoadd.w x0, t1, (t3)
3:
    andi    t1, s3, 1           # odd threads: oddmax = max(oddmax, gid) with lr.w / sc.w
    rhint   5f
    beqz    t1, 5f
    la      t0, oddmax
4:
    lr.w    t1, (t0)
    rhint   5f
    bge     t1, s3, 5f          # already as large: nothing to store
    sc.w    t2, s3, (t0)
    rhint   5f
    bnez    t2, 4b
5:
    li      t3, 1               # the five AMOs beyond add, swap, min and max
    sll     t3, t3, s3
    la      t0, gor
    amoor.w x0, t3, (t0)
    not     t3, t3
    la      t0, gand
    amoand.w.aqrl x0, t3, (t0)
    la      t0, gxor
    amoxor.w x0, s3, (t0)
    addi    t3, s3, 1
    la      t0, gminu
    amominu.w x0, t3, (t0)
    li      t3, 0x80000000
    or      t3, t3, s3
    la      t0, gmaxu
    amomaxu.w x0, t3, (t0)

    addi    sp, sp, -16         # a private word: local memory
    li      s4, 0x10
    sw      s4, 0(sp)
    lr.w    t1, (sp)
    sc.w    t2, s3, (sp)        # holds: 0
    or      s4, s4, t2
    sc.w    t2, s3, (sp)        # ended by the first: 1
    slli    t2, t2, 1
    or      s4, s4, t2
    lr.w    t1, (sp)
    sw      t1, 0(sp)           # a store to the word breaks it
    sc.w    t2, s3, (sp)
    slli    t2, t2, 2
    or      s4, s4, t2
    la      t0, result
    slli    t1, s3, 2
    add     t0, t0, t1
    sw      s4, 0(t0)
    addi    sp, sp, 16
    li      a0, 0
    li      a7, 93
    ecall

    .data
    .align  2
shared_count:                   # the shared word the blocks count in
    .word   0x40000000
lrsc:
    .word   0
blocks:
    .word   0
oddmax:
    .word   0
gor:
    .word   0
gand:
    .word   0xffffffff
gxor:
    .word   0
gminu:
    .word   0xffffffff
gmaxu:
    .word   0x7fffffff
result:
    .zero   256
