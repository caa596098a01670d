"""The analytical area and energy model (issue 11): inventories of primitives per unit from the
geometry alone (:mod:`.inventory`, :mod:`.blocks`), priced with coefficients fitted to synthesis
(:mod:`.model`, :mod:`.fit`)."""
