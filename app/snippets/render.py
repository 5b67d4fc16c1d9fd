"""Every snippet for a recommended configuration, in the order an admin applies them."""

from __future__ import annotations

from app.snippets.ansible_playbook import ansible_snippets
from app.snippets.fio_job import fio_snippets
from app.snippets.model import Knobs, Snippet, SnippetContext
from app.snippets.network import mtu_snippets
from app.snippets.nfs_files import nfs_snippets
from app.snippets.tuned_profile import tuned_snippets
from app.snippets.udev_rules import udev_snippets


def render_all(config: Knobs, ctx: SnippetContext) -> list[Snippet]:
    return [
        *nfs_snippets(config, ctx),
        *udev_snippets(config, ctx),
        *mtu_snippets(config, ctx),
        *tuned_snippets(config, ctx),
        *ansible_snippets(config, ctx),
        *fio_snippets(ctx),
    ]
