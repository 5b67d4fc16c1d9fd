"""nocto, actimeo and export_wdelay end to end: values, mount options, the export target, the helper,
the snippets and evidence with their cache-coherence caveat, and a simulated sweep that stores and reverts.
"""

from __future__ import annotations

import asyncio
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from app.knobs.catalog import SPECS
from app.knobs.listing import knob_rows
from app.knobs.model import Safety, Scope, Value
from app.knobs.recovery import target_for
from app.knobs.targets import ExportOptionTarget, MountOptions, ScratchMount, export_wdelay
from app.knobs.values import BadValue, parse_value, parse_values
from app.recommend.evidence import wdelay_sentence
from app.session.choices import knob_choices
from app.simulated import SimulatedHosts, world
from app.snippets.model import SnippetContext
from app.snippets.nfs_files import exports_line, fstab_line
from app.snippets.render import render_all
from app.store import JournalState, Store, TrialState
from app.store.records import JournalEntry
from app.sweep.apply import ConfigApplier
from app.sweep.host_side import Applying
from app.vocabulary import coherence_text, knob_value_text, knob_values_text
from tests.unit.app.commands.test_hostile_cli import FakeConn
from tests.unit.app.sweep.test_sweep_host_lost import connected

HELPER = resources.files("app.knobs").joinpath("sudo_helper_host.py").read_text(encoding="utf-8")
EXPORTFS_V = "/srv/nfs      \t10.0.0.0/24(sync,wdelay,hide,no_subtree_check,sec=sys,rw,secure,root_squash)\n"


# --- values: what `--knob X=V` parses is what the vocabulary prints ----------------------------------
@pytest.mark.parametrize(("knob", "text", "value"), [
    ("nocto", "cto", "cto"), ("nocto", "NoCTO", "nocto"), ("actimeo", "0", 0), ("actimeo", "+30", 30),
    ("actimeo", "600", 600), ("export_wdelay", "wdelay", "wdelay"), ("export_wdelay", "NO_WDELAY", "no_wdelay"),
])  # fmt: skip
def test_values_parse_and_print_back_the_same(knob: str, text: str, value: Value) -> None:
    assert parse_value(knob, text) == value
    assert parse_value(knob, knob_value_text(knob, value)) == value


@pytest.mark.parametrize(("knob", "text"), [
    ("nocto", "on"), ("nocto", "nocto=1"), ("nocto", "1"), ("actimeo", "601"), ("actimeo", "-1"), ("actimeo", "30s"),
    ("actimeo", "1e2"), ("actimeo", "4K"), ("export_wdelay", "nowdelay"), ("export_wdelay", "sync"),
])  # fmt: skip
def test_values_the_knobs_do_not_take_are_refused_naming_the_knob(knob: str, text: str) -> None:
    with pytest.raises(BadValue) as refused:
        parse_value(knob, text)
    assert str(refused.value).startswith(f"{knob}: ")


def test_the_default_values_to_try_round_trip_as_the_plan_page_offers_them() -> None:
    for knob in ("nocto", "actimeo", "export_wdelay"):
        offered = knob_values_text(knob, SPECS[knob].default_sweep)
        assert parse_values(knob, offered) == SPECS[knob].default_sweep
    assert SPECS["nocto"].default_sweep == ("cto", "nocto") and SPECS["actimeo"].default_sweep == (3, 30, 60)


def test_the_client_caching_knobs_say_what_they_risk_and_are_not_on_by_default() -> None:
    for knob in ("nocto", "actimeo"):
        spec = SPECS[knob]
        assert spec.safety is Safety.COHERENCE
        assert "another client" in spec.safety_note and "one client writes" in spec.safety_note
    assert "sync exports" in SPECS["export_wdelay"].safety_note
    offered = {c.name: c for c in knob_choices({})}
    assert not any(offered[k].on_by_default for k in ("nocto", "actimeo", "export_wdelay"))
    assert offered["nocto"].spec.scope is offered["actimeo"].spec.scope is Scope.TEST_MOUNT


# --- the test mount's options and how they read back ----------------------------------------------
@pytest.mark.parametrize(("values", "options"), [
    ({"nocto": "nocto"}, "nocto"), ({"nocto": "cto"}, "defaults"), ({"actimeo": 0}, "actimeo=0"),
    ({"nfsvers": "4.2", "rsize": 65536, "actimeo": 60, "nocto": "nocto"}, "vers=4.2,rsize=65536,actimeo=60,nocto"),
])  # fmt: skip
def test_mount_option_strings(values: dict[str, Value], options: str) -> None:
    assert MountOptions.from_values(values).option_string() == options


@pytest.mark.parametrize(("taken", "knob", "value"), [
    ({"vers": "4.2", "nocto": ""}, "nocto", "nocto"), ({"vers": "4.2"}, "nocto", "cto"),
    ({"acregmin": "60", "acregmax": "60", "acdirmin": "60"}, "actimeo", 60),  # acdirmax 60 is the default: not shown
    ({"acregmin": "0", "acregmax": "0", "acdirmin": "0", "acdirmax": "0"}, "actimeo", 0),
    ({}, "actimeo", "3–60"), ({"vers": "3"}, "nfsvers", "3"),
])  # fmt: skip
def test_the_kernels_options_read_back_as_the_knobs_values(taken: dict[str, str], knob: str, value: Value) -> None:
    assert MountOptions.taken(knob, taken) == value


def test_a_mount_string_as_proc_shows_it_reads_back() -> None:
    taken = ScratchMount.taken_options("rw,vers=4.2,rsize=65536,acregmin=30,acregmax=30,acdirmax=30,hard,nocto,proto=tcp")
    assert (MountOptions.taken("actimeo", taken), MountOptions.taken("nocto", taken)) == (30, "nocto")


# --- the export's options: one target for sync/async and wdelay/no_wdelay --------------------------
def test_the_wdelay_target_reads_sets_and_restores_only_its_export() -> None:
    target = export_wdelay("/srv/nfs", "10.0.0.0/24")
    assert asyncio.run(target.read(FakeConn(EXPORTFS_V))) == "wdelay"  # type: ignore[arg-type]
    (step,) = target.set_steps("no_wdelay")
    assert step.argv == ("exportfs", "-o", "no_wdelay,sync,hide,no_subtree_check,sec=sys,rw,secure,root_squash",
                         "10.0.0.0/24:/srv/nfs")  # fmt: skip
    (back,) = target.restore_steps("wdelay")
    assert back.argv == ("exportfs", "-o", "sync,wdelay,hide,no_subtree_check,sec=sys,rw,secure,root_squash",
                         "10.0.0.0/24:/srv/nfs")  # fmt: skip


def test_the_readback_names_the_mode_exportfs_shows() -> None:
    target = export_wdelay("/srv/nfs", "10.0.0.0/24")
    assert asyncio.run(target.read(FakeConn(EXPORTFS_V.replace(",wdelay,", ",no_wdelay,")))) == "no_wdelay"  # type: ignore[arg-type]
    assert target.mode_of(("rw", "async")) == "wdelay"  # Linux's default when exportfs names neither
    sync = ExportOptionTarget("/srv/nfs", "10.0.0.0/24")
    assert asyncio.run(sync.read(FakeConn(EXPORTFS_V))) == "sync"  # type: ignore[arg-type]
    assert sync.set_steps("async")[0].argv[2].split(",")[:2] == ["async", "wdelay"]


def test_a_journal_entry_rebuilds_the_wdelay_target() -> None:
    entry = JournalEntry(1, 1, "nfs-server", "export_wdelay", "10.0.0.0/24:/srv/nfs", "wdelay", "no_wdelay",
                         0.0, 0.0, JournalState.APPLIED, "")  # fmt: skip
    target = target_for(entry)
    assert isinstance(target, ExportOptionTarget) and target.spec is SPECS["export_wdelay"]
    assert target.target == "10.0.0.0/24:/srv/nfs"


def test_the_knob_listing_shows_the_new_knobs_today() -> None:
    rows = {(r.host, r.knob): r for r in knob_rows(world.facts("nfs-server", 0), [world.facts("client1", 1)])}
    assert rows[("nfs-server", "export_wdelay")].current == "wdelay"
    assert rows[("client1", "nocto")].current == "cto" and rows[("client1", "actimeo")].current == "3–60"
    assert rows[("client1", "actimeo")].safety == "cache-coherence"


class RecordingJournal:
    """The applier's journal, recording what it applies and reverts (no host touched)."""

    token = "0a1b2c3d4e5f"

    def __init__(self) -> None:
        self.log: list[tuple[str, str, str]] = []

    async def apply(self, host: str, target: Any, value: Value) -> Any:
        from app.knobs.model import Applied

        self.log.append(("apply", target.spec.name, str(value)))
        return Applied(target.spec.name, host, target.target, None, value, value, len(self.log))

    async def revert(self, item: Any) -> None:
        self.log.append(("revert", item.knob, str(item.requested)))


def test_when_one_export_option_changes_both_are_put_back_last_first_then_applied_again() -> None:
    """Each restores the whole option list it read: putting back sync alone would undo no_wdelay unseen.
    wdelay changing alone leaves sync held: sync's list was read before wdelay changed."""
    from app.sweep.spec import EXPORT_KNOBS, SweepSpec
    from experiments.plan import Plan

    plan = Plan(knobs={"export_sync": ("sync", "async"), "export_wdelay": ("wdelay", "no_wdelay")}, strategy="grid")
    spec = SweepSpec("srv", ("c1",), "/srv/nfs", plan, async_opt_in=True)
    journal = RecordingJournal()
    applier = ConfigApplier(journal, {}, spec, "/mnt/nfs-tuner-t", export_client="10.0.0.0/24")  # type: ignore[arg-type]

    async def run() -> None:
        for sync, wdelay in (("sync", "no_wdelay"), ("sync", "no_wdelay"), ("async", "no_wdelay"), ("async", "wdelay")):
            await applier._hold("srv", EXPORT_KNOBS, {"export_sync": sync, "export_wdelay": wdelay}, Applying())

    asyncio.run(run())
    assert journal.log == [
        ("apply", "export_sync", "sync"), ("apply", "export_wdelay", "no_wdelay"),  # the second trial: held, nothing
        ("revert", "export_wdelay", "no_wdelay"), ("revert", "export_sync", "sync"),
        ("apply", "export_sync", "async"), ("apply", "export_wdelay", "no_wdelay"),
        ("revert", "export_wdelay", "no_wdelay"), ("apply", "export_wdelay", "wdelay"),  # sync read no wdelay: kept
    ]  # fmt: skip


# --- nfs-tuner-helper: exactly these options more ----------------------------------------------------
@pytest.fixture(scope="module")
def helper() -> dict[str, Any]:
    ns: dict[str, Any] = {"__name__": "helper_under_test"}
    exec(compile(HELPER, "sudo_helper_host.py", "exec"), ns)
    return ns


@pytest.mark.parametrize("options", ["vers=4.2,nocto", "defaults", "actimeo=0", "actimeo=600", "rsize=65536,actimeo=30,nocto"])
def test_the_helper_mounts_with_nocto_and_a_bounded_actimeo(helper: dict[str, Any], options: str) -> None:
    assert helper["_mount_options"](options) == options + ",nosuid,nodev"


@pytest.mark.parametrize("options", [
    "nocto=1", "cto=0", "actimeo=601", "actimeo=99999", "actimeo=-1", "actimeo=", "actimeo", "actimeo=1e3",
    "actimeo=0x10", "actimeo=30s", "actimeo=3:0", "actimeo=3.5", "nocto,suid", "nocto,context=x",
    "cto",  # cto is the default: nfs-tuner renders only nocto, and the helper takes only what it renders
])  # fmt: skip
def test_the_helper_refuses_other_caching_options(helper: dict[str, Any], options: str) -> None:
    with pytest.raises(helper["Refused"]):
        helper["_mount_options"](options)


def test_the_helper_toggles_wdelay_on_an_existing_export_only(helper: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    current = {"rw", "sync", "wdelay", "no_subtree_check"}
    monkeypatch.setitem(helper, "_exported", lambda: {("10.0.0.0/24", "/srv/nfs"): current})
    monkeypatch.setitem(helper, "_tool", lambda name: "/usr/sbin/" + name)
    for good in ("no_wdelay,sync,rw,no_subtree_check", "sync,wdelay,rw,no_subtree_check"):
        assert helper["check"](["exportfs", "-o", good, "10.0.0.0/24:/srv/nfs"])[1:] == ["-o", good, "10.0.0.0/24:/srv/nfs"]
    for bad in ("no_wdelay,rw,insecure", "no_wdelay=1,rw", "nowdelay,rw", "no_wdelay,no_root_squash", "wdelay,crossmnt"):
        with pytest.raises(helper["Refused"]):
            helper["check"](["exportfs", "-o", bad, "10.0.0.0/24:/srv/nfs"])
    with pytest.raises(helper["Refused"], match="only changes existing exports"):
        helper["check"](["exportfs", "-o", "rw,no_wdelay", "*:/srv/nfs"])


def test_the_applied_steps_pass_the_helper(helper: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """What the applier really sends, not a hand-written copy of it."""
    options = set(EXPORTFS_V.split("(")[1].rstrip(")\n").split(","))  # exportfs -v's own options
    monkeypatch.setitem(helper, "_exported", lambda: {("10.0.0.0/24", "/srv/nfs"): options})
    monkeypatch.setitem(helper, "_tool", lambda name: "/usr/sbin/" + name)
    target = export_wdelay("/srv/nfs", "10.0.0.0/24")
    asyncio.run(target.read(FakeConn(EXPORTFS_V)))  # type: ignore[arg-type]
    for step in (*target.set_steps("no_wdelay"), *target.restore_steps("wdelay")):
        helper["check"](list(step.argv))
    mount = MountOptions.from_values({"nocto": "nocto", "actimeo": 600}).option_string()
    assert helper["_mount_options"](mount) == "actimeo=600,nocto,nosuid,nodev"


# --- snippets and evidence carry the caveat ----------------------------------------------------------
def test_the_fstab_line_has_the_options_and_the_caveat_beside_it() -> None:
    config = {"rsize": 1048576, "nocto": "nocto", "actimeo": 60}
    assert fstab_line(config, SnippetContext()) == \
        "nfs-server:/srv/nfs /mnt/nfs nfs rsize=1048576,actimeo=60,nocto,hard,_netdev 0 0"
    snippets = {s.key: s for s in render_all(config, SnippetContext())}
    fstab = snippets["fstab"]
    assert fstab.risky and "another client's changes" in fstab.safety and "60 s stale" in fstab.safety
    comment, line = fstab.text.splitlines()
    assert comment.startswith("# nfs-tuner: Cache coherence") and line.endswith("actimeo=60,nocto,hard,_netdev 0 0")
    ansible = snippets["ansible"]
    assert ansible.risky and "Cache coherence" in ansible.safety and "actimeo=60,nocto" in ansible.text


def test_a_safe_cache_setting_has_no_caveat_and_replaces_the_admins_own() -> None:
    assert coherence_text({"nocto": "cto", "actimeo": 0}) == ""
    fstab = {s.key: s for s in render_all({"nocto": "cto", "actimeo": 0}, SnippetContext())}["fstab"]
    assert not fstab.risky and not fstab.text.startswith("#")
    ctx = SnippetContext(mount_options=("hard", "nocto", "actimeo=600"))
    assert fstab_line({"nocto": "cto", "actimeo": 0}, ctx).split()[3] == "actimeo=0,cto,hard"


def test_the_exports_line_carries_no_wdelay_and_says_when_it_matters() -> None:
    ctx = SnippetContext(export_options=("rw", "wdelay", "no_subtree_check"))
    assert exports_line({"export_sync": "sync", "export_wdelay": "no_wdelay"}, ctx) == \
        "/srv/nfs *(rw,sync,no_subtree_check,no_wdelay)"
    assert exports_line({"export_sync": "sync"}, ctx) == "/srv/nfs *(rw,sync,no_subtree_check,wdelay)"  # the admin's own
    exports = {s.key: s for s in render_all({"export_wdelay": "no_wdelay"}, ctx)}["exports"]
    assert "only matters on a sync export" in exports.safety
    with pytest.raises(ValueError, match="export_wdelay"):
        exports_line({"export_wdelay": "maybe"}, ctx)


def test_the_evidence_says_wdelay_only_matters_on_sync_exports() -> None:
    from app.recommend.build import recommend_objective
    from tests.unit.app.recommend.test_recommend_choice import runs

    mb = 1_000_000.0
    base = {"export_sync": "sync", "export_wdelay": "wdelay", "nocto": "cto"}
    best = {"export_sync": "sync", "export_wdelay": "no_wdelay", "nocto": "nocto"}
    figures = [*runs(base, [10 * mb, 10.1 * mb, 9.9 * mb]), *runs(best, [20 * mb, 20.2 * mb, 19.9 * mb])]
    rec = recommend_objective("seq_write", figures, baseline=base)
    assert rec is not None and rec.config == best
    said = " ".join((*rec.evidence, *rec.warnings))
    assert "export_wdelay wdelay → no_wdelay: the write delay only matters on sync exports" in said
    assert any(w.startswith("Cache coherence: with nocto") for w in rec.warnings)
    assert wdelay_sentence(rec.best, rec.best) is None


# --- a simulated sweep over nocto × actimeo ----------------------------------------------------------
def test_a_simulated_sweep_over_nocto_and_actimeo_stores_trials_and_reverts(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")

    async def sweep() -> int:
        session = await connected(store, SimulatedHosts(speed=400.0), ("client1",))
        spec = session.plan(session.choices(knobs={"nocto": "cto, nocto", "actimeo": "3, 60",
                                                   "export_wdelay": "wdelay, no_wdelay"},
                                            workloads=("small_files",), strategy="grid", repetitions=1,
                                            max_repetitions=1))  # fmt: skip
        return (await session.run(spec)).session_id

    sid = asyncio.run(sweep())
    trials = store.trials(sid, TrialState.OK)
    configs = {(t.config["nocto"], t.config["actimeo"], t.config["export_wdelay"]) for t in trials}
    # the kernel's own attribute-cache range, today's, runs as it is beside the two values (issue 29)
    assert configs == {(c, a, w) for c in ("cto", "nocto") for a in (3, 60, "3–60") for w in ("wdelay", "no_wdelay")}
    journal = store.journal(sid)
    mounts = {str(e.new_value) for e in journal if e.knob == "test_mount"}
    assert {"actimeo=3", "actimeo=3,nocto", "actimeo=60", "actimeo=60,nocto"} <= mounts
    assert any(e.knob == "export_wdelay" and e.new_value == "no_wdelay" for e in journal)
    assert journal and all(e.state == JournalState.REVERTED for e in journal)
    assert store.unreverted_journal() == []
    assert all(t.summary for t in trials)
    cached: dict[str, Value] = {"nocto": "nocto", "actimeo": 60, "export_wdelay": "no_wdelay"}
    plain: dict[str, Value] = {"nocto": "cto", "actimeo": 3, "export_wdelay": "wdelay"}
    ratio = world.throughput(cached, "small_files") / world.throughput(plain, "small_files")
    assert 1.05 < ratio < 1.25  # a plausible small effect, not a miracle
    assert world.throughput(cached, "seq_read") == world.throughput(plain, "seq_read")
    store.close()


def test_the_run_confirmation_names_the_cache_coherence_risk(tmp_path: Path) -> None:
    from tests.unit.app.session.test_run_preview import _session

    session = _session(tmp_path)
    spec = session.plan(session.choices(knobs={"nocto": "cto, nocto", "actimeo": "3, 60", "export_wdelay": "no_wdelay"},
                                        workloads=("small_files",)))  # fmt: skip
    by_host = {h.host: {c.knob: c for c in h.changes} for h in session.preview(spec).hosts}
    nocto, actimeo = by_host["client1"]["nocto"], by_host["client1"]["actimeo"]
    assert (nocto.place, nocto.today, nocto.values) == ("the test mount", "cto", "cto, nocto")
    assert "another client's changes" in nocto.risk and "stale" in actimeo.risk
    assert actimeo.today == "3–60" and actimeo.values == "3, 60, 3–60"  # today's own range is tried as it is
    wdelay = by_host["nfs-server"]["export_wdelay"]
    assert (wdelay.target, wdelay.today, wdelay.values) == ("10.0.0.0/24:/srv/nfs", "wdelay", "no_wdelay, wdelay")
    session.store.close()


def test_the_sweep_command_takes_what_the_vocabulary_prints() -> None:
    from app.cli import parse
    from app.commands.sweep import check_choices, choices_from_args

    knobs = {k: knob_values_text(k, SPECS[k].default_sweep) for k in ("nocto", "actimeo", "export_wdelay")}
    args = parse(["sweep", "--server", "s", "--client", "c", *(f"--knob={k}={v}" for k, v in knobs.items())])
    choices = choices_from_args(args)
    check_choices(choices)
    assert {k: parse_values(k, v) for k, v in choices.knobs.items()} == {k: SPECS[k].default_sweep for k in knobs}


@pytest.mark.parametrize("acregmin", ["x", "-1", "٣", "1e3", ""])
def test_an_odd_attribute_time_a_host_reports_reads_as_unknown(acregmin: str) -> None:
    assert MountOptions.taken("actimeo", {"acregmin": acregmin}) is None
