"""Ready-to-paste configuration for a recommended configuration (Qt-free, plain str rendering).

``render_all(config, ctx)`` gives every snippet; ``context_for_session`` builds the
context (server, export, mount point, md device, NICs) from a session's host facts.
"""

from app.snippets.context import context_for_session, context_from_facts
from app.snippets.model import Snippet, SnippetContext
from app.snippets.render import render_all

__all__ = ["Snippet", "SnippetContext", "context_for_session", "context_from_facts", "render_all"]
