"""One session, read off every face as the admin sees it: the same configuration, values, workload and figures.

Seen by a tester before: "nfsd threads = 64" on one face and `nfsd_threads=32` on another,
"1M" beside 1048576, "sequential read" beside `seq_read`. Here one session that the
product's engine swept over simulated hosts (the demo) is stored in a real SQLite file and
read back from the wizard's Run and Results pages, the review window, the HTML report
(`nfs-tuner report`) and the CLI (`sessions list`, `sessions show`, `sweep`'s progress
lines). Every string is taken from what the face shows, never rebuilt here, and each
must be identical wherever the same thing appears. The second client's path is slower,
so the clients' difference (fairness) has something to say on every face too.
"""

from __future__ import annotations

import asyncio
import html
import io
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QTableWidget

from app.cli import main
from app.commands import arguments
from app.commands.sweep import _Printer
from app.knobs.values import parse_values
from app.session import TuningSession
from app.simulated import SimulatedHosts
from app.store import Store, TrialState
from app.sweep.events import TrialFinished
from app.sweep.spec import workload_kind
from tests.unit.app.session.test_session_service import connected
from ui.bridge import Bridge
from ui.pages.results import ResultsPage
from ui.pages.run import RunPage
from ui.review.launch import open_review_window
from ui.trial_strip import LINES
from ui.wizard import TuningWizard

from .test_review_window import ScriptedDialogs

CHOICES = {"knobs": {"rsize": "32K, 1M", "nfsd_threads": "8, 64"}, "workloads": ("seq_read",),
           "strategy": "grid", "repetitions": 2}  # fmt: skip
OBJECTIVE = "seq_read"
# The plan's one configuration (issue 29): its changes, or today's settings kept; the workload's figure after it.
VERDICT = re.compile(r"(?:Change (?P<change>.+)|Keep today's settings) — (?P<figure>\S+ (?:MB/s|ops/s))(?P<rest>.*)")
# Independent of the formatter: plain decimal values, a figure with one decimal and its unit.
CONFIG_FORM = re.compile(r"nfsd_threads=\d+, rsize=\d+")
FIGURE_FORM = re.compile(r"\d[\d,]*\.\d MB/s")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, list[TrialFinished]]:
    """A complete demo session in a SQLite file, and the trial events its sweep published."""
    db = tmp_path_factory.mktemp("words") / "s.db"

    async def go() -> tuple[int, list[TrialFinished]]:
        with Store(db) as store:
            hosts = SimulatedHosts(speed=400.0)
            hosts.slow_path["client2"] = 0.5  # a third of the total: uneven beyond the noise
            session = await connected(store, hosts)
            events: list[TrialFinished] = []
            session.bus.subscribe(events.append, TrialFinished)
            await session.baseline([OBJECTIVE])
            finished = await session.run(session.plan(session.choices(**CHOICES)))
            assert finished.state == "complete"
            return finished.session_id, events

    sid, events = asyncio.run(go())
    return db, sid, events


@pytest.fixture
def wizard(qtbot, demo: tuple[Path, int, list[TrialFinished]]) -> Iterator[TuningWizard]:  # type: ignore[no-untyped-def]
    store = Store(demo[0])
    session = TuningSession(store, SimulatedHosts())
    session.session_id = demo[1]
    bridge = Bridge(session.bus)
    w = TuningWizard(session, bridge)
    qtbot.addWidget(w)
    yield w
    bridge.close()
    store.close()


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def _verdict(text: str) -> tuple[str, str]:
    m = VERDICT.fullmatch(text.strip())
    assert m is not None, text
    return text.strip(), m["figure"]


def _qt_rows(table: QTableWidget) -> list[dict[str, str]]:
    """A table as the admin reads it: each row by its column headers."""
    heads = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]  # type: ignore[union-attr]
    return [{h: (item.text() if (item := table.item(r, c)) is not None else "") for c, h in enumerate(heads)}
            for r in range(table.rowCount())]  # fmt: skip


def _html_rows(page: str, cls: str) -> list[dict[str, str]]:
    """The report's table of class ``cls``, row by row, each cell's text unescaped."""
    m = re.search(rf'<table class="{cls}">(.*?)</table>', page, re.S)
    assert m is not None, cls
    heads = [html.unescape(h) for h in re.findall(r"<th[^>]*>(.*?)</th>", m[1], re.S)]
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", r, re.S) for r in re.findall(r"<tr[^>]*>(.*?)</tr>", m[1], re.S)]
    return [dict(zip(heads, (html.unescape(c) for c in cells), strict=True)) for cells in rows if cells]


def _settings(config: str) -> dict[str, str]:
    return dict(s.split("=", 1) for s in config.split(", "))


def test_every_face_words_the_session_the_same(qtbot, wizard: TuningWizard, tmp_path: Path,  # type: ignore[no-untyped-def]
                                               demo: tuple[Path, int, list[TrialFinished]],
                                               capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    db, sid, events = demo
    with Store(db, readonly=True) as store:
        trials = {t.id: t for t in store.trials(sid) if t.state == TrialState.OK}
    assert len(trials) >= 8 and events

    # --- the CLI: sessions list, sessions show, the report it writes, the sweep's progress lines ---
    listing = next(x for x in _cli(capsys, "--db", str(db), "sessions", "list").splitlines() if x.startswith(f"{sid:>4}  "))
    listed = re.search(rf"recommended: (?P<change>.+) \({OBJECTIVE} (?P<figure>\S+ (?:MB/s|ops/s))", listing)
    assert listed is not None, listing
    shown = _cli(capsys, "--db", str(db), "sessions", "show", str(sid), "--no-snippets")
    show_verdict = re.search(rf"^  \[{OBJECTIVE}\]: (?P<figure>\S+ (?:MB/s|ops/s))(?P<rest>.*)$", shown, re.M)
    assert show_verdict is not None, shown
    cli_trials = {int(m["id"]): m for m in re.finditer(
        r"^  #(?P<id>\d+)\s+ok\s+(?P<workload>\S+)\s+(?P<config>.+): (?P<figure>.+?) cv (?P<cv>.+?) dip "
        r"(?:.+?, (?P<clients>clients .+)|.+)$", shown, re.M)}
    _cli(capsys, "--db", str(db), "report", str(sid), "--to", str(tmp_path / "r.html"))
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    chosen = re.search(r'<p class="chosen">(.*?)</p>', page, re.S)
    assert chosen is not None
    report_trials = {int(r["Trial"].lstrip("#")): r for r in _html_rows(page, "trials")}
    report_rank = _html_rows(page, "ranking")[0]
    out = io.StringIO()
    printer = _Printer(out, quiet=False)
    for ev in events:
        printer(ev)
    progress = {int(m["id"]): m for m in re.finditer(
        r"^trial (?P<id>\d+) (?P<workload>\S+) (?P<config>.+): (?P<figure>.+?)(?: \((?P<latency>p50 [^)]+)\))?"
        r"(?:, (?P<clients>clients .+))?$",
        out.getvalue(), re.M)}

    # --- the wizard: the Run page's finished trials, then the Results page ---
    run = wizard.page_of(RunPage)
    assert isinstance(run, RunPage)
    for ev in events:
        run.on_trial_finished(ev)
    strip = {ev.trial_id: run.strip.item(i) for i, ev in enumerate(events)}
    results = wizard.page_of(ResultsPage)
    assert isinstance(results, ResultsPage)
    results.show_results(wizard.session.results(sid))
    results.objective.setCurrentText(OBJECTIVE)
    bold = re.search(r"<b>(.*?)</b>", results.recommendation.text(), re.S)
    assert bold is not None
    page_rank = _qt_rows(results.ranking)[0]

    # --- the review window: the session's row, its results, its trials ---
    review = open_review_window("", db, dialogs=ScriptedDialogs())  # type: ignore[arg-type]
    qtbot.addWidget(review)
    row = next(r for r in review.visible_rows if r.id == sid)
    view = review.open_session(sid)
    assert view is not None
    box = next(b for b in view.results.boxes if b.view.objective == OBJECTIVE)
    review_rank = _qt_rows(box.ranking)[0]
    review_trials = {int(r["Trial"].lstrip("#")): r for r in _qt_rows(view.samples.table)}

    # the recommendation and its figure: one string each, on every face
    verdicts = {"results page": _verdict(html.unescape(bold[1])), "review": _verdict(box.verdict.text()),
                "report": _verdict(html.unescape(chosen[1]))}  # fmt: skip
    assert len(set(verdicts.values())) == 1, verdicts
    verdict, figure = verdicts["report"]
    assert show_verdict["figure"] == listed["figure"] == figure and FIGURE_FORM.fullmatch(figure), (verdicts, listed)
    assert row.best == f"{OBJECTIVE} {figure}"
    # the ranking's first row: the same configuration, interval and spread on the three faces that rank
    config = report_rank["Configuration"]
    assert CONFIG_FORM.fullmatch(config), config
    assert page_rank["Configuration"] == review_rank["Configuration"] == config
    assert page_rank["Mean (95 % CI)"] == review_rank["Mean (95 % CI)"] == report_rank["Mean"]
    assert " ± " in report_rank["Mean"] and report_rank["Mean"].endswith(" MB/s")
    assert page_rank["Median CV"] == review_rank["Median CV"] == report_rank["Median CV"]
    # its latency: p50, p99 and p99.9 of the merged histogram, the same on the three faces
    for col in ("p50", "p99", "p99.9"):
        assert page_rank[col] == review_rank[col] == report_rank[col], col
        assert re.fullmatch(r"\d[\d,]*(\.\d+)? ms", report_rank[col]), report_rank[col]
    assert re.fullmatch(r"\d+(\.\d)? %", report_rank["Median CV"])
    # the workload: its identifier wherever a trial is listed; with room, the same identifier and its name
    assert results.workload.text().startswith(f"Workload: {OBJECTIVE} (sequential read")

    # every trial: its configuration, knob values, workload and figure, the same on every face
    assert trials.keys() <= report_trials.keys() and trials.keys() <= cli_trials.keys() <= review_trials.keys()
    assert progress.keys() == strip.keys() and trials.keys() <= progress.keys()
    for tid, t in trials.items():
        configs = {"report": report_trials[tid]["Configuration"], "sessions show": cli_trials[tid]["config"],
                   "review caption": view.samples.describe(tid).split(" · ")[4]}  # fmt: skip
        workloads = {"report": report_trials[tid]["Workload"], "sessions show": cli_trials[tid]["workload"],
                     "review": review_trials[tid]["Workload"]}  # fmt: skip
        figures = {"report": report_trials[tid]["Mean"], "sessions show": cli_trials[tid]["figure"],
                   "review": review_trials[tid]["Mean"]}  # fmt: skip
        if tid in progress:  # what the sweep said as the trial ended, in the terminal and on the Run page's tile
            tip = strip[tid].toolTip()  # the tile's lines in full
            figure_on_tile = re.search(r"\S+ (?:MB/s|ops/s)", tip)
            configs |= {"sweep": progress[tid]["config"], "run page": next((x for x in tip.splitlines() if "rsize=" in x), tip)}
            workloads |= {"sweep": progress[tid]["workload"]}
            figures |= {"sweep": progress[tid]["figure"], "run page": figure_on_tile[0] if figure_on_tile else tip}
            assert progress[tid]["latency"] and progress[tid]["latency"] in tip  # the tile's tooltip words it alike
            lat = dict(zip(("p50", "p99", "p99.9"), re.findall(r"(\S+ ms)", progress[tid]["latency"]), strict=True))
            assert lat == {k: report_trials[tid][k] for k in lat} == {k: review_trials[tid][k] for k in lat}
            # the clients' difference: the tile's last line, the progress line, `sessions show` and the Fairness cell
            tile, cell = strip[tid].text().split("\n"), report_trials[tid]["Fairness"]
            notes = {"sweep": progress[tid]["clients"], "sessions show": cli_trials[tid]["clients"],
                     "run page": tile[-1] if len(tile) > LINES else None, "report": f"clients {cell}",
                     "review": f"clients {review_trials[tid]['Fairness']}"}  # fmt: skip
            assert len(set(notes.values())) == 1 and re.fullmatch(r"\d\.\d×, Jain 0\.\d\d", cell), notes
            assert "client2 lowest" in tip  # the tooltip says it in full
        assert len(set(configs.values())) == 1, configs
        assert len(set(workloads.values())) == 1 and workload_kind(workloads["report"]) == OBJECTIVE, workloads
        assert len(set(figures.values())) == 1 and FIGURE_FORM.fullmatch(figures["report"]), figures
        settings = _settings(configs["report"])
        assert settings == {k: review_trials[tid][k] for k in t.config}  # the review's knob columns
        for knob, text in settings.items():  # and each value pastes back into --knob as the stored value
            assigned = arguments.knob_assignment(f"{knob}={text}")
            assert parse_values(assigned.name, assigned.values) == (t.config[knob],)


def test_a_refusal_names_the_opt_in_as_each_face_shows_it() -> None:
    """The Plan page's refusal names its own box, the command line's its flag (test_cli_help runs that flag)."""
    from app.session.plan import PLAN_PAGE_OPT_INS, plan_problems
    from app.session import PlanChoices
    from ui.pages.plan import OPT_IN_TEXT

    for kind, box in OPT_IN_TEXT.items():
        named = PLAN_PAGE_OPT_INS[kind].split("“")[1].split("”")[0]
        assert box.box.replace("&", "").startswith(named), (named, box.box)
    page = plan_problems(PlanChoices(knobs={"export_sync": "async"}))["export_sync"]
    cli_words = plan_problems(PlanChoices(knobs={"export_sync": "async"}), arguments.OPT_IN_FLAGS)["export_sync"]
    assert page.endswith("“Also try async exports” box checked") and cli_words.endswith("--async-opt-in")
