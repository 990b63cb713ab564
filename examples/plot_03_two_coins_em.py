"""
EM on the two-coin example, iteration by iteration
==================================================

Do and Batzoglou's (2008) example of the EM algorithm, with an unknown mixing weight added:
five experiments each pick coin 0 (with probability :math:`\\lambda`) or coin 1 and toss it ten
times; only the numbers of heads
:math:`x = (5, 9, 8, 4, 7)` are seen. From :math:`p_0 = 0.6`, :math:`p_1 = 0.5`,
:math:`\\lambda = 0.5`, each iteration computes the responsibilities
:math:`w_{ik} = P(z_i = k \\mid x_i, \\theta^{(t)})` (the E-step) and then the closed forms

.. math::

    p_k = \\frac{\\sum_i w_{ik} x_i}{\\sum_i 10\\, w_{ik}}, \\qquad
    \\lambda = \\frac{1}{5}\\sum_i w_{i0}.

(In the source tutorial's :math:`h_t` the second binomial term's exponent must read
:math:`10 - x_i`, and the lower bound :math:`g_t` is on :math:`\\log P(x\\mid\\theta)`.)
The log-likelihood never decreases.
"""

import matplotlib.pyplot as plt
import numpy as np
from scipy import stats

from discrim.datasets import coin_tosses
from discrim.distributions import Binomial
from discrim.mixture import FiniteMixture

X = coin_tosses()
em = FiniteMixture(
    Binomial(n_trials=10),
    n_components=2,
    params_init={"prob": [[0.6], [0.5]]},  # p_0, p_1
    weights_init=[0.5, 0.5],  # lambda, 1 - lambda
    tol=1e-8,
    max_iter=200,
    keep_history=True,
).fit(X)

print(f"heads: {X[:, 0].tolist()}")
print(f"{'t':>3} {'p_0':>8} {'p_1':>8} {'lambda':>8} {'log P(x | theta)':>17}")
for t, (snap, mean_ll) in enumerate(zip(em.history_[:8], em.lower_bounds_)):
    total = mean_ll * len(X)  # lower_bounds_ is the mean over the rows
    print(f"{t:>3} {snap['prob'][0, 0]:8.5f} {snap['prob'][1, 0]:8.5f} {snap['weights'][0]:8.5f} {total:17.6f}")
print(f"... converged after {em.n_iter_} iterations: p = {em.params_['prob'].ravel().round(4)},"
      f" lambda = {em.weights_[0]:.4f}")

# %%
# One iteration by hand
# ---------------------
# The first iterate from the closed forms above, to compare with row ``t = 1`` above.
x = X[:, 0]
p0, p1, lam = 0.6, 0.5, 0.5
joint0 = lam * stats.binom.pmf(x, 10, p0)
joint1 = (1 - lam) * stats.binom.pmf(x, 10, p1)
w0 = joint0 / (joint0 + joint1)
w1 = 1 - w0
print("by hand: p_0 =", round(np.sum(w0 * x) / np.sum(10 * w0), 5),
      " p_1 =", round(np.sum(w1 * x) / np.sum(10 * w1), 5), " lambda =", round(w0.sum() / 5, 5))

# %%
# The iterates and the monotone log-likelihood
# --------------------------------------------
history = np.array([[h["prob"][0, 0], h["prob"][1, 0], h["weights"][0]] for h in em.history_])
loglik = em.lower_bounds_ * len(X)
fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
for j, label in enumerate([r"$p_0$", r"$p_1$", r"$\lambda$"]):
    axes[0].plot(history[:, j], marker=".", label=label)
axes[0].set(xlabel="iteration t", ylabel="value", title="EM iterates")
axes[0].legend()
axes[1].plot(loglik, marker=".")
axes[1].set(xlabel="iteration t", ylabel=r"$\log P(x \mid \theta^{(t)})$",
            title="never decreases")
assert np.all(np.diff(loglik) >= -1e-12)
fig.tight_layout()
plt.show()
