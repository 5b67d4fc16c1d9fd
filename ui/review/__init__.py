"""The session browser: review, compare, export and import stored sessions with no host in reach."""

from ui.review.launch import open_review_window, run_review
from ui.review.window import ReviewWindow

__all__ = ["ReviewWindow", "open_review_window", "run_review"]
