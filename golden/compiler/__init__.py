"""reconverge.golden.compiler: the divergence-aware compiler of seed 004 for the kernel language
(``docs/compiler.md``)."""

from reconverge.golden.compiler.lang import (
    Array,
    Device,
    Kernel,
    atomic_add,
    atomic_and,
    atomic_max,
    atomic_maxu,
    atomic_min,
    atomic_minu,
    atomic_or,
    atomic_swap,
    atomic_xor,
    barrier,
    ctaid,
    device,
    kernel,
    kernels_from_source,
    laneid,
    load_kernels,
    nctaid,
    ntid,
    shared,
    tid,
    warpid,
    warpsize,
)

__all__ = [
    "Array",
    "Device",
    "Kernel",
    "atomic_add",
    "atomic_and",
    "atomic_max",
    "atomic_maxu",
    "atomic_min",
    "atomic_minu",
    "atomic_or",
    "atomic_swap",
    "atomic_xor",
    "barrier",
    "ctaid",
    "device",
    "kernel",
    "kernels_from_source",
    "laneid",
    "load_kernels",
    "nctaid",
    "ntid",
    "shared",
    "tid",
    "warpid",
    "warpsize",
]

from reconverge.golden.compiler.codegen import compile_kernel
from reconverge.golden.compiler.launch import Launch, Program

__all__ += ["Launch", "Program", "compile_kernel"]
