"""The A/B study: a run with [[arms]] (arms.py: one section per arm and the A/B page), the comparison
of two runs or arms (compare.py, `protolab compare`), every arm's effects ranked (ranking.py), and
what a run that stopped once settled says of itself (stopped.py)."""
