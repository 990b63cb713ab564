"""
Two normal populations with a common covariance: the line a'(x - h) = 0
=======================================================================

A textbook example of the ML rule: :math:`\\Pi_1 = N_2(\\bmu_1, \\bSigma)` and
:math:`\\Pi_2 = N_2(-\\bmu_1, \\bSigma)`. With :math:`\\mathbf a = \\bSigma^{-1}(\\bmu_1 - \\bmu_2)`
and :math:`\\mathbf h = \\tfrac12(\\bmu_1 + \\bmu_2) = \\mathbf 0`, the ML rule allocates
:math:`\\mathbf x` to :math:`\\Pi_1` iff :math:`\\mathbf a^\\top(\\mathbf x - \\mathbf h) > 0`;
the boundary is the line :math:`y = -(a_1/a_2)\\, x`.

- :math:`\\bmu_1 = (1, 1)`, :math:`\\bSigma = \\begin{pmatrix}1 & -0.9\\\\ -0.9 & 1\\end{pmatrix}`:
  :math:`\\mathbf a = (20, 20)`, the line :math:`y = -x`;
- :math:`\\bmu_1 = (2, 1)`, :math:`\\bSigma = \\begin{pmatrix}1 & 0.09\\\\ 0.09 & 0.1\\end{pmatrix}`:
  :math:`\\mathbf a = (2.39, 17.8)`, the line :math:`y = -0.13\\,x`, nearly horizontal: the
  small variance of :math:`y` makes it the feature that decides.

The known-density rule reproduces both lines; the sample ML rule
(:class:`~discrim.discriminant.LinearDiscriminant`, fitted to 500 draws per population) estimates
them.
"""

import matplotlib.pyplot as plt
import numpy as np
from scipy import stats

from discrim.discriminant import KnownDensityClassifier, LinearDiscriminant

cases = [
    (np.array([1.0, 1.0]), np.array([[1.0, -0.9], [-0.9, 1.0]])),
    (np.array([2.0, 1.0]), np.array([[1.0, 0.09], [0.09, 0.1]])),
]
rng = np.random.default_rng(0)
fig, axes = plt.subplots(1, 2, figsize=(10, 4.6))
for ax, (mu1, sigma) in zip(axes, cases):
    mu2 = -mu1
    a = np.linalg.solve(sigma, mu1 - mu2)
    print(f"mu_1 = {mu1}: a = {np.round(a, 2)}, boundary y = {-a[0] / a[1]:.3f} x")

    # The known-density ML rule on a grid: its regions are the half-planes of a'x > 0.
    rule = KnownDensityClassifier(
        [stats.multivariate_normal(mu1, sigma), stats.multivariate_normal(mu2, sigma)]
    ).fit(np.zeros((2, 2)), [1, 2])
    xx, yy = np.meshgrid(np.linspace(-4, 4, 201), np.linspace(-4, 4, 201))
    grid = np.column_stack([xx.ravel(), yy.ravel()])
    region = rule.predict(grid).reshape(xx.shape)
    score = grid @ a
    off_line = np.abs(score) > 1e-9  # points on the line have f_1 = f_2 (a tie)
    agrees = np.mean((region.ravel() == 1)[off_line] == (score > 0)[off_line])
    print(f"  the rule's regions agree with a'x > 0 on {agrees:.1%} of the grid points off the line")

    # The sample ML rule: class means and the unbiased pooled covariance.
    X = np.vstack([rng.multivariate_normal(mu1, sigma, 500), rng.multivariate_normal(mu2, sigma, 500)])
    y = np.repeat([1, 2], 500)
    lda = LinearDiscriminant().fit(X, y)
    a_hat = np.linalg.solve(lda.covariance_, lda.means_[0] - lda.means_[1])
    print(f"  LDA from 1,000 draws: slope {-a_hat[0] / a_hat[1]:.3f}")

    ax.contourf(xx, yy, region, levels=[0, 1.5, 3], colors=["C0", "C1"], alpha=0.15)
    ax.scatter(*X[y == 1][::4].T, s=5, color="C0", label=r"draws from $\Pi_1$")
    ax.scatter(*X[y == 2][::4].T, s=5, color="C1", label=r"draws from $\Pi_2$")
    line = np.linspace(-4, 4, 2)
    ax.plot(line, -a[0] / a[1] * line, "k-", lw=1.5, label=r"$\mathbf{a}^\top\mathbf{x} = 0$")
    ax.plot(line, -a_hat[0] / a_hat[1] * line, "k--", lw=1, label="LDA's estimate")
    ax.set(xlim=(-4, 4), ylim=(-4, 4), xlabel="x", ylabel="y", aspect="equal")
    ax.set_title(rf"$\mu_1 = ({mu1[0]:g}, {mu1[1]:g})$, $\mathbf{{a}} = ({a[0]:.3g}, {a[1]:.3g})$")
    ax.legend(loc="lower left", fontsize=7)
fig.tight_layout()
plt.show()
