"""The functional model's inner loop compiled to native code (issue 9): ``block.c`` runs a
block's warps until an event the Python model handles, with golden/semantics.py as the
reference it is tested against (:mod:`.build` compiles it, :mod:`.kernel` drives it)."""
