"""The golden cycle-level SM model: the microarchitecture the HDL builds, with every divergence
policy of the seeds (see ``docs/architecture.md``)."""
