"""The watch stage's logic: training-health rules over observations, with injected (event) time.

``WatchEngine(conf).observe(observation, store)`` runs every rule and returns the alert changes;
the Faust worker (``streams.workers.watch``) backs the store with changelogged tables.
"""

from streams.watch.engine import WatchEngine, WatchStore
from streams.watch.incidents import AlertChange
from streams.watch.observation import Observation, from_record
from streams.watch.settings import WatchSettings
from streams.watch.summary import DailySummary, daily_summaries

__all__ = [
    "AlertChange",
    "DailySummary",
    "Observation",
    "WatchEngine",
    "WatchSettings",
    "WatchStore",
    "daily_summaries",
    "from_record",
]
