"""The HDL blocks of the SM datapath (docs/hdl.md): Amaranth components held to their golden
twins in ``reconverge.golden.blocks``, and the glue they share (ports, helpers)."""
