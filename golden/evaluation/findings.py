"""Why our numbers differ from the seeds' where they do: found from the runs' traces and
metrics (docs/evaluation.md shows each beside the claim it explains), keyed by
:attr:`Claim.what <reconverge.golden.evaluation.experiments.Claim.what>`."""

from __future__ import annotations

FINDINGS: dict[str, str] = {}
