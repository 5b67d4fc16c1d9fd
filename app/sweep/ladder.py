"""The load ladder: one workload at one configuration, its offered load stepped up.

A ladder is a sweep whose spec lists ``ladder`` (streams per client at each step: 1, 2,
4, … up to the admin's limit). Every step runs on all the sweep's clients at once, so the
offered load is streams per client × clients; the configuration is the hosts' own, or
the knobs the admin fixed for the whole ladder (so two ladders at different nfsd threads
compare). Each step is one trial of the workload with ``jobs`` = its streams, stored
like any sweep trial (summary, latency, telemetry). The engine is the sweep's own:
journal, ceilings, revert, resume; a ladder only recommends no knob (the knee and the
layer that saturated there: ``app.report.ladder``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.store import TrialState
from app.sweep.engine import MAX_BROKEN_IN_A_ROW, SweepEngine
from app.sweep.events import SweepStarted
from app.sweep.host_side import Journal
from experiments.strategies import TrialResult

MAX_STREAMS = 256  # a workload's jobs are at most this


def ladder_steps(max_streams: int) -> tuple[int, ...]:
    """Streams per client at each step: the powers of two up to ``max_streams``, and it."""
    if not 1 <= max_streams <= MAX_STREAMS:
        raise ValueError(f"the most streams per client must be 1 to {MAX_STREAMS}, got {max_streams}")
    steps = [1 << i for i in range(max_streams.bit_length()) if 1 << i <= max_streams]
    return tuple(steps if steps[-1] == max_streams else [*steps, max_streams])


class LadderEngine(SweepEngine):
    """The sweep engine with the ladder's loop in place of the strategy's: one trial per step.
    A study of steps of another kind (app.sweep.dirs) names them by overriding the three below."""

    STEP_FIELD = "jobs"  # the trial's workload field that tells its step

    def _steps(self) -> tuple[Any, ...]:
        return self.spec.ladder

    def _at(self, step: Any | None) -> None:
        """Point the spec at ``step`` (None: back to no step)."""
        self.spec = replace(self.spec, jobs=step)

    def _step_text(self) -> str:
        return f"{self.spec.jobs} streams per client" if self.spec.jobs else ""

    def _climbed(self, sid: int) -> set[Any]:
        """Steps done: measured ok, or broken twice (not tried again, as a sweep's configuration).
        A step broken once (cut by a cancel, a lost host) is climbed again on resume."""
        ok: set[Any] = set()
        broken: list[Any] = []
        for t in self.store.trials(sid):
            step = t.workload.get(self.STEP_FIELD) if isinstance(t.workload, dict) else None
            if step is None or isinstance(step, bool) or step not in self._steps():
                continue
            if t.state == TrialState.OK:
                ok.add(step)
            else:
                broken.append(step)
        return ok | {j for j in broken if broken.count(j) >= MAX_BROKEN_IN_A_ROW}

    async def _sweep(self, sid: int, plan_id: int | None, journal: Journal) -> None:
        base = self.spec
        name = base.plan.workloads[0]
        climbed = self._climbed(sid)
        self._total, self._done = len(self._steps()), len(climbed & set(self._steps()))
        self.bus.publish(SweepStarted(sid, self._total, self._done))
        self._progress()
        applier, telemetry, mount_point = await self._prepare(sid, journal)
        config = base.plan.start_config()
        results: list[TrialResult] = []
        try:
            for step in self._steps():
                if self.cancel.is_set():
                    break
                if step in climbed:
                    continue
                self._at(step)  # on self.spec: clients may have been dropped meanwhile
                if not await self._once(sid, plan_id, applier, telemetry, mount_point, name, config, results):
                    break
        finally:
            self._at(None)
        await applier.release_clients()

