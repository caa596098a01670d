"""Plots of a run's issue trace: active threads per cycle (warp activity over time) and the
warp occupancy histogram of seed 001 Fig 1.1 (the share of issued warp instructions with each
number of active threads)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display

import matplotlib.pyplot as plt
import numpy as np

from reconverge.golden.sm.core import IssueRecord


def active_per_cycle(trace: Sequence[IssueRecord], cycles: int) -> np.ndarray:
    """Active threads issued in each cycle (a warp instruction's threads count in the cycle it
    issues; the cycles its later passes occupy show its passes' share)."""
    out = np.zeros(max(cycles, 1), np.float64)
    for r in trace:
        share = r.mask.bit_count() / r.passes
        out[r.cycle : r.cycle + r.passes] += share
    return out


def occupancy_histogram(trace: Sequence[IssueRecord], warp_size: int) -> np.ndarray:
    """Fraction of issued warp instructions with 1..W active threads (index k = k+1 threads)."""
    counts = np.bincount([r.mask.bit_count() for r in trace], minlength=warp_size + 1)[1:]
    total = counts.sum()
    return counts / total if total else counts.astype(np.float64)


def plot_run(
    trace: Sequence[IssueRecord],
    *,
    cycles: int,
    warp_size: int,
    simd_width: int,
    title: str,
    path: str | Path,
) -> None:
    """Write a PNG with the two panels."""
    active = active_per_cycle(trace, cycles)
    window = max(1, len(active) // 400)
    smooth = np.convolve(active, np.ones(window) / window, mode="same")
    hist = occupancy_histogram(trace, warp_size)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6.5), constrained_layout=True)
    top.plot(np.arange(len(smooth)), smooth, lw=0.8, color="tab:blue")
    top.axhline(simd_width, color="gray", ls="--", lw=0.8, label=f"L = {simd_width} lanes")
    top.set_xlabel("cycle")
    top.set_ylabel("active threads per cycle")
    top.set_title(f"{title}: warp activity" + (f" ({window}-cycle mean)" if window > 1 else ""))
    top.set_xlim(0, max(len(smooth), 1))
    top.set_ylim(0, simd_width * 1.1)
    top.legend(loc="upper right")
    bottom.bar(np.arange(1, warp_size + 1), hist * 100, color="tab:orange")
    bottom.set_xlabel("active threads per issued warp instruction")
    bottom.set_ylabel("% of warp instructions")
    bottom.set_title("warp occupancy (seed 001 Fig 1.1)")
    bottom.set_xlim(0.5, warp_size + 0.5)
    fig.savefig(path, dpi=110)
    plt.close(fig)
