"""How many repetitions a side a comparison needs before it is a verdict
(docs/report.md, "Minimum repetitions"): a rule of both the experiment's
design (:mod:`v6bench.methods.registry`, the repetitions a test runs by
default) and its analysis (:mod:`v6bench.report.stats`).
"""

#: Fewer repetitions a side than this give "not enough repetitions", never a
#: verdict: with 5 a side Welch's test has 4 or more degrees of freedom, and
#: even the Mann–Whitney test can reach p = 0.008 (complete separation); with
#: 3 the Mann–Whitney test cannot go below 0.1. Tests whose repetitions the
#: report compares run this many unless told otherwise
#: (:func:`v6bench.methods.registry.default_design`).
MIN_REPETITIONS = 5

#: Fewer pairs than this give "not enough repetitions" in a paired comparison
#: (both families, or a scenario and its control, in each trial): the exact
#: two-sided Wilcoxon signed-rank test's smallest p is 2/2ⁿ, 0.0625 with 5
#: pairs (never a verdict), 0.031 with 6 and 0.002 with 10. A mix regression
#: (report/regression.py) needs as many blocks, and a test the report fits
#: one from runs them by default (:func:`v6bench.methods.registry.default_design`).
MIN_PAIRS = 6
