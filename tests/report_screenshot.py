"""Screenshots for the README: the HTML report in headless Chromium, and the review window.

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.report_screenshot docs/screenshots

Fabricates two sessions ("before" and "after" a server change) in a temporary
database, writes the report of the second one and has Chromium print it to
report.png (only the local file is opened: no network, a fresh profile), then shows
the review window with that session open, its samples and a comparison, and grabs
review.png, review-samples.png and review-compare.png. ``--size 1024x700 --suffix=-1024
--review-only`` grabs review-1024.png alone, for another size's set (see the Makefile).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ui.screenshots import PNG_QUALITY, window_size

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
                  "--disable-extensions", "--disable-default-apps")


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    raise SystemExit("no Chromium found: apt-get install chromium (see tests/system-packages.txt)")


def screenshot_html(html: Path, png: Path, *, width: int = 1200, height: int = 3000) -> None:
    with tempfile.TemporaryDirectory(prefix="nfs-tuner-chromium-") as profile:
        subprocess.run([chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                        f"--window-size={width},{height}", f"--screenshot={png.resolve()}",
                        html.resolve().as_uri()], check=True, timeout=120,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, nargs="?", default=Path("docs/screenshots"))
    parser.add_argument("--height", type=int, default=3000, help="report screenshot height in pixels")
    parser.add_argument("--size", type=window_size, default=(1280, 800), metavar="WxH",
                        help="the review window in logical pixels (default 1280x800)")
    parser.add_argument("--suffix", default="", help="added to the review pictures' names, e.g. -1024")
    parser.add_argument("--review-only", action="store_true",
                        help="another size's set: the review window with the session open, no report")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    from PySide6.QtWidgets import QApplication

    from app.report import write_report
    from app.store import Store
    from tests.fabricate_session import Recipe, fabricate_session
    from ui.review.window import ReviewWindow
    from ui.theme import apply_app_style

    with tempfile.TemporaryDirectory(prefix="nfs-tuner-shots-") as tmp:
        store = Store(Path(tmp) / "sessions.db")
        before = fabricate_session(store, Recipe(notes="before: stock server", seed=3))
        after = fabricate_session(store, Recipe(notes="after: new RAID controller", speed=1.12, seed=4))
        if not args.review_only:
            report = write_report(store, after, Path(tmp) / "report.html")
            screenshot_html(report, args.out / "report.png", height=args.height)

        qapp = QApplication.instance() or QApplication(sys.argv[:1])
        assert isinstance(qapp, QApplication)
        apply_app_style(qapp)
        window = ReviewWindow(store, source="sessions.db")
        window.resize(*args.size)
        window.show()
        shots = [] if args.review_only else [args.out / "report.png"]

        def grab(name: str) -> None:
            qapp.processEvents()
            shots.append(args.out / f"{name}{args.suffix}.png")
            window.grab().save(str(shots[-1]), "PNG", PNG_QUALITY)

        view = window.open_session(after)
        assert view is not None
        grab("review")
        if not args.review_only:
            view.tabs.setCurrentWidget(view.samples)
            view.samples.zoom_to(view.data.trials[4].id)
            grab("review-samples")
            window.compare(before, after)
            grab("review-compare")
        if (window.width(), window.height()) != args.size:
            print(f"check: the review window is {window.width()}×{window.height()}, not {args.size[0]}×{args.size[1]}",
                  file=sys.stderr)
        window.close()
    for shot in shots:
        print(shot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
