"""The load ladder: one workload at one configuration, its offered load stepped up.

A ladder is a plan of one step (experiments.steps.ladder_step): streams per client at
each rung, 1, 2, 4, … up to the admin's limit, every rung on all the clients at once, so
the offered load is streams per client × clients. The configuration is the hosts' own,
or the knobs the admin fixed for the whole ladder (so two ladders at different nfsd
threads compare). Each rung is one trial with ``jobs`` = its streams, stored like any
sweep trial (summary, latency, telemetry), run by the one engine: journal, ceilings,
revert, resume; a ladder only recommends no knob (the knee and the layer that saturated
there: ``app.report.ladder``).
"""

from __future__ import annotations

MAX_STREAMS = 256  # a workload's jobs are at most this


def ladder_steps(max_streams: int) -> tuple[int, ...]:
    """Streams per client at each step: the powers of two up to ``max_streams``, and it."""
    if not 1 <= max_streams <= MAX_STREAMS:
        raise ValueError(f"the most streams per client must be 1 to {MAX_STREAMS}, got {max_streams}")
    steps = [1 << i for i in range(max_streams.bit_length()) if 1 << i <= max_streams]
    return tuple(steps if steps[-1] == max_streams else [*steps, max_streams])
