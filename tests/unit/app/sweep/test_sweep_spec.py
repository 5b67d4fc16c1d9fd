"""The sweep's plan handling without hosts: values, the stored form, the trial monitor, the CLI."""

from __future__ import annotations

import io

import pytest

from app.cli import parse
from app.commands.sweep import _Printer, spec_from_args
from app.knobs.values import parse_value
from app.sweep import Progress, SweepSpec, TrialFinished, workload_kind
from app.sweep.engine import _Measure
from experiments.plan import Plan, Timing
from experiments.samples import Sample
from experiments.stability import SteadyCriteria, SteadyStateDetector
from experiments.workloads import MIB, SeqRead


def test_values_parse_as_the_knob_wants() -> None:
    assert parse_value("rsize", "32k") == 32768
    assert parse_value("wsize", "1M") == 1048576
    assert parse_value("nfsd_threads", "16") == 16
    assert parse_value("nfsvers", "4.2") == "4.2"
    with pytest.raises(ValueError, match="not one of"):
        parse_value("rsize", "3k")
    with pytest.raises(ValueError, match="below 1"):
        parse_value("nfsd_threads", "0")


def test_async_needs_the_opt_in_and_workloads_must_be_known() -> None:
    plan = Plan(knobs={"export_sync": ("sync", "async")}, strategy="grid")
    with pytest.raises(ValueError, match="async-opt-in"):
        SweepSpec("s", ("c",), "/srv", plan)
    SweepSpec("s", ("c",), "/srv", plan, async_opt_in=True)
    assert workload_kind("seqread") == "seq_read"
    with pytest.raises(ValueError, match="unknown workload"):
        SweepSpec("s", ("c",), "/srv", Plan(knobs={"rsize": (4096,)}, workloads=("nope",)))


def test_spec_round_trips_through_the_session_plan() -> None:
    plan = Plan(knobs={"rsize": (32768, 1048576), "nfsd_threads": (8, 16)}, workloads=("seq_read",),
                strategy="ofat", baseline={"nfsd_threads": 8}, timing=Timing(warmup_s=1, min_measure_s=2, max_measure_s=3))
    spec = SweepSpec("s", ("c1", "c2"), "/srv", plan, file_size=16 * MIB, link_bps=117e6)
    stored = spec.to_json()
    assert stored["baseline"] == {"nfsd_threads": 8}  # where the recommendation looks
    assert SweepSpec.from_json(stored) == spec
    w = spec.workload("seq_read")
    assert isinstance(w, SeqRead) and w.loop and w.file_size == 16 * MIB
    assert w.duration_s is not None and w.duration_s >= 1 + 3  # the monitor stops first


def _total(t: float, bps: float) -> Sample:
    return Sample("all", t, 0.25, bytes_read=int(bps * 0.25))


def test_measure_ignores_warmup_and_stops_when_steady_or_capped() -> None:
    steady = _Measure(1.0, 2.0, 10.0, SteadyStateDetector(SteadyCriteria(window=4)))
    ts = [0.25 * i for i in range(1, 60)]
    stop_at = next(t for t in ts if steady(_total(t, 100e6)))
    assert stop_at == pytest.approx(3.0)  # warm-up 1 s + the minimum of 2 s
    noisy = _Measure(0.5, 1.0, 2.0, SteadyStateDetector(SteadyCriteria(window=4)))
    stop_at = next(t for t in ts if noisy(_total(t, 100e6 if int(t * 4) % 2 else 10e6)))
    assert stop_at == pytest.approx(2.5)  # never steady: the cap ends it


def test_cli_builds_the_spec_and_prints_progress() -> None:
    args = parse(["sweep", "--server", "srv", "--client", "c1", "--client", "c2", "--export", "/srv/nfs",
                  "--knob", "rsize=32k,1M", "--knob", "nfsd_threads=8,32", "--strategy", "adaptive",
                  "--repetitions", "2", "--duration", "8", "--link-mbps", "117"])
    spec = spec_from_args(args)
    assert spec.plan.knobs == {"rsize": (32768, 1048576), "nfsd_threads": (8, 32)}
    assert spec.clients == ("c1", "c2") and spec.plan.min_runs == 2 and spec.plan.max_runs == 6
    assert spec.plan.timing.max_measure_s == 8 and spec.link_bps == 117e6
    out = io.StringIO()
    printer = _Printer(out, quiet=False)
    printer(Progress(3, 12, 95.0))
    printer(TrialFinished(1, 4, {"rsize": 32768}, "seq_read", "broken", None, "a cache answered"))
    text = out.getvalue()
    assert "3/12 trials, about 1 min 35 s left" in text and "broken: a cache answered" in text
    assert "trial 4 seq_read rsize=32768: broken" in text  # the configuration as every face words it


def test_stored_ceilings_take_each_clients_best_mtu_and_the_slowest_client(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from app.store import Store
    from app.recommend.context import CEILING, ceiling_mtus
    from app.sweep.session_facts import stored_ceilings

    store = Store(tmp_path / "s.db")
    spec = SweepSpec("srv", ("c1", "c2"), "/srv", Plan(knobs={"mtu": (1500, 9000)}, workloads=("seq_read",)))
    sid = store.create_session(["srv", "c1", "c2"])
    assert stored_ceilings(store, sid, spec) is None
    store.add_host_facts(sid, "c1", CEILING, {"tcp_bps": 40e6, "tool": "iperf3"})  # at the start, MTU 1500
    store.add_host_facts(sid, "c2", CEILING, {"tcp_bps": 42e6, "tool": "iperf3"})
    store.add_host_facts(sid, "srv", CEILING, {"disk_read_bps": 900e6, "disk_write_bps": 300e6})
    store.add_host_facts(sid, "c1", CEILING, {"tcp_bps": 124e6, "tool": "iperf3", "mtu": 9000})
    store.add_host_facts(sid, "c2", CEILING, {"tcp_bps": 118e6, "tool": "iperf3", "mtu": 9000})
    c = stored_ceilings(store, sid, spec)
    assert c is not None
    assert c.network_per_client_bps == 118e6 and c.network_bps == 236e6
    assert (c.disk_read_bps, c.disk_write_bps) == (900e6, 300e6)
    assert ceiling_mtus(store, sid) == {9000}


def test_phased_sizes_size_a_trial_and_nonsense_is_refused_by_name() -> None:
    plan = Plan(knobs={"nfsd_threads": (8,)}, workloads=("tree", "dir_scaling"))
    spec = SweepSpec("s", ("c",), "/srv/nfs", plan, phased_sizes={"tree": {"files": 2000}})
    assert spec.workload("tree").to_dict()["files"] == 2000
    assert spec.workload("dir_scaling").to_dict()["count"] == 10_000  # untouched kinds keep their size
    assert SweepSpec.from_json(spec.to_json()).phased_sizes == {"tree": {"files": 2000}}
    for bad, words in (({"seq_read": {"count": 1}}, "not one of"), ({"tree": {"files": 0}}, "positive whole"),
                       ({"tree": {"files": True}}, "positive whole"), ({"tree": {"nope": 3}}, "nope")):  # fmt: skip
        with pytest.raises(ValueError, match=words):
            SweepSpec("s", ("c",), "/srv/nfs", plan, phased_sizes=bad)
