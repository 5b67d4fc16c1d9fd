"""What the HTML report asks of the admin: routine steps plain, real problems marked, and which
recommended configuration (and so which fstab line) to apply when the objectives differ."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.recommend.ranking import config_key
from app.report import load_session_data, render_html
from app.report.config_advice import config_advice
from app.report.severity import snippet_mark
from app.runner.agent_handle import garbage_warning
from app.snippets import SnippetContext, render_all
from app.store import JournalState, Store, TrialState
from tests.fabricate_session import Recipe, fabricate_session


@pytest.fixture
def session(tmp_path: Path) -> Iterator[tuple[Store, int]]:
    """A sweep's session: seq_read and seq_write recommend different rsize; every change put back, one trial broke."""
    with Store(tmp_path / "s.db") as store:
        yield store, fabricate_session(store, Recipe(samples_per_trial=8))


def _html(store: Store, sid: int) -> str:
    return render_html(load_session_data(store, sid), store.load_session_samples(sid))


def _rows(html: str, table: str) -> list[tuple[str, str]]:
    """(row class, row html) of every body row of ``<table class="{table}">``."""
    m = re.search(rf'<table class="{table}">(.*?)</table>', html, re.S)
    assert m is not None, table
    return re.findall(r'<tr class="(\w+)">(.*?)</tr>', m.group(1), re.S)


def _snippet_notes(html: str) -> dict[str, str]:
    """The class of the note under each snippet heading of the first group, by the snippet's target."""
    section = re.search(r'<section class="group recommended">(.*?)</section>', html, re.S)
    assert section is not None
    found = re.findall(r'<h4>[^<]*<code>([^<]*)</code>.*?</h4>\s*<p class="(\w+)">', section.group(1), re.S)
    return dict(found)


def test_routine_steps_are_plain_and_the_legend_says_what_colours_mean(session: tuple[Store, int]) -> None:
    store, sid = session
    html = _html(store, sid)
    journal = _rows(html, "journal")
    assert len(journal) == len(store.journal(sid)) > 0
    assert {cls for cls, _ in journal} == {"routine"}  # applied and put back: not a warning
    assert "each applied and put back as planned" in html
    trials = _rows(html, "trials")
    broken = [row for cls, row in trials if cls == "warn"]
    assert len(broken) == 1 and "the load agent ended without a summary" in broken[0] and "⚠ broken" in broken[0]
    assert sum(cls == "routine" for cls, _ in trials) == len(trials) - 1
    # how to apply a snippet (a fresh mount, exportfs -ra, a restart) is a plain step, not a warning
    notes = _snippet_notes(html)
    assert notes["/etc/fstab"] == notes["/etc/exports"] == notes["/etc/nfs.conf.d/nfs-tuner.conf"] == "step"
    assert '<p class="step">rsize/wsize/nconnect take effect on a fresh mount only' in html
    legend = re.search(r'<ul class="legend">(.*?)</ul>', html, re.S)
    assert legend is not None
    assert re.findall(r'<li class="(\w+)">', legend.group(1)) == ["routine", "warn", "error"]
    assert "No colour: went as planned" in legend.group(1) and "✖ Red: may still need you" in legend.group(1)
    # the safety notes keep the risks only, not the routine steps
    safety = re.search(r'<ul class="safety">(.*?)</ul>', html, re.S)
    assert safety is not None and "exportfs -ra" not in safety.group(1) and "fresh mount" not in safety.group(1)


def test_real_problems_are_marked_warn_or_error(session: tuple[Store, int]) -> None:
    store, sid = session
    failed = store.journal_intend(sid, "lab-server", "nfsd_threads", "/proc/fs/nfsd/threads", 8, 64)
    store.journal_update(failed, JournalState.APPLIED)
    store.journal_update(failed, JournalState.FAILED, "could not put back nfsd_threads: permission denied")
    still = store.journal_intend(sid, "lab-client1", "rsize", "mount option", 65536, 1048576)
    store.journal_update(still, JournalState.APPLIED)
    lost = store.journal_intend(sid, "lab-client2", "rsize", "mount option", 65536, 262144)
    store.journal_update(lost, JournalState.REVERTED_BY_HOST)
    refused = store.journal_intend(sid, "lab-client2", "read_ahead_kb", "/sys/class/bdi/0:53/read_ahead_kb", 128, 4096)
    store.journal_update(refused, JournalState.DISMISSED, "not made: read-only host")
    tid = store.add_trial(sid, {"rsize": 65536, "nfsd_threads": 8}, {"kind": "seq_read"}, repetition=9)
    store.finish_trial(tid, TrialState.OK, summary={
        "unit": "B/s", "mean": 1e8, "warnings": [f"lab-client1: {w}" for w in garbage_warning("agent", 3, ["%%%"])]})
    html = _html(store, sid)
    by_id = {j.id: j for j in store.journal(sid)}
    marks = [cls for cls, _ in _rows(html, "journal")]
    assert [marks[list(by_id).index(i)] for i in (failed, still, lost, refused)] == ["error", "error", "warn", "warn"]
    assert marks.count("routine") == len(marks) - 4
    errors = [row for cls, row in _rows(html, "journal") if cls == "error"]
    assert "✖ failed" in errors[0] and "permission denied" in errors[0] and "✖ applied" in errors[1]
    assert f"{len(marks) - 4} applied and put back as planned; 2 marked ⚠; 2 marked ✖" in html
    garbage = [(cls, row) for cls, row in _rows(html, "trials") if f"#{tid}<" in row]
    assert len(garbage) == 1 and garbage[0][0] == "warn" and "3 line(s) from the agent could not be read" in garbage[0][1]


def test_a_snippet_is_a_warning_only_when_using_it_is_a_risk() -> None:
    ctx = SnippetContext(client_hosts=("c1",))
    marks = {s.key: snippet_mark(s) for s in render_all({"export_sync": "async", "mtu": 9000, "rsize": 65536}, ctx)}
    assert marks["exports"] == marks["ansible"] == marks["mtu-networkd:c1"] == marks["mtu-nmcli:nfs-server"] == "warn"
    assert marks["fstab"] == marks["fio"] == "routine"
    plain = {s.key: snippet_mark(s) for s in render_all({"export_sync": "sync", "rsize": 65536}, ctx)}
    assert plain["exports"] == plain["ansible"] == "routine"
    refused = render_all({"rsize": 65536}, SnippetContext(mount_point="relative/path"))
    assert any(s.key.startswith("refused:") and snippet_mark(s) == "warn" for s in refused)


def test_two_objectives_two_configurations_one_recommended_with_guidance(session: tuple[Store, int]) -> None:
    store, sid = session
    data = load_session_data(store, sid)
    advice = config_advice(data)
    assert advice is not None and len(advice.groups) == 2
    assert [a.recommended for a in advice.groups].count(True) == 1
    # the rule, checked against the rankings: the recommended one has the highest worst share of each best
    worst = {}
    for a in advice.groups:
        key = config_key(a.group.config)
        worst[key] = min(next(r.mean for r in o.ranking if config_key(r.config) == key) / max(r.mean for r in o.ranking)
                         for o in data.objectives)
    chosen = next(a for a in advice.groups if a.recommended)
    assert worst[config_key(chosen.group.config)] == max(worst.values())
    assert chosen.group.objectives == ("seq_read",)  # rsize=1 MiB reads far better and writes about as well
    html = _html(store, sid)
    assert '<h3 id="which">Which configuration to apply</h3>' in html
    assert "a client mounts with one fstab line" in html and "They differ in: rsize." in html
    assert "Only if the clients mostly write large files: the best for seq_write" in html
    sections = re.findall(r'<section class="group (\w+)">(.*?)</section>', html, re.S)
    assert [kind for kind, _ in sections] == ["recommended", "alternative"]
    fstab = [re.findall(r'<code>/etc/fstab</code>.*?<pre class="snippet">([^<]*)</pre>', body, re.S)
             for _, body in sections]
    assert [len(f) for f in fstab] == [1, 1]  # one fstab line per configuration, exactly one recommended
    assert "rsize=1048576" in fstab[0][0] and "rsize=1048576" not in fstab[1][0]
    assert html.count('<span class="badge recommended">recommended: server and every client</span>') == 1
    assert '<span class="badge alternative">only if the clients mostly write large files</span>' in html


def test_one_configuration_for_every_objective_needs_no_choice(tmp_path: Path) -> None:
    with Store(tmp_path / "one.db") as store:
        html = _html(store, fabricate_session(store, Recipe(samples_per_trial=8, workloads=("seq_write",))))
    assert "Which configuration to apply" not in html
    assert re.findall(r'<section class="group (\w+)">', html) == ["recommended"]
    assert "Every objective measured recommends this configuration" in html
