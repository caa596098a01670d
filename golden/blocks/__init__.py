"""Golden twins of the HDL blocks: the reference each Amaranth block is held to under cocotb,
and the building blocks of the golden cycle-level SM model."""
