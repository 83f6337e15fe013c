"""The first failure of a job across all its ranks: one incident per job failure. Pure.

An incident opens at the first failure event of a task (any kind of
:mod:`streams.watch.incident_rules` but a precursor) and gathers every failure event of the task's
ranks and nodes until the task has been quiet for ``incident_quiet_s``: in event time (a record of
the task that much later) or in wall time (the router's ``seen_ms``; a dead job logs nothing more,
so the worker's timer sends a tick). Then it is decided and published, with one alert:

- the root is the earliest root-role evidence, by event time corrected for the node's clock
  offset; evidence within ``incident_tie_ms`` of each other is ordered by
  :data:`~streams.watch.incident_rules.PRECEDENCE` (log times are often whole seconds);
- without one, the earliest launcher report that names a root-role kind (a SIGKILL seen only by
  torchrun) stands for it;
- without either, the root is unknown, and the incident says what was seen everywhere and since
  when (``blocked_since``: when the first timed-out collective began).

After it is published the incident still takes what belongs to it: collateral and reports for
``incident_attach_s`` after it opened (an NCCL timeout fires a whole collective timeout after the
failure), a timeout whose collective began before the incident ended, and a late root-role event
from within its span; each changes the record in place (same id) and updates its alert. A new
failure of the same task with the same root signature within ``cooldown_s`` is its own incident
but the same alert, counted (a job that keeps failing the same way raises one alert).

Precursors (NaN loss, XID, ECC findings) are no failure by themselves; kept for
``incident_lookback_s``, they join the incident that opens after them as root-role evidence.

State is one dict per task (``<task_key>|first-failure`` in the incidents table); per rank it keeps
the first evidence and the kinds seen, so a redelivered event changes nothing. The record and the
alert made of it are :mod:`streams.watch.incident_record`'s.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from streams.watch.incident_record import RULE, decide, died_visibly, label, signature, to_alert
from streams.watch.incident_rules import COLLATERAL, PRECEDENCE, PRECURSOR_KINDS, REPORT, ROLES, ROOT, reported_kind
from streams.watch.incidents import AlertChange
from streams.watch.observation import Observation
from streams.watch.rules import Finding
from streams.watch.settings import WatchSettings

KEY_SUFFIX = "|first-failure"
MAX_RANKS = 4096  # per incident; a larger job's further ranks are counted, not listed
MAX_PRECURSORS = 32


@dataclass(frozen=True)
class IncidentChange:
    """An incident record to write: ``new`` when just decided, else an update of a published one."""

    incident: dict[str, Any]
    new: bool


def state_key(task_key: str) -> str:
    return f"{task_key}{KEY_SUFFIX}"


def incident_id(project: str, task_key: str, first_event_id: str) -> str:
    digest = hashlib.sha1(f"{project}|{task_key}|{first_event_id}".encode(), usedforsecurity=False)
    return digest.hexdigest()[:24]


# -- evidence ----------------------------------------------------------------------------------------

def evidence_of(obs: Observation) -> dict[str, Any] | None:
    """A failure event as evidence: where (rank, host, or a process prefix), when (corrected), what."""
    if obs.kind != "event" or not obs.fail_kind:
        return None
    role = ROLES.get(obs.fail_kind, ROOT)
    # A report is about the child it names; anything else is about the rank that printed it, whose
    # prefix or label is surer than a rank number in the text.
    if role == REPORT:  # the launcher runs on its children's node: the agent's name for it is theirs too
        rank = obs.fail_rank if obs.fail_rank is not None else obs.rank
        host = obs.host or obs.fail_host
    else:
        rank = obs.rank if obs.rank is not None else obs.fail_rank
        host = obs.host
    ev: dict[str, Any] = {
        "id": obs.event_id, "ts": obs.true_ms, "kind": obs.fail_kind, "role": role, "rank": rank, "host": host,
        "proc": obs.fail_proc if rank is None else None, "head": obs.headline, "cls": obs.error_class,
        "type": obs.error_type, "sig": obs.fail_signal or obs.signal, "rep": None, "seen": obs.seen_ms,
        "waited": obs.waited_ms, "offset": obs.clock_offset_ms}
    if role == REPORT:
        ev["rep"] = reported_kind(ev["sig"], ev["cls"])
    return ev


def precursor_of(obs: Observation, finding: Finding) -> dict[str, Any] | None:
    """A NaN loss, XID or ECC finding as root-role evidence."""
    if finding.rule not in PRECURSOR_KINDS or getattr(finding, "clears", False):
        return None
    return {"id": obs.event_id, "ts": obs.true_ms, "kind": finding.rule, "role": ROOT, "rank": obs.rank,
            "host": obs.host, "proc": None, "head": finding.headline, "cls": None, "type": None, "sig": None,
            "rep": None, "seen": obs.seen_ms, "waited": None, "offset": obs.clock_offset_ms}


def _precedence(kind: str) -> int:
    return PRECEDENCE.index(kind) if kind in PRECEDENCE else len(PRECEDENCE)


def _earlier(a: dict[str, Any], b: dict[str, Any] | None, tie_ms: int, root_kind: str = "kind") -> bool:
    """Is ``a`` a better first failure than ``b``: earlier, or as early (within ``tie_ms``) and more telling."""
    if b is None:
        return True
    if abs(a["ts"] - b["ts"]) < tie_ms:
        pa, pb = _precedence(a[root_kind] or ""), _precedence(b[root_kind] or "")
        if pa != pb:
            return pa < pb
        if root_kind == "rep" and (a["rank"] is None) != (b["rank"] is None):
            return a["rank"] is not None  # the report that names the job's rank: torchrun's box, not its line
    return (a["ts"], a["id"]) < (b["ts"], b["id"])


# -- state -------------------------------------------------------------------------------------------

def _new_state(obs: Observation, ev: dict[str, Any], previous: dict[str, Any] | None) -> dict[str, Any]:
    prev = None
    if previous and previous.get("published"):
        prev = {"id": previous["id"], "alert_id": previous["alert_id"], "sig": previous.get("sig"),
                "closed_ms": previous.get("closed_ms"), "failures": previous.get("failures", 1)}
    iid = incident_id(obs.project, obs.task_key, ev["id"])
    before = None
    if previous and previous.get("published"):
        # The decided incident stays, for its own late arrivals: a task's events reach the stage through
        # several partitions, so the end of one failure may come after the start of the next.
        before = {k: v for k, v in previous.items() if k not in ("before", "pre")}
    return {"v": 1, "id": iid, "alert_id": f"{RULE}-{iid[:20]}", "project": obs.project, "task_id": obs.task_id,
            "task_key": obs.task_key, "open": True, "published": False, "opened_ms": ev["ts"], "last_ms": ev["ts"],
            "seen_ms": ev["seen"], "closed_ms": None, "closed_seen_ms": None, "ranks": {}, "more_ranks": 0,
            "root": None, "report": None, "coll": None, "blocked_ms": None, "failures": 1, "prev": prev,
            "before": before, "pre": list(previous.get("pre", [])) if previous else []}


def _add_to_rank(state: dict[str, Any], ev: dict[str, Any]) -> bool:
    """The rank's first evidence and the kinds it showed."""
    ranks = state["ranks"]
    entry = ranks.get(label(ev))
    if entry is None:
        if len(ranks) >= MAX_RANKS:
            state["more_ranks"] += 1
            return False
        ranks[label(ev)] = {"first": ev, "kinds": [ev["kind"]]}
        return True
    changed = False
    if ev["kind"] not in entry["kinds"]:
        entry["kinds"].append(ev["kind"])
        changed = True
    if (ev["ts"], ev["id"]) < (entry["first"]["ts"], entry["first"]["id"]):
        entry["first"] = ev
        changed = True
    return changed


def _add_by_role(state: dict[str, Any], ev: dict[str, Any], tie_ms: int) -> bool:
    """The root candidate, the report that stands for one, the first collateral, the first blocked collective."""
    changed = False
    if ev["role"] == ROOT and _earlier(ev, state["root"], tie_ms):
        state["root"] = ev
        changed = True
    elif ev["role"] == REPORT and ev["rep"] and _earlier(ev, state["report"], tie_ms, "rep"):
        state["report"] = ev
        changed = True
    elif ev["role"] == COLLATERAL and (state["coll"] is None or
                                       (ev["ts"], ev["id"]) < (state["coll"]["ts"], state["coll"]["id"])):
        state["coll"] = ev
        changed = True
    if ev["kind"] == "nccl_timeout" and ev.get("waited"):
        since = ev["ts"] - ev["waited"]
        if state["blocked_ms"] is None or since < state["blocked_ms"]:
            state["blocked_ms"] = since
            changed = True
    return changed


def _add(state: dict[str, Any], ev: dict[str, Any], tie_ms: int) -> bool:
    """Fold ``ev`` into the incident; True when it changed anything."""
    changed = _add_to_rank(state, ev)
    changed = _add_by_role(state, ev, tie_ms) or changed
    if ev["ts"] < state["opened_ms"]:
        state["opened_ms"] = ev["ts"]
        changed = True
    if ev["ts"] > state["last_ms"]:
        state["last_ms"] = ev["ts"]
        changed = True
    if ev["seen"] is not None and (state["seen_ms"] is None or ev["seen"] > state["seen_ms"]):
        state["seen_ms"] = ev["seen"]  # the quiet period restarts in wall time too
    return changed


def _attaches(state: dict[str, Any], ev: dict[str, Any], conf: WatchSettings) -> bool:
    """Does a failure event that arrives after the incident was decided belong to it? ``span_ms`` is
    the last error when it was decided: what attaches later does not stretch it."""
    quiet_ms = conf.incident_quiet_s * 1000
    span = state["span_ms"]
    if ev["ts"] <= span + quiet_ms:
        return True  # it would have kept the incident open, had it arrived in time (blocks are built late)
    if ev["role"] == ROOT or ev["rep"]:
        return False  # a failure of its own after a quiet period (a kill report too): the next incident
    if ev["kind"] == "nccl_timeout" and ev.get("waited") and ev["ts"] - ev["waited"] <= span + quiet_ms:
        return True  # the collective that timed out had begun before the incident was over
    return ev["ts"] <= state["opened_ms"] + conf.incident_attach_s * 1000  # collateral fires late


def _within(state: dict[str, Any], ev: dict[str, Any], conf: WatchSettings) -> bool:
    """Would ``ev`` have kept this decided incident open, had it arrived in time?"""
    quiet_ms = conf.incident_quiet_s * 1000
    if ev["ts"] <= state["span_ms"] + quiet_ms:
        return True
    return ev["kind"] == "nccl_timeout" and bool(ev.get("waited")) and \
        ev["ts"] - ev["waited"] <= state["span_ms"] + quiet_ms


def quiet(state: dict[str, Any], obs: Observation, conf: WatchSettings) -> bool:
    """Has the task been quiet long enough for its open incident to be decided?"""
    quiet_ms = conf.incident_quiet_s * 1000
    if obs.kind != "tick" and obs.true_ms >= state["last_ms"] + quiet_ms:
        return True
    return obs.seen_ms is not None and state["seen_ms"] is not None and obs.seen_ms >= state["seen_ms"] + quiet_ms


def retention_ms(conf: WatchSettings) -> int:
    return int(max(conf.incident_attach_s, conf.cooldown_s, conf.incident_quiet_s) * 1000)


def due(state: dict[str, Any], now_ms: int, conf: WatchSettings) -> bool:
    """Should the worker tick this task: an open incident quiet in wall time, or a decided one past
    the time anything could still join it (its state can go)."""
    if state.get("open"):
        return state.get("seen_ms") is not None and now_ms >= state["seen_ms"] + conf.incident_quiet_s * 1000
    if not state.get("published"):  # precursors only: kept for the lookback
        seen = [p["seen"] for p in state.get("pre", []) if p.get("seen") is not None]
        return bool(seen) and now_ms >= max(seen) + conf.incident_lookback_s * 1000
    closed = state.get("closed_seen_ms")
    return closed is not None and now_ms >= closed + retention_ms(conf)


# -- the tracker -------------------------------------------------------------------------------------

class FirstFailure:
    """Feeds observations (and the rules' findings) into per-task incident states in a store that
    has ``get_incident``/``put_incident``/``drop_incident``; returns what to publish."""

    def __init__(self, conf: WatchSettings) -> None:
        self.conf = conf
        self.tie_ms = int(conf.incident_tie_ms)

    def observe(self, obs: Observation, findings: list[Finding], store: Any
                ) -> tuple[list[IncidentChange], list[AlertChange]]:
        key = state_key(obs.task_key)
        state = store.get_incident(key)
        incidents: list[IncidentChange] = []
        alerts: list[AlertChange] = []
        dirty = False
        if state is not None and state["open"] and quiet(state, obs, self.conf):
            self._close(state, obs, incidents, alerts)
            dirty = True
        if obs.kind == "tick":
            if state is not None and not state["open"] and due(state, obs.seen_ms or 0, self.conf):
                store.drop_incident(key)
                return incidents, alerts
            if dirty:
                store.put_incident(key, state)
            return incidents, alerts

        evs = [p for p in (precursor_of(obs, f) for f in findings) if p]
        ev = evidence_of(obs)
        if ev is not None:
            evs.append(ev)
        for ev in evs:
            state, changed = self._take(state, obs, ev, incidents, alerts)
            dirty = dirty or changed
        if dirty and state is not None:
            store.put_incident(key, state)
        return incidents, alerts

    def _take(self, state: dict[str, Any] | None, obs: Observation, ev: dict[str, Any],
              incidents: list[IncidentChange], alerts: list[AlertChange]) -> tuple[dict[str, Any] | None, bool]:
        precursor = ev["kind"] in PRECURSOR_KINDS
        before = state.get("before") if state is not None else None
        if before is not None and ev["ts"] < state["opened_ms"] and _within(before, ev, self.conf):  # type: ignore[index]
            changed = self._update(before, ev, incidents, alerts)
            return state, changed
        if state is not None and state["open"]:
            return state, _add(state, ev, self.tie_ms)
        if state is not None and state["published"] and _attaches(state, ev, self.conf):
            return state, self._update(state, ev, incidents, alerts)
        if precursor:  # no failure yet: kept to weigh against the next one
            if state is None:
                state = {"v": 1, "open": False, "published": False, "pre": [], "project": obs.project,
                         "task_id": obs.task_id, "task_key": obs.task_key}
            pre = [p for p in state["pre"] if p["ts"] >= ev["ts"] - self.conf.incident_lookback_s * 1000]
            if any(p["kind"] == ev["kind"] and label(p) == label(ev) for p in pre):
                return state, pre != state["pre"]
            state["pre"] = [*pre, ev][-MAX_PRECURSORS:]
            return state, True
        new = _new_state(obs, ev, state)
        lookback = self.conf.incident_lookback_s * 1000
        for p in new.pop("pre"):
            if ev["ts"] - lookback <= p["ts"] <= ev["ts"]:
                _add(new, p, self.tie_ms)
        new["pre"] = []
        _add(new, ev, self.tie_ms)
        return new, True

    def _update(self, state: dict[str, Any], ev: dict[str, Any], incidents: list[IncidentChange],
                alerts: list[AlertChange]) -> bool:
        """A late arrival into a published incident: the record and its alert again, same ids."""
        if not _add(state, ev, self.tie_ms):
            return False
        record = decide(state, self.conf)
        incidents.append(IncidentChange(record, new=False))
        alerts.append(AlertChange(self._alert(state, record), new=False))
        return True

    def _close(self, state: dict[str, Any], obs: Observation, incidents: list[IncidentChange],
               alerts: list[AlertChange]) -> None:
        state["open"] = False
        state["span_ms"] = state["last_ms"]
        state["closed_ms"] = max(state["last_ms"], obs.true_ms if obs.kind != "tick" else state["last_ms"])
        state["closed_seen_ms"] = obs.seen_ms
        state["sig"] = signature(state)
        prev = state.get("prev")
        if prev and prev["sig"] == state["sig"] and prev["closed_ms"] is not None and not died_visibly(state) and \
                state["opened_ms"] - prev["closed_ms"] < self.conf.cooldown_s * 1000:
            # The same lone error again within the cooldown (a job logging an exception it survives):
            # its own record, the previous alert counted up. A job that visibly died again is a new alert.
            state["recurrence"] = True
            state["alert_id"] = prev["alert_id"]
            state["failures"] = prev["failures"] + 1
        state["published"] = True
        record = decide(state, self.conf)
        incidents.append(IncidentChange(record, new=True))
        alerts.append(AlertChange(self._alert(state, record), new=not state.get("recurrence")))

    def _alert(self, state: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
        return to_alert(record, count=state["failures"])
