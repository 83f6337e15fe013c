"""The fault suite (issue 10): a real corpus burst through the real workers while things fail.

- :mod:`devtools.faults.burst`: the input (RawBatch records and a few bad records) and what must come
  out of it, computed offline by the same :class:`~streams.assemble.pipeline.Assembler` the stage runs;
- :mod:`devtools.faults.pipeline`: the assemble, hot and cold workers as processes on a run's own
  topics, groups, indices and bucket prefix;
- :mod:`devtools.faults.injectors`: the faults (kill -9, rebalance, store outages, broker restart);
- :mod:`devtools.faults.check`: what the stores and the DLQ hold, against the expected output;
- :mod:`devtools.faults.run`: one scenario end to end, returning the figures.

``tests/integration/test_faults.py`` runs a bounded scenario in CI; ``tests/faults/soak.py --minutes N``
loops random faults for longer.
"""
