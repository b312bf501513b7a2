"""The statistics behind every figure: intervals, tests and multiple-comparison corrections over
rates (proportions), anytime-valid intervals (sequential), paired balance measures and power, the
tier studies' bootstrap draw. Pure numpy and scipy: nothing here reads a run folder."""
