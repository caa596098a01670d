"""Tools around the HDL blocks (docs/hdl.md): Verilog generation, Verilator lint, the synthesis
harness and flows, the docs/area.md generator and the ``verilog`` / ``synth`` commands."""
