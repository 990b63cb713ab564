"""
A prototype set explained row by row
====================================

A prototype set models the class probabilities directly (as the technical report of the proset package defines it):

.. math::

    \\hat p_k(\\bx) = \\frac{\\hat p_{0,k} + \\sum_{b,j} \\mathbb 1_k(y_{s_{bj}})\\, w_{bj}\\,
    K_{v_b}(\\bx - \\bx_{s_{bj}})}{1 + \\sum_{b,j} w_{bj}\\, K_{v_b}(\\bx - \\bx_{s_{bj}})},
    \\qquad K_v(\\mathbf z) = \\exp\\Big(-\\tfrac12 \\sum_d (v_d z_d)^2\\Big),

a sparse set of training rows (prototypes) with weights :math:`w_{bj}`, and per batch a vector of
feature weights :math:`v_b` (inverse bandwidths; zero drops a feature). Because the prediction is
this one ratio, each row's probability splits exactly into the marginal frequencies' share and
one contribution per prototype, which is what
:meth:`~discrim.prototype.PrototypeClassifier.explain` reports.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from discrim.datasets import load_benchmark
from discrim.prototype import PrototypeClassifier

pd.set_option("display.width", 120)
pd.set_option("display.max_columns", 8)
X_train, X_test, y_train, y_test = load_benchmark("wine", as_frame=True)
model = PrototypeClassifier(n_batches=2, random_state=0).fit(X_train, y_train)
print(f"test accuracy {model.score(X_test, y_test):.3f}")

# %%
# The model as a table: one row per prototype, with its batch, training row, class, weight
# and, per feature, the feature weight of its batch and the prototype's value. Every feature has
# its pair of columns; one that the batch does not use has weight 0 and value NaN.
table = model.export()
print(f"{len(table)} prototypes")
print(table[["batch", "sample_index", "target", "prototype_weight"]].head())

# %%
# Three test rows, one after another: the predicted probabilities, the marginal share, the
# prototypes with the largest impact :math:`w_{bj} K_{v_b}(\bx - \bx_{s_{bj}})` and the features
# that move the log-probability of the predicted class most.
for row in range(3):
    explanation = model.explain(X_test.iloc[[row]], n_prototypes=3)
    print(f"\n--- test row {row} (true class {y_test[row]}) ---")
    print("probabilities:", explanation.proba.round(3).to_dict())
    print("marginal share:", explanation.marginal.round(4).to_dict(),
          f" familiarity {explanation.familiarity:.1f}")
    print(explanation.prototypes[["batch", "sample_index", "target", "similarity", "contribution"]])
    print(explanation.features.head(3).to_string(index=False))
    # The decomposition is exact: marginal + contributions of all prototypes of class k = p_k.
    full = model.explain(X_test.iloc[[row]], n_prototypes=None)
    share = full.prototypes.groupby("target")["contribution"].sum()
    rebuilt = full.marginal.add(share, fill_value=0.0)
    assert np.allclose(rebuilt[full.proba.index], full.proba)

# %%
# How much each feature moves the predicted class's log-probability, for the first row.
explanation = model.explain(X_test.iloc[[0]], n_prototypes=3)
features = explanation.features.set_index("feature")["contribution"].sort_values()
ax = features.plot.barh(figsize=(6, 4), color=np.where(features > 0, "C2", "C3"))
ax.set(xlabel="contribution to log p(predicted class)", title="test row 0")
plt.tight_layout()
plt.show()
