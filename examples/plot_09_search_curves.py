"""
Choosing the penalty and the number of batches: the search curves
=================================================================

:class:`~discrim.model_selection.PrototypeClassifierCV` chooses the feature penalty
``alpha_feature`` (:math:`\\lambda_v` of the proset report) and the number of batches :math:`B`
by stratified cross-validation with the proset report's "1-SE" rule. The threshold is the best
mean log-loss over the folds plus the standard deviation of that setting's fold losses (ddof=1;
a standard deviation, not a standard error). Among the settings whose mean is at most the
threshold, it keeps the sparsest: the largest penalty, then, for that penalty, the fewest
batches. One fit with the largest batch count scores every
smaller count (the batches are added greedily and never refitted), and the fits along the penalty
path start warm from each other.
"""

import matplotlib.pyplot as plt

from discrim.datasets import load_benchmark
from discrim.model_selection import PrototypeClassifierCV
from discrim.plotting import plot_search

X_train, X_test, y_train, y_test = load_benchmark("wine")
search = PrototypeClassifierCV(max_batches=5, cv=5, n_jobs=2, random_state=0).fit(X_train, y_train)
print("chosen:", search.best_params_)
print(f"1-SE threshold on the cross-validated log-loss {search.threshold_:.4f};"
      f" test accuracy {search.score(X_test, y_test):.3f}")

# %%
# The cross-validated log-loss against the number of batches, one curve per penalty, with the
# 1-SE threshold (best mean plus one standard deviation over the folds) and the chosen setting.
ax = plot_search(search)
ax.figure.set_size_inches(7, 4.5)
plt.show()
