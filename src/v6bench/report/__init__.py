"""Reports of stored runs, read from the store only: the comparisons a
run's verdicts come from (``samples``, ``family_pairs``,
``scenario_pairs``), their statistics (``stats``, ``regression``,
``verdicts``), the report's sections (``views/``) as text, HTML with
figures, and CSV (``build``, ``html``, ``text``, ``plot``), a trial
printed (``trial``), and runs compared across runs and machines
(``across``, ``change``, ``trend``, ``meta``)."""
