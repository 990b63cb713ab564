"""The prototype set classifier (proset, after Nikolaus Ruf's technical report): sparse kernel models of P(y | x) built in batches."""

from discrim.prototype._explain import Explanation, UnfamiliarDataWarning
from discrim.prototype._prototype_set import PrototypeBatch
from discrim.prototype._report import explain, export, familiarity, write_report
from discrim.prototype.classifier import PrototypeClassifier

__all__ = [
    "Explanation",
    "PrototypeBatch",
    "PrototypeClassifier",
    "UnfamiliarDataWarning",
    "explain",
    "export",
    "familiarity",
    "write_report",
]
