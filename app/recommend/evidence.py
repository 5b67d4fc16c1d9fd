"""Evidence in words an admin can check, built only from the figures handed in.

Every function takes the data it cites explicitly and leaves out a sentence (or says
what was not recorded) rather than guess when a figure is missing.
"""

from __future__ import annotations

from collections.abc import Mapping

from app.recommend.model import CeilingShare, Ceilings, ConfigResult, Gain, Layer
from app.recommend.telemetry import TelemetryDigest
from app.vocabulary import (
    BYTES,
    beyond_noise_text,
    change_text,
    config_text,
    figure_text,
    gain_text,
    goal_text,
    knob_value_text,
    late_text,
    latencies_text,
    latency_text,
    lowest_text,
    percent_text,
)
from experiments.fairness import LATE_RULE, NOISE_RULE, ConfigFairness
from experiments.goals import Goal

ASYNC_RISK = (
    "Risk of async: the server acknowledges writes before they reach its disk; if the "
    "server crashes or loses power, data the clients were told was safe is lost, "
    "silently. Use it only for data you can recreate."
)

# Below this share of requests waiting for a thread, the wait counts as gone.
NO_WAIT = 0.01
# At or above it at every thread count, pool_stats counts every request (newer kernels), not the waits.
ALL_ENQUEUED = 0.99


def _gain(gain: Gain) -> str:
    """'+18 % ± 3 %' (or '+18 % (too few runs for an interval)')."""
    return gain_text(gain.rel, gain.rel_low, gain.rel_high)


def headline(objective: str, best: ConfigResult, unit: str = BYTES, *, what: str = "Best") -> str:
    t = best.sustainable
    ci = f" ± {figure_text(t.half_width, unit)}" if t.half_width is not None else " (one run: no interval)"
    return (f"{what} for {objective}: {config_text(best.config)} sustains {figure_text(t.mean, unit)}{ci} "
            f"over {t.n} run(s) (raw mean {figure_text(best.throughput.mean, unit)}).")


def versus_baseline(best: ConfigResult, baseline: ConfigResult | None, gain: Gain | None, changed: bool,
                    unit: str = BYTES) -> str:  # fmt: skip
    if baseline is None or gain is None:
        return "The configuration the hosts had was not measured (no run of it was kept), so there is no gain to state."
    if best.config == baseline.config:
        return "The current (baseline) configuration is already the best one measured: keep it."
    base = f"the current settings {config_text(baseline.config)} ({figure_text(baseline.sustainable.mean, unit)})"
    if changed:
        return f"Against {base}: {_gain(gain)}, beyond the run-to-run noise."
    return (f"Against {base}: {_gain(gain)}, which is within the run-to-run noise: "
            "keep the current settings.")


def _changed(best: ConfigResult, baseline: ConfigResult, knob: str) -> tuple[object, object] | None:
    a, b = baseline.config.get(knob), best.config.get(knob)
    return (a, b) if a is not None and b is not None and str(a) != str(b) else None


def threads_sentence(
    best: ConfigResult, baseline: ConfigResult, gain: Gain | None,
    best_tel: TelemetryDigest | None, base_tel: TelemetryDigest | None,
) -> str | None:
    """What pool_stats said about the nfsd thread count change, if it changed."""
    change = _changed(best, baseline, "nfsd_threads")
    if change is None:
        return None
    old, new = (knob_value_text("nfsd_threads", v) for v in change)
    added = f" and added {_gain(gain).lstrip('+')}" if gain is not None else ""
    before = base_tel.waiting_share if base_tel else None
    after = best_tel.waiting_share if best_tel else None
    if before is None or after is None:
        return (f"{change_text('nfsd_threads', old, new)}{added}; no pool_stats telemetry was recorded "
                "to show whether requests waited for a thread.")
    no_woken = (base_tel is None or base_tel.woken_per_s is None) and (best_tel is None or best_tel.woken_per_s is None)
    if no_woken and before >= ALL_ENQUEUED and after >= ALL_ENQUEUED:
        return (f"{change_text('nfsd_threads', old, new)}{added}. This server's `pool_stats` counts every request as "
                "enqueued (kernels since 4.0 queue each one) and no threads-woken figure was recorded, so it "
                "cannot show whether requests waited for a thread.")
    if before < NO_WAIT:
        return (f"`pool_stats` shows almost no requests waiting at {old} threads ({percent_text(before)}); "
                f"{new} threads{added or ' changed little'} — the gain is not from thread waits.")
    if after >= before:
        return (f"`pool_stats` shows {percent_text(before)} of requests waiting for a thread at {old} threads and "
                f"{percent_text(after)} at {new}: the thread count did not shorten the wait{added}.")
    effect = "removed the wait" if after < NO_WAIT else f"cut the wait to {percent_text(after)} of requests"
    return (f"`pool_stats` shows requests waiting at {old} threads ({percent_text(before)} of requests found "
            f"no free thread); {new} threads {effect}{added}.")


def stability_change(best: ConfigResult, baseline: ConfigResult, unit: str = BYTES) -> str | None:
    """Block size and readahead changes show up as dips; say so when dips changed."""
    knobs = [k for k in ("rsize", "wsize", "read_ahead_kb", "nconnect") if _changed(best, baseline, k)]
    if not knobs:
        return None
    changes = ", ".join(change_text(k, baseline.config[k], best.config[k]) for k in knobs)
    a, b = baseline.stability, best.stability
    return (f"{changes}: deepest dip {percent_text(a.deepest_dip)} → {percent_text(b.deepest_dip)}, "
            f"p5 floor {figure_text(a.p5_floor, unit)} → {figure_text(b.p5_floor, unit)}, "
            f"median CV {percent_text(a.median_cv)} → {percent_text(b.median_cv)}.")


def wdelay_sentence(best: ConfigResult, baseline: ConfigResult) -> str | None:
    """The export's write delay matters only where the server commits before it answers: say which it was."""
    change = _changed(best, baseline, "export_wdelay")
    if change is None:
        return None
    mode = str(best.config.get("export_sync", baseline.config.get("export_sync", "")))
    where = {"sync": "this export is sync, so it counts", "async": "this export is async, so it changes little"}
    return (f"{change_text('export_wdelay', *change)}: the write delay only matters on sync exports"
            f"{'; ' + where[mode] if mode in where else ''}.")


def block_size_sentence(best: ConfigResult, baseline: ConfigResult) -> str | None:
    """nfsd's max_block_size caps what the clients asked for, and takes a restart to change."""
    change = _changed(best, baseline, "max_block_size")
    if change is None:
        return None
    cap = int(str(change[1]))
    cut = [f"{k} {knob_value_text(k, v)}" for k in ("rsize", "wsize")
           if (v := best.config.get(k)) is not None and int(str(v)) > cap]  # fmt: skip
    asked = f" ({', '.join(cut)} asked for is cut to it)" if cut else ""
    return (f"{change_text('max_block_size', *change)}: nfsd offers reads and writes of at most "
            f"{knob_value_text('max_block_size', cap)} bytes{asked}. It takes effect only when nfsd starts (the "
            "snippet's drop-in), and every NFSv4 client then waits out the grace period: restart in a quiet hour.")


def stripe_cache_sentence(
    best: ConfigResult, baseline: ConfigResult, best_tel: TelemetryDigest | None, base_tel: TelemetryDigest | None
) -> str | None:
    change = _changed(best, baseline, "stripe_cache_size")
    if change is None:
        return None
    what = change_text("stripe_cache_size", *change)
    if base_tel is None or best_tel is None or base_tel.disk_util is None or best_tel.disk_util is None:
        return f"md {what} (no disk utilisation telemetry recorded)."
    return (f"md {what}: the array's disks were busy "
            f"{percent_text(base_tel.disk_util)} → {percent_text(best_tel.disk_util)} of the time.")


def stability_text(result: ConfigResult, unit: str = BYTES) -> str:
    if unit != BYTES:  # phased work is timed whole: its figure has no within-run samples to spread
        t = result.throughput
        spread = percent_text(t.stddev / t.mean) if t.n > 1 and t.mean else "unknown (one run)"
        return (f"Run-to-run spread over {t.n} run(s): {spread}; each run's figure is the operations of all its "
                "phases over their time (a phase cut at its time limit weighs as if it had done all its files).")
    s = result.stability
    return (f"Stability over {result.throughput.n} run(s): median CV {percent_text(s.median_cv)}, "
            f"p5 floor {figure_text(s.p5_floor, unit)}, deepest dip {percent_text(s.deepest_dip)}, "
            f"{s.dips:g} dip(s) per run.")


def time_limited_line(runs: Mapping[str, tuple[int, int]]) -> str | None:
    """Which configurations' runs ended a phase at its time limit (configuration text -> (such runs, runs));
    None when none did: their figures are the rates of what completed, not of the whole workload."""
    cut = [f"{k} of {n} with {what}" for what, (k, n) in runs.items() if k]
    if not cut:
        return None
    return ("Some runs ended a phase at its share of the time limit and count the rate of what it completed: "
            f"{', '.join(cut)}.")


def ceiling_text(share: CeilingShare, ceilings: Ceilings, server: TelemetryDigest | None) -> str:
    parts: list[str] = []
    if share.network is not None and ceilings.network_bps:
        parts.append(f"{percent_text(share.network)} of the network ceiling ({figure_text(ceilings.network_bps)}, "
                     f"TCP test × {ceilings.clients} client(s))")
    if share.disk is not None:
        parts.append(f"{percent_text(share.disk)} of the server disk's local throughput")
    reached = ("It reaches " + " and ".join(parts) + ". ") if parts else "No ceilings were measured. "
    if share.layer == Layer.NETWORK:
        return reached + "The network limits: more NFS tuning cannot go much higher."
    if share.layer == Layer.SERVER_DISK:
        busy = (f" (its devices were busy {percent_text(server.disk_util)} of the time)"
                if server is not None and server.disk_util is not None else "")
        return reached + f"The server disk limits{busy}."
    if share.layer == Layer.NFS_CPU:
        cpu = (f" server CPU was {percent_text(server.cpu_busy)} busy."
               if server is not None and server.cpu_busy is not None else "")
        return reached + "Neither ceiling is near: the NFS path itself (threads, RPC round trips, CPU) limits." + cpu
    return reached.strip()


def async_text(best_async: ConfigResult, best_sync: ConfigResult, gain: Gain | None, unit: str = BYTES) -> str:
    diff = _gain(gain) if gain is not None else "an unknown difference"
    noise = "" if gain is None or gain.beyond_noise else " (within the run-to-run noise)"
    return (f"async ({config_text(best_async.config)}, {figure_text(best_async.sustainable.mean, unit)}) against "
            f"the best sync configuration ({config_text(best_sync.config)}, "
            f"{figure_text(best_sync.sustainable.mean, unit)}): "
            f"{diff}{noise}. {ASYNC_RISK}")


def latency_line(result: ConfigResult) -> str | None:
    """Its latency, merged over every client and run; None when it was not measured."""
    lat = result.latency
    if lat is None:
        return None
    return (f"Latency over {lat.n} run(s), every client's operations in one histogram: "
            f"{latencies_text(lat.p50_ms, lat.p99_ms, lat.p999_ms)} (max {latency_text(lat.max_ms)}).")


def latency_change(best: ConfigResult, baseline: ConfigResult) -> str | None:
    """'p99 4.12 ms → 2.31 ms (p50 …, p99.9 …)' against the current settings; None when either was not measured."""
    a, b = baseline.latency, best.latency
    if a is None or b is None:
        return None
    return (f"Latency against the current settings: p99 {latency_text(a.p99_ms)} → {latency_text(b.p99_ms)} "
            f"(p50 {latency_text(a.p50_ms)} → {latency_text(b.p50_ms)}, "
            f"p99.9 {latency_text(a.p999_ms)} → {latency_text(b.p999_ms)}).")


def goal_line(goal: Goal) -> str:
    return f"Goal: {goal_text(goal)}."


def left_out_text(reasons: dict[str, str], configs: dict[str, dict[str, object]], most: int = 5) -> str:
    """The configurations the goal left out of the choice, and why (the first ``most`` of them)."""
    named = [f"{config_text(configs[k])} ({why})" for k, why in list(reasons.items())[:most]]
    more = f"; and {len(reasons) - most} more" if len(reasons) > most else ""
    return f"Left out of the choice by the goal: {'; '.join(named)}{more}."


def nothing_meets(objective: str, goal: Goal, kept: dict[str, object]) -> str:
    return (f"No configuration measured for {objective} meets the goal ({goal_text(goal)}): nothing is recommended"
            + (f"; keep the current settings {config_text(kept)}." if kept else "."))


def latency_headline(objective: str, best: ConfigResult, unit: str = BYTES, *, what: str = "Best") -> str:
    """The lowest-p99 goal's headline: the p99 first, the throughput it came with after."""
    lat = best.latency
    figures = latencies_text(lat.p50_ms, lat.p99_ms, lat.p999_ms) if lat is not None else "latency not measured"
    return (f"{what} for {objective}: {config_text(best.config)} — {figures} over {lat.n if lat else 0} run(s), "
            f"at {figure_text(best.throughput.mean, unit)}.")


def latency_versus_baseline(best: ConfigResult, baseline: ConfigResult | None, gain: Gain | None, changed: bool) -> str:
    """The lowest-p99 goal's comparison with the current settings, on p99."""
    if baseline is None or gain is None or baseline.latency is None or best.latency is None:
        return "The current settings' p99 was not measured (no run of them was kept), so there is no change to state."
    if best.config == baseline.config:
        return "The current (baseline) configuration already has the lowest p99 measured: keep it."
    change = (f"p99 {latency_text(baseline.latency.p99_ms)} → {latency_text(best.latency.p99_ms)} "
              f"({_gain(gain)})")
    base = f"the current settings {config_text(baseline.config)}"
    if changed:
        return f"Against {base}: {change}, beyond the run-to-run noise."
    return f"Against {base}: {change}, which is within the run-to-run noise: keep the current settings."


def versus_missed(best: ConfigResult, baseline: ConfigResult, gain: Gain | None, why: str, unit: str = BYTES,
                  by_p99: bool = False) -> str:  # fmt: skip
    """Against current settings the goal left out: the change stands on meeting the goal, not on a tested gain."""
    if by_p99 and best.latency is not None and baseline.latency is not None:
        change = f"p99 {latency_text(baseline.latency.p99_ms)} → {latency_text(best.latency.p99_ms)}"
    else:
        change = _gain(gain) if gain is not None else "no comparable figure"
    return (f"Against the current settings {config_text(baseline.config)} "
            f"({figure_text(baseline.sustainable.mean, unit)}), which miss the goal ({why}): {change}; "
            "the change stands on meeting the goal.")


def fairness_lines(fair: ConfigFairness | None) -> list[str]:
    """Unfair shares and a late last client, each only when beyond the noise in every run (experiments.fairness)."""
    if fair is None:
        return []
    runs = f"in {fair.runs} of {fair.runs} run(s)"
    lines = []
    if fair.consistent:
        lines.append(f"Clients' shares of the total under it: {lowest_text(fair.shares, fair.lowest)}: "
                     f"{beyond_noise_text(NOISE_RULE, fair.noise_cv, runs)}.")  # fmt: skip
    if fair.consistently_late and fair.done_ratio is not None:
        lines.append(f"Fixed-size work: {late_text(fair.done_ratio)}, "
                     f"{beyond_noise_text(LATE_RULE, fair.noise_cv, runs)}.")  # fmt: skip
    return lines
