"""The recommendation's choice under uncertainty, one trap at a time (app.recommend.choice).

Each test is a synthetic session handed straight to the real recommender: figures in,
configuration and evidence out.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from app.recommend.build import TrialFigures, recommend_objective
from app.recommend.choice import choose, holm, Versus
from app.recommend.evidence import ASYNC_RISK
from app.recommend.telemetry import TelemetryDigest

MB = 1e6
_ids = iter(range(1, 1_000_000))


def runs(config: dict[str, Any], values: Sequence[float]) -> list[TrialFigures]:
    out = []
    for v in values:
        i = next(_ids)
        out.append(TrialFigures(i, i, dict(config), v, v, v * 0.95, 0.02, 0.05, 0, TelemetryDigest()))
    return out


BASE = {"mtu": 1500, "read_ahead_kb": 128, "rsize": 32768}


def cfg(**kw: Any) -> dict[str, Any]:
    return BASE | kw


def test_the_reported_session_a_top_config_that_lost_a_run_does_not_hide_the_clear_winners() -> None:
    """Issue 14's first try: the top MTU 9000 config kept one run; two others have two, 119–121 MB/s."""
    figures = [
        *runs(BASE, [82 * MB, 85 * MB]),
        *runs(cfg(mtu=9000, rsize=1048576), [121 * MB]),  # its second run broke
        *runs(cfg(mtu=9000), [120 * MB, 119 * MB]),
        *runs(cfg(mtu=9000, read_ahead_kb=4096), [119.5 * MB, 120.5 * MB]),
        *runs(cfg(read_ahead_kb=4096), [84 * MB, 83 * MB]),
    ]
    o = recommend_objective("seq_read", figures, baseline=BASE)
    assert o is not None and o.changed
    assert o.config["mtu"] == 9000 and o.config != cfg(mtu=9000, rsize=1048576)
    assert o.best.config == cfg(mtu=9000, rsize=1048576)  # it still ranks first, and the evidence says why not
    assert any("only 1 run(s)" in line for line in o.evidence), o.evidence
    assert any("Chosen by the rule" in line and "Holm" in line for line in o.evidence)
    assert o.gain is not None and o.gain.beyond_noise and o.gain.rel > 0.35
    assert o.runner_up is not None and o.runner_up.config["mtu"] == 9000  # the other, within the noise of it


def test_a_top_config_with_huge_variance_loses_to_a_steady_one() -> None:
    figures = [
        *runs(BASE, [80 * MB, 81 * MB, 79 * MB]),
        *runs(cfg(rsize=1048576), [200 * MB, 40 * MB]),  # mean 120, but its runs disagree wildly
        *runs(cfg(read_ahead_kb=4096), [104 * MB, 105 * MB, 103 * MB]),
    ]
    o = recommend_objective("seq_read", figures, baseline=BASE)
    assert o is not None and o.changed and o.config == cfg(read_ahead_kb=4096)
    assert o.best.config == cfg(rsize=1048576)
    assert any("within the noise" in line for line in o.evidence)


def test_ties_pick_the_higher_ranked_and_name_the_runner_up() -> None:
    figures = [
        *runs(BASE, [60 * MB, 61 * MB, 59 * MB]),
        *runs(cfg(mtu=9000), [120 * MB, 121 * MB, 119 * MB]),
        *runs(cfg(mtu=9000, rsize=1048576), [120.4 * MB, 119.6 * MB, 120.6 * MB]),
    ]
    o = recommend_objective("seq_read", figures, baseline=BASE)
    assert o is not None and o.changed
    assert o.config == o.ranking[0].config
    assert o.runner_up is not None and o.runner_up.config == o.ranking[1].config
    assert any(line.startswith("Runner-up") for line in o.evidence)


def test_a_baseline_that_was_never_measured_is_said_and_the_best_with_full_evidence_chosen() -> None:
    figures = [
        *runs(cfg(rsize=1048576), [130 * MB]),  # one run only: not chosen on its own word
        *runs(cfg(mtu=9000), [120 * MB, 121 * MB]),
        *runs(cfg(read_ahead_kb=4096), [70 * MB, 71 * MB]),
    ]
    o = recommend_objective("seq_read", figures, baseline=BASE)  # BASE's runs all broke
    assert o is not None and o.changed and o.baseline is None and o.gain is None
    assert o.config == cfg(mtu=9000)
    assert any("not measured" in w for w in o.warnings)
    assert any("not measured" in line for line in o.evidence)


def test_a_baseline_measured_once_is_still_compared_through_the_pooled_noise() -> None:
    figures = [
        *runs(BASE, [80 * MB]),
        *runs(cfg(mtu=9000), [120 * MB, 121 * MB]),
        *runs(cfg(read_ahead_kb=4096), [81 * MB, 80 * MB]),
    ]
    o = recommend_objective("seq_read", figures, baseline=BASE)
    assert o is not None and o.changed and o.config == cfg(mtu=9000)
    assert o.gain is not None and o.gain.beyond_noise and o.gain.rel_low is not None


def test_async_only_winners_need_the_opt_in_and_then_stand_beside_the_best_sync() -> None:
    base = {"export_sync": "sync"}
    figures = [*runs(base, [10 * MB, 10.2 * MB, 9.9 * MB]), *runs({"export_sync": "async"}, [30 * MB, 31 * MB, 29 * MB])]
    without = recommend_objective("seq_write", figures, baseline=base)
    assert without is not None and not without.changed and without.config == base
    assert any("async configurations were measured but left out" in w for w in without.warnings)
    opted = recommend_objective("seq_write", figures, baseline=base, allow_async=True)
    assert opted is not None and opted.changed and opted.config == {"export_sync": "async"}
    assert opted.best_sync is not None and opted.best_sync.config == base
    assert ASYNC_RISK in opted.warnings


def test_all_configs_equal_keep_the_current_settings_almost_always() -> None:
    """Pure noise over 12 configurations, 2 runs each: the family-wise false-change rate stays near 5 %."""
    rng = random.Random(7)
    changes = 0
    sessions = 400
    for _ in range(sessions):
        figures = [*runs(BASE, [100 * MB * rng.lognormvariate(0, 0.04) for _ in range(2)])]
        for i in range(11):
            figures += runs(cfg(read_ahead_kb=256 * (i + 1)), [100 * MB * rng.lognormvariate(0, 0.04) for _ in range(2)])
        o = recommend_objective("seq_read", figures, baseline=BASE)
        assert o is not None
        changes += o.changed
    assert changes / sessions <= 0.06, changes


def test_no_configuration_measured_twice_keeps_the_current_settings_and_says_why() -> None:
    figures = [*runs(BASE, [80 * MB]), *runs(cfg(mtu=9000), [120 * MB])]
    o = recommend_objective("seq_read", figures, baseline=BASE)
    assert o is not None and not o.changed and o.config == BASE
    assert "noise is unknown" in o.rule


def test_small_files_are_judged_and_written_in_operations_per_second() -> None:
    base = {"export_sync": "sync"}
    figures = [*runs(base, [940.0, 1080.0]), *runs({"export_sync": "async"}, [2070.0, 1460.0, 1900.0, 1800.0])]
    o = recommend_objective("small_files", figures, baseline=base, allow_async=True)
    assert o is not None and o.unit == "ops/s"
    assert all("MB/s" not in line for line in o.evidence), o.evidence
    assert any("ops/s" in line for line in o.evidence)


def test_holm_steps_down_and_stops_at_the_first_failure() -> None:
    tests = [Versus("a", 0.1, 0.01, 10, 0.001), Versus("b", 0.1, 0.01, 10, 0.02), Versus("c", 0.1, 0.01, 10, 0.011)]
    judged = holm(tests, 0.05)
    # 0.001 ≤ 0.05/3; 0.011 ≤ 0.05/2; 0.02 ≤ 0.05/1
    assert all(judged[k].beyond_noise for k in "abc")
    judged = holm([Versus("a", 0.1, 0.01, 10, 0.02), Versus("b", 0.1, 0.01, 10, 0.021)], 0.025)
    assert not judged["a"].beyond_noise and not judged["b"].beyond_noise  # 0.02 > 0.025/2: stop


def test_choose_never_keeps_the_baseline_against_a_clear_winner_with_full_evidence() -> None:
    values = {"base": [80.0, 84.0], "top1run": [125.0], "good": [120.0, 119.0]}
    c = choose(values, ["top1run", "good", "base"], "base")
    assert c.chosen == "good"


def test_a_clear_winner_among_many_is_found_whatever_the_baselines_own_spread() -> None:
    """3 % noise, 3 runs each, 20 candidates, one 20 % better: the baseline's own scatter (often above the
    pool's by chance) must not shield it (the F test keeps ordinary spreads on the pooled noise)."""
    rng = random.Random(11)
    kept = 0
    sessions = 200
    for _ in range(sessions):
        figures = [*runs(BASE, [100 * MB * rng.lognormvariate(0, 0.03) for _ in range(3)])]
        for i in range(19):
            figures += runs(cfg(read_ahead_kb=256 * (i + 1)), [100 * MB * rng.lognormvariate(0, 0.03) for _ in range(3)])
        figures += runs(cfg(mtu=9000), [120 * MB * rng.lognormvariate(0, 0.03) for _ in range(3)])
        o = recommend_objective("seq_read", figures, baseline=BASE)
        assert o is not None
        kept += not o.changed
    assert kept / sessions <= 0.05, kept


def test_thread_evidence_says_when_pool_stats_cannot_show_waits() -> None:
    """Seen on the lab's kernel: packets-arrived == sockets-enqueued at 1, 8 and 32 threads; the evidence
    had said '1 threads cut the wait to 100 % of requests'."""
    from app.recommend.evidence import threads_sentence
    from app.recommend.model import Gain

    base = recommend_objective("tree", runs({"nfsd_threads": 8}, [979.0, 990.0]), baseline={"nfsd_threads": 8})
    best = recommend_objective("tree", runs({"nfsd_threads": 1}, [1054.0, 1053.0]), baseline={"nfsd_threads": 1})
    assert base is not None and best is not None
    gain = Gain(75.0, 0.077, 0.05, 0.1, True)
    every = TelemetryDigest(arrived_per_s=1000.0, enqueued_per_s=1000.0)
    line = threads_sentence(best.best, base.best, gain, every, every)
    assert line is not None and "cannot show whether requests waited" in line and "cut the wait" not in line
    worse = threads_sentence(best.best, base.best, gain, TelemetryDigest(arrived_per_s=1000.0, enqueued_per_s=300.0),
                             TelemetryDigest(arrived_per_s=1000.0, enqueued_per_s=200.0))
    assert worse is not None and "did not shorten the wait" in worse


def test_thread_evidence_reads_the_wait_from_threads_woken() -> None:
    """The lab's 6.1 server under 16 random-read streams (tests/lab/effects.py): at 1 thread 474 of 503
    requests found no idle thread, at 32 threads none did, while sockets-enqueued stayed equal to
    packets-arrived. 1 - woken / arrived is the wait; enqueued / arrived would say 100 % at both."""
    from app.recommend.evidence import threads_sentence
    from app.recommend.model import Gain

    base = recommend_objective("seq_read", runs({"nfsd_threads": 1}, [50.0, 51.0]), baseline={"nfsd_threads": 1})
    best = recommend_objective("seq_read", runs({"nfsd_threads": 32}, [870.0, 875.0]), baseline={"nfsd_threads": 32})
    assert base is not None and best is not None
    at_1 = TelemetryDigest(arrived_per_s=50.3, enqueued_per_s=50.3, woken_per_s=2.9)
    at_32 = TelemetryDigest(arrived_per_s=905.3, enqueued_per_s=905.3, woken_per_s=905.3)
    assert at_1.waiting_share is not None and abs(at_1.waiting_share - 474 / 503) < 0.01
    assert at_32.waiting_share == 0.0
    line = threads_sentence(best.best, base.best, Gain(820.0, 16.4, 15.0, 18.0, True), at_32, at_1)
    assert line is not None and "removed the wait" in line and "94 %" in line, line
    # Telemetry from before threads-woken was kept still falls back to enqueued / arrived.
    assert TelemetryDigest(arrived_per_s=1000.0, enqueued_per_s=300.0).waiting_share == 0.3
    # UML 7.2's counters (benchmarks/lab_profiles.py, 32 threads): enqueued and woken above arrived. No wait, and
    # never a share above 1 from the fallback.
    assert TelemetryDigest(arrived_per_s=3792.0, enqueued_per_s=6064.0, woken_per_s=4815.0).waiting_share == 0.0
    assert TelemetryDigest(arrived_per_s=3792.0, enqueued_per_s=6064.0).waiting_share == 1.0
