"""What Help shows: a short text for each wizard page and the review window (F1), the README, About.

Each text says what the place is for, what happens on the hosts there, and the keys
that matter; the README is the way in (install, what the hosts need, a first session; docs/ in
the source tree has the rest), read from the installed package's metadata (its long
description) or from the source tree beside this file.
"""

from __future__ import annotations

import html
import platform
import re
from importlib import metadata
from pathlib import Path

from PySide6 import __version__ as pyside_version

from app import __version__

KEYS = ("<p><b>Keys:</b> Tab and Shift+Tab move between fields, lists and tables; the arrow keys move "
        "inside a list or table; Alt with an underlined letter presses that button or goes to that "
        "field; F1 shows this help; Ctrl+Q quits.</p>")  # fmt: skip

PAGE_HELP = {  # by the wizard page's title
    "Hosts": (
        "<p>Add the NFS server and the clients to test from: type a name (user@host, a name from your "
        "SSH configuration or an address), choose its role and press Add, or pick names from "
        "<code>~/.ssh/config</code>. Each host is connected over SSH and described: kernel, network "
        "cards and their MTU, disks and RAID arrays, exports or mounts, and what nfs-tuner may change "
        "there.</p><p>A host key nfs-tuner has not seen before is shown with its fingerprint and "
        "trusted only on your word. A session has one server; Next leaves out hosts that are not "
        "connected, after naming them.</p>"),
    "Baseline": (
        "<p>Measures what the hardware can do before anything is changed: the network between each "
        "client and the server at full speed, the server's disks, then each chosen workload on "
        "today's configuration. These are the ceilings the recommendation is held against.</p>"
        "<p>Measuring loads the hosts but changes no setting. It starts only on Measure baseline; "
        "Stop ends it at once. A failure shows where it stopped and the host's own words.</p>"),
    "Plan": (
        "<p>The page opens on the plan the diagnosis proposes: above the knobs, what limits the hosts "
        "today from the baseline (the share of the network and the disk reached, the round trip, nfsd's "
        "thread waits, CPU, what a synced write costs on the export); under each knob, why it is ticked "
        "or not. What the server is for sets the workloads and proposes again. Change anything: the "
        "reasons stay.</p><p>Choose the knobs to sweep and the values to try for each (comma-separated, "
        "checked against what the knob allows), the workloads, the strategy and how often each "
        "configuration runs. Where says what a knob's change acts on: the server, nfs-tuner's own test "
        "mount, the whole client (a kernel setting every filesystem there works under while the run "
        "lasts) or both ends of the link. The time budget fits the plan: shorter trials and fewer runs "
        "first, then the lowest-priority knobs are left out, each said; while the run goes, trials slower "
        "than planned leave knobs out and end the search early, never the checks of the change. The "
        "estimate says how many trials "
        "that makes and about how long they take; a plan that cannot fit cannot start.</p><p>async "
        "exports are offered only after a warning: a server crash can lose acknowledged writes. "
        "Start run first checks the hosts without changing anything (free space on the export, python3, "
        "the ceiling test's port, write access, what each knob needs), then shows what the run changes "
        "on each host and starts only when you confirm.</p>"),
    "Run": (
        "<p>Each trial applies its configuration (journaled first), remounts the test mount, drops the "
        "caches and runs the workload on every client until its throughput is stable. The plots show "
        "the trial live per client and summed, with its stability band, beside the server's disk and "
        "network card; finished trials line up below.</p><p>Pause holds before the next trial, Skip "
        "ends the current one unranked, and Cancel and revert stops and puts every change back. Every "
        "change is put back at the end in any case, and by each host's dead-man switch if nfs-tuner "
        "goes away.</p>"),
    "Results": (
        "<p>The configurations ranked by the chosen objective, with the mean and its 95 % confidence "
        "interval over the repeated runs; the recommendation says why, with the evidence and its "
        "caveats. The config snippets (fstab, exports, nfs.conf, sysctl, udev and more) are ready to "
        "paste or save, each saying where it goes and on which host. Per knob charts each knob's "
        "values.</p><p>Export report writes a self-contained HTML report; New session starts over. "
        "Every session stays in the database: Sessions ▸ Review saved sessions.</p>"),
}

REVIEW_HELP = (
    "<p>Every stored session, newest first, with its hosts, plan, state and best result; filter by "
    "text, host and dates. Open shows a session (results, every sample on one time axis, snippets, "
    "the host facts as they were, the journal of changes); Compare two puts two sessions side by "
    "side and says whether each difference is beyond noise.</p><p>A load ladder opens on its Ladder tab "
    "(throughput and p99 against the offered load, the knee marked); a directory study on its Directory "
    "scaling tab (create rate against entries, each collapse marked). Two ladders compared draw both "
    "curves on one plot, each knee labelled with the knobs its ladder held.</p><p>The Session menu exports an HTML "
    "report, CSV files or a session file to send, and imports one received. Nothing here connects to "
    "a host; a file you review is never changed.</p>")  # fmt: skip


def readme_text() -> str:
    """The README as Markdown, its pictures left out (a dialog has no place to find them)."""
    source = Path(__file__).resolve().parent.parent / "README.md"
    try:
        text = source.read_text(encoding="utf-8")
    except OSError:
        try:
            text = metadata.metadata("nfs-tuner")["Description"] or ""
        except (metadata.PackageNotFoundError, KeyError):
            text = ""
    text = re.sub(r"!\[([^\]]*)\]\([^)]*\)", r"*\1*", text)  # a picture by its caption
    return text or "The README is not installed with this copy of nfs-tuner."


def about_text() -> str:
    return (f"<h3>nfs-tuner {html.escape(__version__)}</h3><p>A desktop tuning assistant for NFS servers and "
            "clients: it measures, changes one tunable at a time, proves its recommendation with numbers "
            "and puts every change back.</p><p>Licence: GPL-3.0-or-later.</p>"
            f"<p>Python {html.escape(platform.python_version())}, PySide6 {html.escape(pyside_version)}.</p>")
