/* main.c: an ordinary bare-metal RV32IM C program for the reconverge SM (crt0.S, link.ld).
 *
 * Every thread of the launch runs main() concurrently. main runs a series of self-checks and
 * returns 0 when all pass, otherwise the number of the first failing check; crt0.S makes that
 * the thread's exit code. Built with -DFAIL, the expected result of check 3 (the sort) is
 * wrong, so every thread returns 3.
 *
 * Global memory is shared by all threads, so the program keeps one rule: threads only read the
 * shared globals (.rodata, .data, .sdata), and the only global a thread writes is its own slot
 * results[gid] in .bss. crt0.S does not zero .bss (a thread zeroing it could wipe slots other
 * threads have already written); the loader zero-fills it, which check 1 relies on. Locals
 * live on the thread's private stack in local memory.
 *
 * Inputs the compiler must not fold are volatile globals, and the work differs per thread
 * (sort rotation, recursion depth, division operands) so the threads of a warp diverge.
 */

#define MAX_THREADS 256
#define N_SORT 16

/* .rodata: constant tables. */
static const unsigned crc_nibble_table[16] = {
    0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac, 0x76dc4190, 0x6b6b51f4,
    0x4db26158, 0x5005713c, 0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c,
    0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c,
};
static const char crc_check_input[] = "123456789"; /* CRC-32 check value 0xcbf43926 */
static const int sorted_expected[N_SORT] = {
    -2147483647 - 1, -77, -5, -1, 0, 3, 5, 7, 7, 8, 12, 19, 23, 42, 1000,
#ifdef FAIL
    2147483646, /* deliberately wrong: check 3 fails */
#else
    2147483647,
#endif
};

/* .data: initialised globals, only read. */
int unsorted[N_SORT] = {
    23, -5, 1000, 0, 7, -2147483647 - 1, 42, 7, 2147483647, -1, 3, 19, -77, 8, 5, 12,
};

/* .sdata (gp-relative): inputs read through volatile so that the checks are computed at run
 * time. */
volatile unsigned fib_n = 15;
volatile int dividend = -7;
volatile int divisor = 2;
volatile unsigned udividend = 0xffffffffu;

/* .bss: one slot per thread, written only by that thread: the CRC-32 of the four
 * little-endian bytes of its global thread id (the host recomputes it). */
unsigned results[MAX_THREADS];

#ifdef QEMU_USER
/* Under qemu-riscv32, which has no SIMT identity CSRs, qemu_main.S runs the threads one after
 * the other: it stores each one's global thread id here and calls main. */
unsigned qemu_gid;

static unsigned global_thread_id(void)
{
    return qemu_gid;
}
#else
/* ctaid * ntid + tid, from the SIMT identity CSRs: csrrs rd, csr, x0 spelt as .insn because
 * -march=rv32im has no Zicsr (the 12-bit immediate of .insn is signed: csr - 0x1000). */
static unsigned global_thread_id(void)
{
    unsigned tid, ntid, ctaid;
    __asm__ volatile(".insn i 0x73, 2, %0, x0, 0xcc0 - 0x1000" : "=r"(tid));
    __asm__ volatile(".insn i 0x73, 2, %0, x0, 0xcc1 - 0x1000" : "=r"(ntid));
    __asm__ volatile(".insn i 0x73, 2, %0, x0, 0xcc2 - 0x1000" : "=r"(ctaid));
    return ctaid * ntid + tid;
}
#endif

/* CRC-32 (IEEE, reflected, polynomial 0xedb88320) one bit at a time. */
static unsigned crc32_bitwise(const unsigned char *p, unsigned n)
{
    unsigned crc = 0xffffffffu;
    for (unsigned i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
    }
    return ~crc;
}

/* The same CRC-32, four bits at a time from the .rodata table. */
static unsigned crc32_nibble(const unsigned char *p, unsigned n)
{
    unsigned crc = 0xffffffffu;
    for (unsigned i = 0; i < n; i++) {
        crc ^= p[i];
        crc = (crc >> 4) ^ crc_nibble_table[crc & 15];
        crc = (crc >> 4) ^ crc_nibble_table[crc & 15];
    }
    return ~crc;
}

static void insertion_sort(int *a, int n)
{
    for (int i = 1; i < n; i++) {
        int v = a[i];
        int j = i - 1;
        while (j >= 0 && a[j] > v) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = v;
    }
}

/* Recursive: the call depth, and so the stack in local memory, differs between threads. */
static unsigned fib(unsigned n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static unsigned fib_iterative(unsigned n)
{
    unsigned a = 0, b = 1;
    for (unsigned i = 0; i < n; i++) {
        unsigned t = a + b;
        a = b;
        b = t;
    }
    return a;
}

static unsigned gcd(unsigned a, unsigned b)
{
    return b == 0 ? a : gcd(b, a % b);
}

static int abs_int(int x)
{
    return x < 0 ? -x : x;
}

/* C division truncates towards zero: for 64 operand pairs derived from seed, q * d + r == n,
 * |r| < |d|, r has the sign of n, and the same identities hold for the unsigned division. */
static int division_ok(unsigned seed)
{
    for (unsigned i = 0; i < 64; i++) {
        int n = (int)((seed + i) * 2654435761u);
        int d = (int)(i * 40503u % 1000u) - 500;
        if (d == 0)
            continue;
        int q = n / d, r = n % d;
        if (q * d + r != n || abs_int(r) >= abs_int(d) || (r != 0 && (r < 0) != (n < 0)))
            return 0;
        unsigned un = (unsigned)n, ud = (unsigned)d;
        if ((un / ud) * ud + un % ud != un || un % ud >= ud)
            return 0;
    }
    return dividend / divisor == -3 && dividend % divisor == -1 &&
           udividend / 10u == 429496729u && udividend % 10u == 5u;
}

int main(void)
{
    unsigned gid = global_thread_id();
    if (gid >= MAX_THREADS || results[gid] != 0)
        return 1; /* .bss was not zero-filled, or another thread wrote this slot */

    const unsigned char *check = (const unsigned char *)crc_check_input;
    if (crc32_bitwise(check, 9) != 0xcbf43926u || crc32_nibble(check, 9) != 0xcbf43926u)
        return 2;

    int a[N_SORT]; /* a different rotation of unsorted[] in every thread, sorted */
    for (unsigned i = 0; i < N_SORT; i++)
        a[i] = unsorted[(i + gid) % N_SORT];
    insertion_sort(a, N_SORT);
    for (int i = 0; i < N_SORT; i++)
        if (a[i] != sorted_expected[i])
            return 3;

    unsigned m = gid % 8 + 5;
    if (fib(fib_n) != 610u || fib(m) != fib_iterative(m))
        return 4;

    if (!division_ok(gid))
        return 5;

    /* gcd(F(m), F(12)) = F(gcd(m, 12)) for Fibonacci numbers F. */
    if (gcd(fib_iterative(m), fib_iterative(12)) != fib_iterative(gcd(m, 12)))
        return 6;

    unsigned char bytes[4] = {gid, gid >> 8, gid >> 16, gid >> 24};
    unsigned crc = crc32_bitwise(bytes, 4);
    if (crc != crc32_nibble(bytes, 4))
        return 7;
    results[gid] = crc;
    return 0;
}
