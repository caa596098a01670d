"""Formal checks of the HDL blocks (issue 27, docs/formal.md): per block its properties, each
the rule of a paper stated with ``Assert`` over free inputs, proven with SymbiYosys by bounded
model checking and k-induction, with covers showing the cases are reachable."""
