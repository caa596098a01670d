"""Why our numbers differ from the seeds' where they do: found from the runs' traces and
metrics (docs/evaluation.md shows each beside the claim it explains), keyed by
:attr:`Claim.what <reconverge.golden.evaluation.experiments.Claim.what>`. Each names the
columns of docs/evaluation.md (or the measurement) that show the cause."""

from __future__ import annotations

_FEW_SPLITS = (
    "the direction agrees, the size is under half of the paper's. The kernels expose few "
    "more schedulable splits than sps (column *splits mp*, and the Fig 13 table: 1.02-1.51 per "
    "warp, where seed 002 Sec 6.2 reports +50 % to +690 % for REND, MAND, MC, MUM and MEMC), "
    "so there is little to interleave. Our mandelbrot computes one pixel per thread in a loop "
    "with a single exit (no second split: 1.00), where the paper's MAND gives each thread "
    "several pixels; mummer's switch cases are a few instructions long. Where the suite has the "
    "paper's shapes the gains are the paper's size (raytrace, memcached, montecarlo rows)."
)

_HINTS_IN_THE_AVERAGE = (
    "lud is the minimum, and its difference is the `rhint` instructions alone: the hinted code "
    "issues 6,096 of them at eval size, with 31.5 of 32 threads active on average (they precede "
    "the branches, before the warp diverges), which raises the average activity of the hinted "
    "run; without them the two runs issue the same instructions with the same masks (0.758 "
    "both, measured from the issue traces), and the hint-free run is not slower."
)

_FEW_SPLITS_OREC = (
    "the direction agrees, the size just under half of the paper's, for the reason of the "
    "rows above: of the nine kernels on which some policy changes the cycles, six hold one or "
    "two splits at a time (loopBreak, nqueens, hashLookup, laplace3d, mummer, pathfinder: "
    "column *splits mp-orec*, 0.91-1.10) and gain 0-6 %, while the kernels with the paper's "
    "shapes reach the paper's size with OREC (montecarlo 1.84, raytrace 1.51, memcached "
    "1.20). pathfinder joins the nine only because dps runs it 1.1 % faster (a structured "
    "pyramid whose barriers keep the warps together; mp and mp-orec 0.994)."
)

FINDINGS: dict[str, str] = {
    "dps speedup over sps": _FEW_SPLITS,
    "mp speedup over sps": _FEW_SPLITS,
    "mp-orec speedup over sps": _FEW_SPLITS_OREC,
    "mp-orec speedup over dps": _FEW_SPLITS_OREC,
    "SIMD efficiency, mp-orec / sps": (
        "only kernels whose loops have several exits gain (montecarlo, raytrace, and a little "
        "memcached and laplace3d: columns *SIMD sps* / *SIMD mp-orec*); the others reconverge "
        "at the same points as sps. Seed 002's benchmarks were chosen for unstructured flow "
        "(REND, MAND, MC: Sec 6.1 attributes the gain to them); most of our nine leave their "
        "loops by one exit or are structured (pathfinder, laplace3d)."
    ),
    "hws speedup over sps (PDOM)": (
        "the direction agrees and the size is larger because most of the suite diverges far "
        "more than seed 001's ten benchmarks. Its shapes reproduce: our versions of the four "
        "full-warp benchmarks (aes, blackScholes, libor, storeGPU) gain nothing, as the paper's "
        "did (1.000-1.002), and neuralNet, whose last layers run on one thread, gains 2.34 (the "
        "paper's NN: 2.85); but eight of our kernels have Eq 6.1 estimates above 2 (column "
        "*estimate*), where the paper names three low-occupancy benchmarks (BFS, NN, NQU). "
        "Measured speedups stay below the estimates as seed 001 Sec 6.3 explains (the squeeze "
        "keeps each thread in its lane): interpreter's threads follow program t mod 4, so every "
        "quarter has its active threads in the same two lanes and nothing squeezes (1.008 "
        "against 2.17); initRows, with nothing to squeeze, pays hws's squeeze cycle on every "
        "branch (0.958)."
    ),
    "en-dwf speedup over dwf": (
        "the direction agrees; the gain is about twice the paper's because it comes from the "
        "kernels with low lane utilisation (condCall, recursion, mummer, montecarlo, raytrace, "
        "neuralNet 2.07: columns *en-dwf / dwf* and *lane util sps*), where DWF's home-slot "
        "rule refuses most merges; seed 001's benchmarks were mostly full warps. libor (1.17) "
        "is DWF's own loss repaired: its payoff branch splits warps that DWF's majority "
        "scheduling does not regroup (SIMD efficiency 0.996 with static warps, 0.695 under "
        "dwf, 0.813 under en-dwf; dwf 1.41x slower than static warps)."
    ),
    "activity factor, implicit / explicit, structured kernels": _HINTS_IN_THE_AVERAGE,
    "dynamic instructions, implicit / explicit (largest reduction)": (
        "montecarlo's implicit run also reconverges early inside its three-exit transport "
        "loop (its activity factor rises from 0.135 to 0.328), so it issues far fewer warp "
        "instructions than the removed hints account for; seed 003's 7 % is the hints alone on "
        "structured benchmarks, as ours are on the structured kernels (0.83-1.0)."
    ),
    "SIMD efficiency, stackless / sps (largest gain)": (
        "montecarlo (and raytrace, memcached): loops with several exits, where min(SP:PC) "
        "merges threads at their earliest common PC while sps holds them to the loop's IPDOM; "
        "seed 000 measured regular CUDA kernels (Sec 3: 'current CUDA kernels offer a much more "
        "regular control flow'), where the two differ by a few per cent, as on our structured "
        "kernels."
    ),
    "SIMD efficiency, stackless / sps (worst case)": (
        "again lud, and again only the hints: sps runs the hinted code and counts its nearly "
        "full `rhint` instructions, stack-less runs the hint-free code (0.758, as ppc implicit); "
        "stack-less is 1.14x faster on it."
    ),
    "remat speedup over linear scan (6 registers)": (
        "the registers our allocators spill are almost all divergent loop state (per-thread "
        "values), which every allocator keeps in local memory: instruction selection already "
        "builds constants next to their uses and the kernel parameters live in their frame homes "
        "under every allocator, so rows (i) and (iii) of Fig 4.3 find almost nothing to "
        "rematerialise (at 6 registers: raytrace 5 constants, lud 1 affine value)."
    ),
    "divergent speedup over linear scan (6 registers)": (
        "the same cause: few spilled values are uniform. Where they are (lud's and avgSquare's "
        "loop bounds and counters), moving them from local memory (220 cycles on `eval`) to "
        "shared memory (24) gives 1.18x (lud) and 1.70x (avgSquare); the other kernels' "
        "spills are divergent."
    ),
    "affine speedup over linear scan (6 registers)": (
        "as for the divergent allocator: affine adds shared-affine and rematerialised values, "
        "but at 6 registers it finds one such value per kernel at most (mandelbrot, montecarlo, "
        "interpreter: one 'shared affine' register each), and storing it costs as much as it "
        "saves. Ocelot's PTX keeps addresses and bounds live across whole kernels, which is "
        "what the paper's 29.7 % moved to shared memory."
    ),
    "affine / simple analysis time": (
        "an implementation constant, not the lattice: our affine analysis is a Python worklist "
        "over polynomial states (objects built and compared per visit), the simple one a set "
        "reachability; both stay linear in the variables (the two R^2 rows agree with the "
        "paper's), which is the paper's point."
    ),
    "divergent variables, affine / simple": (
        "the affine analysis proves uniform the values whose divergence the simple analysis "
        "derives only from comparisons of thread-relative values with equal slopes (avgSquare's "
        "loop, seed 004 Fig 2.2: 19 divergent become 17); no other suite kernel has such a "
        "comparison, since their divergence comes from loaded data. The paper's 177 Rodinia and "
        "SDK kernels are full of loops bounded by thread-relative limits."
    ),
    "RT entries a warp uses at most, mp-orec": (
        "recursion is the maximum, and only it: is_even and is_odd branch on their argument at "
        "every level of a recursion up to 8 deep (fib as well), so each level keeps its own "
        "reconvergence point in the RT until it returns (17 entries under mp and mp-orec "
        "alike: OREC merges splits at one PC and cannot merge levels of a call stack). Seed "
        "002's CUDA benchmarks have no recursion. The other kernels stay within the paper's "
        "bound (column *ST/RT mp-orec*: 6 or fewer)."
    ),
}
