"""
A mixture on mixed data types: the Product family
=================================================

A customer table with a continuous feature (monthly spend, in log units), a count (visits per
month) and a category (the preferred channel). Given the segment :math:`k`, the three columns are
modelled as independent: a normal, a Poisson and a categorical distribution,

.. math:: f_k(\\mathbf x) = \\phi(x_1; \\mu_k, \\sigma_k^2)\\;
          \\mathrm{Poisson}(x_2; \\lambda_k)\\; \\pi_{k, x_3},

and :class:`~discrim.distributions.Product` puts the three families on their columns. EM on the
product is one E-step (the parts' log-densities add up) and one M-step per part.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from discrim.distributions import Categorical, Gaussian, Poisson, Product
from discrim.mixture import FiniteMixture

rng = np.random.default_rng(0)
n = [300, 200]  # two segments
channels = ["shop", "web", "phone"]
frame = pd.DataFrame({
    "log_spend": np.concatenate([rng.normal(3.0, 0.4, n[0]), rng.normal(4.2, 0.5, n[1])]),
    "visits": np.concatenate([rng.poisson(2.0, n[0]), rng.poisson(7.0, n[1])]),
    "channel": np.concatenate([rng.choice(channels, n[0], p=[0.6, 0.3, 0.1]),
                               rng.choice(channels, n[1], p=[0.1, 0.7, 0.2])]),
})
segment = np.repeat([0, 1], n)
print(frame.head())

family = Product([
    ("spend", Gaussian("diag"), [0]),
    ("visits", Poisson(), [1]),
    ("channel", Categorical(categories=[channels]), [2]),
])
X = family.encode(frame.to_numpy(dtype=object))  # the channel becomes codes 0, 1, 2
mixture = FiniteMixture(family, n_components=2, n_init=3, random_state=0).fit(X)

# %%
# The fitted parameters of each part, by qualified name ``part__parameter``.
for name, value in mixture.params_.items():
    print(name, np.round(np.squeeze(value), 3).tolist())
print("weights", mixture.weights_.round(3))
labels = mixture.predict(X)
agreement = max(np.mean(labels == segment), np.mean(labels != segment))  # up to relabelling
print(f"segments recovered for {agreement:.1%} of the customers; BIC = {mixture.bic(X):.1f}")

# %%
# The parts compared with the data, per fitted segment.
fig, axes = plt.subplots(1, 3, figsize=(11, 3.4))
for k in range(2):
    rows = labels == k
    axes[0].hist(frame.log_spend[rows], bins=30, alpha=0.5, density=True, label=f"segment {k}")
    axes[1].hist(frame.visits[rows], bins=np.arange(0, 20) - 0.5, alpha=0.5, density=True)
    axes[2].bar(np.arange(3) + 0.4 * k - 0.2, mixture.params_["channel__probs"][k, 0], width=0.4)
axes[0].set(title="log spend (Gaussian part)")
axes[1].set(title="visits (Poisson part)")
axes[2].set(title="channel (Categorical part)", xticks=range(3), xticklabels=channels)
axes[0].legend()
fig.tight_layout()
plt.show()
