"""Scripted strategies. The built-in `random` strategy runs inside the C engine
(sim/engine/decisions.pxi); more strategies arrive with the strategies issue."""
