"""
The ML rule for two univariate normal populations
=================================================

A textbook example of the ML rule: population 1 is :math:`N(1, 1)`, population 2 is
:math:`N(2, 2^2)`. The ML rule allocates :math:`x` to population 1 where :math:`f_1(x) > f_2(x)`,
that is where

.. math:: -\\tfrac34 x^2 + x + 2\\log 2 > 0,

between the roots :math:`x = \\tfrac23 \\pm \\tfrac23\\sqrt{1 + 6\\log 2}`, i.e. on
:math:`(-0.85, 2.18)`: the region of population 1 is bounded and population 2 takes both tails.
With equal variances (:math:`\\sigma_2 = 1`) the quadratic term cancels and the rule is linear:
population 1 where :math:`x < 3/2`.
"""

# %%
# The boundaries in closed form
# -----------------------------
# :func:`~discrim.discriminant.normal_boundaries` solves the ML rule's quadratic inequality for
# two normal populations.
import matplotlib.pyplot as plt
import numpy as np
from scipy import stats

from discrim.discriminant import KnownDensityClassifier, normal_boundaries

unequal = normal_boundaries(1, 1, 2, 2)
equal = normal_boundaries(1, 1, 2, 1)
print("sigma_2 = 2: roots", np.round(unequal.points, 4), "population 1 on", unequal.region)
print("sigma_2 = 1: root ", np.round(equal.points, 4), "population 1 on", equal.region)

# %%
# The same rule as an estimator
# -----------------------------
# :class:`~discrim.discriminant.KnownDensityClassifier` takes the known densities (any frozen
# scipy distribution) and applies the ML rule (argmax of the likelihood); ``fit`` only records
# the class labels. The observation :math:`x = 0` goes to population 1.
rule = KnownDensityClassifier([stats.norm(1, 1), stats.norm(2, 2)]).fit([[0.0], [1.0]], [1, 2])
print("x = 0 is allocated to population", rule.predict([[0.0]])[0])
grid = np.linspace(-4, 7, 1101)
labels = rule.predict(grid[:, None])
changes = grid[1:][np.diff(labels) != 0]
print("the predicted label changes at", np.round(changes, 2))

# %%
# The figure
# ----------
fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
for ax, sigma2, result in [(axes[0], 2.0, unequal), (axes[1], 1.0, equal)]:
    f1 = stats.norm(1, 1).pdf(grid)
    f2 = stats.norm(2, sigma2).pdf(grid)
    ax.plot(grid, f1, label=r"$f_1$: $N(1, 1)$")
    ax.plot(grid, f2, label=rf"$f_2$: $N(2, {sigma2:g}^2)$")
    for lo, hi in result.region:
        ax.axvspan(max(lo, grid[0]), min(hi, grid[-1]), color="C0", alpha=0.12)
    for point in result.points:
        ax.axvline(point, color="k", lw=0.8, ls="--")
        ax.annotate(f"{point:.2f}", (point, 0.38), ha="center", fontsize=9)
    ax.set_title(rf"$\sigma_2 = {sigma2:g}$: population 1 on the shaded region")
    ax.set_xlabel("x")
    ax.legend(loc="upper right", fontsize=8)
axes[0].set_ylabel("density")
fig.tight_layout()
plt.show()
