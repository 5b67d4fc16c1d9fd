"""Recommendation: rank a session's configurations per objective, with evidence.

Qt-free. ``recommend(store, session_id, ceilings=…)`` gives a SessionRecommendation;
``save(store, rec)`` stores one row per objective (its JSON form as the evidence).
"""

from app.recommend.build import recommend, recommend_objective, save
from app.recommend.model import (
    CeilingShare,
    Ceilings,
    ConfigResult,
    ExcludedTrial,
    Gain,
    Interval,
    Layer,
    ObjectiveRecommendation,
    SessionRecommendation,
    Stability,
)
from app.recommend.objectives import OBJECTIVES, objective_of
from app.recommend.ranking import DIP_TOLERANCE, DIP_WEIGHT, sustainable

__all__ = [
    "DIP_TOLERANCE",
    "DIP_WEIGHT",
    "OBJECTIVES",
    "CeilingShare",
    "Ceilings",
    "ConfigResult",
    "ExcludedTrial",
    "Gain",
    "Interval",
    "Layer",
    "ObjectiveRecommendation",
    "SessionRecommendation",
    "Stability",
    "objective_of",
    "recommend",
    "recommend_objective",
    "save",
    "sustainable",
]
