"""The ``nfs-tuner`` entry point: headless commands, or the GUI when none is given.

Qt is imported only when a window is really needed, so ``--version``, ``--help``
and every subcommand work on a machine with no display.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from app import cli


def main(argv: Sequence[str] | None = None) -> int:
    args = cli.parse(argv)
    if args.install_desktop_entry:
        from app.desktop_entry import install_desktop_entry

        return install_desktop_entry()
    if args.command is not None:
        return cli.run(args)
    if args.review is not None:
        from ui.review.launch import run_review

        return run_review(args)
    from ui.main import run_gui

    return run_gui(args)


if __name__ == "__main__":
    sys.exit(main())
