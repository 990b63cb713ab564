"""Hyperparameter search for prototype sets: PrototypeClassifierCV and its report."""

from discrim.model_selection.prototype_cv import PrototypeClassifierCV, SearchProgress

__all__ = ["PrototypeClassifierCV", "SearchProgress"]
