"""Formal checks of the HDL blocks and of the SM's warp bookkeeping (issue 27, docs/formal.md):
per block its properties, each the rule of a paper stated with ``Assert`` over free inputs,
proven with SymbiYosys by bounded model checking and k-induction, with covers showing the cases
are reachable; per policy variant, a small SM on free control code whose divergence block keeps
its contract and rules inside it (``sm.py``, by bounded model checking)."""
