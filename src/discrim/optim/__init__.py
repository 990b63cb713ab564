"""Penalised objectives minimised by L-BFGS-B on the host: the one objective interface of discrim."""

from discrim.optim._lbfgsb import SolverResult, minimize_lbfgsb
from discrim.optim._objective import Objective, PenalizedObjective, Restricted
from discrim.optim._penalties import NonNegElasticNet
from discrim.optim._projected import minimize_projected

__all__ = ["NonNegElasticNet", "Objective", "PenalizedObjective", "Restricted", "SolverResult", "minimize_lbfgsb",
           "minimize_projected"]
