"""Qt-free session review: what a session holds, comparisons, and the self-contained HTML report."""

from app.report.comparison import ComparisonRow, compare_sessions
from app.report.html_report import render_html, render_report, results_table, write_report
from app.report.session_data import (
    ObjectiveView,
    RankedConfig,
    SessionData,
    SnippetGroup,
    objective_views,
    load_session_data,
    plan_summary,
    trial_mean,
    workload_kind,
)
from app.report.tables import WorkloadTable, workload_table

__all__ = [
    "ComparisonRow",
    "ObjectiveView",
    "RankedConfig",
    "SessionData",
    "SnippetGroup",
    "WorkloadTable",
    "objective_views",
    "compare_sessions",
    "load_session_data",
    "plan_summary",
    "render_html",
    "render_report",
    "results_table",
    "trial_mean",
    "workload_kind",
    "workload_table",
    "write_report",
]
