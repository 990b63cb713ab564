"""Penalties on blocks of a non-negative parameter vector."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np



@dataclass(frozen=True)
class NonNegElasticNet:
    """Elastic-net penalty restricted to the non-negative orthant.

    ``alpha * (l1_ratio * sum(t) + (1 - l1_ratio) / 2 * sum(t ** 2))`` for ``t >= 0``, where
    ``|t| = t`` makes the L1 part differentiable, so that L-BFGS-B with bounds ``t >= 0`` solves
    the penalised problem exactly.

    Parameters
    ----------
    alpha : float
        Overall strength, >= 0.
    l1_ratio : float
        Share of the L1 part, in [0, 1]. The proset report's ``alpha`` is the L2 share,
        ``1 - l1_ratio``.

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.optim import NonNegElasticNet
    >>> penalty = NonNegElasticNet(alpha=2.0, l1_ratio=0.25)
    >>> penalty.coefficients()
    (0.5, 1.5)
    >>> value, grad = penalty.value_and_grad(np.array([0.0, 2.0]))
    >>> value, grad.tolist()  # 0.5 * 2 + 1.5 / 2 * 4; 0.5 + 1.5 * t
    (4.0, [0.5, 3.5])
    """

    alpha: float
    l1_ratio: float

    def value_and_grad(self, t: np.ndarray) -> tuple[float, np.ndarray]:
        """Penalty value and gradient.

        Parameters
        ----------
        t : ndarray of shape (n,), float64, entries >= 0

        Returns
        -------
        value : float
        grad : ndarray of shape (n,)
        """
        l1, l2 = self.coefficients()
        value = l1 * float(t.sum()) + 0.5 * l2 * float(t @ t)
        return value, l1 + l2 * t

    def coefficients(self) -> tuple[float, float]:
        """The penalty as ``l1 * sum(t) + l2 / 2 * sum(t ** 2)``: returns ``(l1, l2)``."""
        return self.alpha * self.l1_ratio, self.alpha * (1.0 - self.l1_ratio)
