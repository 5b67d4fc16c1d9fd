"""The Results page's snippets: each says where it goes, on which host, with which caveat.

The review window's SnippetPane as it is (one pane, one suggested file name for both
faces): the session's own host names, and the text in a monospace view that never wraps.
"""

from __future__ import annotations

from ui.review.snippets_view import SnippetPane


class SnippetCard(SnippetPane):
    """A snippet card on the Results page."""
