"""Statistics over stored samples: pure functions, no I/O, never the store or the engine.

- ``stats``: medians, confidence intervals, ratios to a baseline (paired by round or
  unpaired; zero spread is not certainty), the interval level under optional stopping;
- ``metrics``: metric names, units and which way is better;
- ``summary``: a run's (or several runs') comparison table, cell by cell, with its family;
- ``family``: a run's comparisons decided once (Holm's step-down), one level for every view;
- ``reach``: what an undecided comparison showed (a bound) and the rounds ±precision would take;
- ``sequential``: --until/--budget, which comparisons are decided and why each cell stopped;
- ``drift`` (trend and step tests) and ``quality`` (the flags they raise on a cell);
- ``sweeps``: where a sweep peaks, its knee, whether the best point is clear, and how a
  swept value is written (shared with fio/sweeps.py);
- ``multiclient``: a multi-client sample's start skew and overlap (shared with clients/);
- ``comparable`` (what refuses comparing two runs, which targets measured the same storage),
  ``across`` (a run against a baseline run: `run --against`) and ``overtime`` (a storage's runs
  over time and the steps between them: `mountbench history`).

May import: model, errors, units. Imported by engine/, report/, records/, cli/, and by fio/
and clients/ (the sweep and multi-client vocabulary they share with the report).
"""
