/* The functional model's inner loop, compiled: one block's warps issue instructions round robin
 * under stack-less arbitration (seed 000 Sec 4.1), exactly as golden/functional.py's `_schedule`
 * and golden/semantics.py define, until an event the Python model handles.
 *
 * The Python definition is the reference; this loop only runs what it can finish without it and
 * stops *before* any instruction it does not handle, leaving every state unchanged:
 *   - an instruction that would fault (misaligned or unmapped access, misaligned jump target,
 *     fetch outside global memory, an illegal word, ecall other than exit, ebreak),
 *   - lr.w, sc.w, CSR writes and unknown CSRs, and stores and AMOs while an LR reservation is
 *     held (the reservations live in Python),
 *   - a pc whose decoded entry is missing or stale (Python decodes it: one decoder),
 *   - no warp with runnable threads (barrier completion, end of the block),
 *   - the budget of warp instructions spent (progress and the step limit).
 * The operation numbers come from `ops.h`, generated from golden/isa.py's SPECS.
 */
#include <stdint.h>
#include <string.h>

#include "ops.h"

#define REGS 32
#define REG_SP 2
#define REG_A0 10
#define REG_A7 17
#define SYSCALL_EXIT 93
#define MAX_WARP 64

/* One decoded instruction word, at code[(pc - global_base) / 4]. */
typedef struct {
    uint32_t word;  /* the word it was decoded from: a store into code makes it stale */
    int32_t imm;    /* the immediate; for OP_CSR_READ the CSR's row of warp_t.csrs */
    uint8_t op, rd, rs1, rs2;
    uint8_t valid, pad[3];
} entry_t;

/* One warp's state: NumPy arrays of the Python model, shared (lane-major registers). */
typedef struct {
    uint32_t *regs;         /* W x 32 */
    uint32_t *pc;           /* W */
    uint8_t *runnable;      /* W, bool */
    uint8_t *waiting;       /* W, bool */
    uint8_t *exited;        /* W, bool */
    int32_t *exit_codes;    /* W */
    int64_t *instructions;  /* W */
    uint8_t *local;         /* W x local_size: each lane's local memory */
    uint32_t *csrs;         /* CSRS x W: the SIMT CSRs' per-lane values */
    int64_t n_runnable;
} warp_t;

typedef struct {
    uint8_t *global;
    entry_t *code;
    uint8_t *shared;
    uint32_t global_base, global_size;
    uint32_t shared_base, shared_size;
    uint32_t local_base, local_size;
    int32_t width, nwarps;
    int32_t reservations; /* LR reservations are held: stores and AMOs stop */
    int32_t turn;         /* in: the warp to look at first; out: the warp stopped at */
    int64_t budget;       /* in: warp instructions to run at most */
    int64_t steps;        /* out: warp instructions run */
    uint32_t stop_pc;     /* out: the pc of a STOP_MISS */
    int32_t reason;       /* out: STOP_* */
} block_t;

enum { STOP_BUDGET = 0, STOP_IDLE = 1, STOP_MISS = 2, STOP_PYTHON = 3 };
enum { DONE = 0, DEFER = 1 };

static inline uint32_t get32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The byte of `addr` for `lane` (size-aligned and inside one window), or NULL: the reference
 * path then raises the fault. Windows as golden/memory.py's WarpMemory routes them. */
static uint8_t *locate(const block_t *b, const warp_t *w, int lane, uint32_t addr,
                       uint32_t size) {
    if (addr & (size - 1)) return NULL;
    uint32_t off = addr - b->global_base;
    if (off < b->global_size) return b->global + off;
    off = addr - b->shared_base;
    if (off < b->shared_size) return b->shared + off;
    off = addr - b->local_base;
    if (off < b->local_size) return w->local + (size_t)lane * b->local_size + off;
    return NULL;
}

static uint32_t load(const uint8_t *p, int op) {
    switch (op) {
        case OP_LB: return (uint32_t)(int32_t)(int8_t)p[0];
        case OP_LBU: return p[0];
        case OP_LH: return (uint32_t)(int32_t)(int16_t)(p[0] | p[1] << 8);
        case OP_LHU: return (uint32_t)(p[0] | p[1] << 8);
        default: return get32(p);
    }
}

static void store(uint8_t *p, uint32_t value, uint32_t size) {
    for (uint32_t i = 0; i < size; i++) p[i] = (uint8_t)(value >> (8 * i));
}

static uint32_t alu(int op, uint32_t a, uint32_t b) {
    int32_t sa = (int32_t)a, sb = (int32_t)b;
    switch (op) {
        case OP_ADD: case OP_ADDI: return a + b;
        case OP_SUB: return a - b;
        case OP_SLL: case OP_SLLI: return a << (b & 31);
        case OP_SRL: case OP_SRLI: return a >> (b & 31);
        case OP_SRA: case OP_SRAI: return (uint32_t)(sa >> (b & 31));
        case OP_SLT: case OP_SLTI: return sa < sb;
        case OP_SLTU: case OP_SLTIU: return a < b;
        case OP_XOR: case OP_XORI: return a ^ b;
        case OP_OR: case OP_ORI: return a | b;
        case OP_AND: case OP_ANDI: return a & b;
        case OP_MUL: return (uint32_t)((uint64_t)a * b);
        case OP_MULH: return (uint32_t)(((int64_t)sa * sb) >> 32);
        case OP_MULHSU: return (uint32_t)(((int64_t)sa * (int64_t)b) >> 32);
        case OP_MULHU: return (uint32_t)(((uint64_t)a * b) >> 32);
        case OP_DIV:
            if (b == 0) return UINT32_MAX;
            if (sa == INT32_MIN && sb == -1) return a;
            return (uint32_t)(sa / sb);
        case OP_REM:
            if (b == 0) return a;
            if (sa == INT32_MIN && sb == -1) return 0;
            return (uint32_t)(sa % sb);
        case OP_DIVU: return b ? a / b : UINT32_MAX;
        default: /* OP_REMU */ return b ? a % b : a;
    }
}

static int is_alu(int op) {
    switch (op) {
        case OP_ADD: case OP_SUB: case OP_SLL: case OP_SRL: case OP_SRA: case OP_SLT:
        case OP_SLTU: case OP_XOR: case OP_OR: case OP_AND: case OP_MUL: case OP_MULH:
        case OP_MULHSU: case OP_MULHU: case OP_DIV: case OP_DIVU: case OP_REM: case OP_REMU:
            return 1;
        default: return 0;
    }
}

static int is_alu_imm(int op) {
    switch (op) {
        case OP_ADDI: case OP_SLTI: case OP_SLTIU: case OP_XORI: case OP_ORI: case OP_ANDI:
        case OP_SLLI: case OP_SRLI: case OP_SRAI:
            return 1;
        default: return 0;
    }
}

static int taken(int op, uint32_t a, uint32_t b) {
    switch (op) {
        case OP_BEQ: return a == b;
        case OP_BNE: return a != b;
        case OP_BLT: return (int32_t)a < (int32_t)b;
        case OP_BGE: return (int32_t)a >= (int32_t)b;
        case OP_BLTU: return a < b;
        default: /* OP_BGEU */ return a >= b;
    }
}

static uint32_t amo(int op, uint32_t old, uint32_t v) {
    switch (op) {
        case OP_AMOSWAP_W: return v;
        case OP_AMOADD_W: return old + v;
        case OP_AMOXOR_W: return old ^ v;
        case OP_AMOAND_W: return old & v;
        case OP_AMOOR_W: return old | v;
        case OP_AMOMIN_W: return (int32_t)old <= (int32_t)v ? old : v;
        case OP_AMOMAX_W: return (int32_t)old >= (int32_t)v ? old : v;
        case OP_AMOMINU_W: return old <= v ? old : v;
        default: /* OP_AMOMAXU_W */ return old >= v ? old : v;
    }
}

static int access_size(int op) {
    switch (op) {
        case OP_LB: case OP_LBU: case OP_SB: return 1;
        case OP_LH: case OP_LHU: case OP_SH: return 2;
        default: return 4;
    }
}

#define REG(lane, r) (w->regs[(size_t)(lane) * REGS + (r)])

/* Take `lanes` out of arbitration into `status` (exited or waiting). */
static void stop_lanes(warp_t *w, const int *lanes, int n, uint8_t *status) {
    for (int i = 0; i < n; i++) {
        status[lanes[i]] = 1;
        w->runnable[lanes[i]] = 0;
    }
    w->n_runnable -= n;
}

/* Execute `e` at `pc` for `lanes` (increasing), or change nothing and return DEFER. */
static int execute(const block_t *b, warp_t *w, const entry_t *e, uint32_t pc, const int *lanes,
                   int n) {
    int op = e->op, rd = e->rd;
    uint32_t imm = (uint32_t)e->imm, next = pc + 4;
    uint32_t result[MAX_WARP];
    uint8_t *where[MAX_WARP];

    if (is_alu(op) || is_alu_imm(op)) {
        int immediate = is_alu_imm(op);
        for (int i = 0; i < n; i++)
            result[i] = alu(op, REG(lanes[i], e->rs1), immediate ? imm : REG(lanes[i], e->rs2));
    } else {
        switch (op) {
            case OP_LUI: case OP_AUIPC: {
                uint32_t value = (imm << 12) + (op == OP_AUIPC ? pc : 0);
                for (int i = 0; i < n; i++) result[i] = value;
                break;
            }
            case OP_CSR_READ:
                for (int i = 0; i < n; i++) result[i] = w->csrs[(size_t)imm * b->width + lanes[i]];
                break;
            case OP_LB: case OP_LH: case OP_LW: case OP_LBU: case OP_LHU: {
                uint32_t size = access_size(op);
                for (int i = 0; i < n; i++)
                    if (!(where[i] = locate(b, w, lanes[i], REG(lanes[i], e->rs1) + imm, size)))
                        return DEFER;
                for (int i = 0; i < n; i++) result[i] = load(where[i], op);
                break;
            }
            case OP_SB: case OP_SH: case OP_SW: {
                uint32_t size = access_size(op);
                if (b->reservations) return DEFER;
                for (int i = 0; i < n; i++)
                    if (!(where[i] = locate(b, w, lanes[i], REG(lanes[i], e->rs1) + imm, size)))
                        return DEFER;
                for (int i = 0; i < n; i++) store(where[i], REG(lanes[i], e->rs2), size);
                rd = 0;
                break;
            }
            case OP_AMOSWAP_W: case OP_AMOADD_W: case OP_AMOXOR_W: case OP_AMOAND_W:
            case OP_AMOOR_W: case OP_AMOMIN_W: case OP_AMOMAX_W: case OP_AMOMINU_W:
            case OP_AMOMAXU_W:
                if (b->reservations) return DEFER;
                for (int i = 0; i < n; i++)
                    if (!(where[i] = locate(b, w, lanes[i], REG(lanes[i], e->rs1) + imm, 4)))
                        return DEFER;
                for (int i = 0; i < n; i++) { /* serialised in increasing lane order */
                    result[i] = get32(where[i]);
                    store(where[i], amo(op, result[i], REG(lanes[i], e->rs2)), 4);
                }
                break;
            case OP_BEQ: case OP_BNE: case OP_BLT: case OP_BGE: case OP_BLTU: case OP_BGEU: {
                uint32_t target = pc + imm;
                int go[MAX_WARP], any = 0;
                for (int i = 0; i < n; i++)
                    any |= go[i] = taken(op, REG(lanes[i], e->rs1), REG(lanes[i], e->rs2));
                if (any && (target & 3)) return DEFER;
                for (int i = 0; i < n; i++) w->pc[lanes[i]] = go[i] ? target : next;
                return DONE;
            }
            case OP_JAL: case OP_JALR: {
                uint32_t target[MAX_WARP];
                for (int i = 0; i < n; i++) {
                    target[i] = op == OP_JAL ? pc + imm : (REG(lanes[i], e->rs1) + imm) & ~1u;
                    if (target[i] & 3) return DEFER;
                }
                for (int i = 0; i < n; i++) {
                    if (rd) REG(lanes[i], rd) = next;
                    w->pc[lanes[i]] = target[i];
                }
                return DONE;
            }
            case OP_ECALL:
                for (int i = 0; i < n; i++)
                    if (REG(lanes[i], REG_A7) != SYSCALL_EXIT) return DEFER;
                for (int i = 0; i < n; i++) {
                    w->exit_codes[lanes[i]] = (int32_t)REG(lanes[i], REG_A0);
                    w->pc[lanes[i]] = next;
                }
                stop_lanes(w, lanes, n, w->exited);
                return DONE;
            case OP_BAR: /* the lanes wait at the barrier's own pc */
                stop_lanes(w, lanes, n, w->waiting);
                return DONE;
            case OP_FENCE: case OP_FENCE_I: case OP_RHINT:
                rd = 0;
                break;
            default: /* lr.w, sc.w, CSR writes, ebreak, illegal words: the reference's */
                return DEFER;
        }
    }
    for (int i = 0; i < n; i++) {
        if (rd) REG(lanes[i], rd) = result[i];
        w->pc[lanes[i]] = next;
    }
    return DONE;
}

/* Issue round robin from warp `turn` until a STOP_* event; see the top of this file. */
void run_block(block_t *b, warp_t *warps) {
    int nwarps = b->nwarps, width = b->width, turn = b->turn, reason = STOP_BUDGET;
    int64_t steps = 0;
    int lanes[MAX_WARP];
    while (steps < b->budget) {
        warp_t *w = NULL;
        for (int i = 0; i < nwarps && !w; i++) {
            int k = (turn + i) % nwarps;
            if (warps[k].n_runnable) {
                w = &warps[k];
                turn = k;
            }
        }
        if (!w) {
            reason = STOP_IDLE;
            break;
        }
        /* the runnable lanes at the minimum SP:PC */
        uint64_t best = UINT64_MAX;
        int n = 0;
        for (int lane = 0; lane < width; lane++) {
            if (!w->runnable[lane]) continue;
            uint64_t key = (uint64_t)REG(lane, REG_SP) << 32 | w->pc[lane];
            if (key < best) {
                best = key;
                n = 0;
            }
            if (key == best) lanes[n++] = lane;
        }
        uint32_t pc = (uint32_t)best, offset = pc - b->global_base;
        if ((pc & 3) || offset >= b->global_size) {
            reason = STOP_PYTHON;
            break;
        }
        const entry_t *e = &b->code[offset >> 2];
        if (!e->valid || e->word != get32(b->global + offset)) {
            b->stop_pc = pc;
            reason = STOP_MISS;
            break;
        }
        if (execute(b, w, e, pc, lanes, n) == DEFER) {
            reason = STOP_PYTHON;
            break;
        }
        for (int i = 0; i < n; i++) w->instructions[lanes[i]]++;
        steps++;
        turn = (turn + 1) % nwarps;
    }
    b->turn = turn;
    b->steps = steps;
    b->reason = reason;
}
