"""
LDA, QDA and MDA decision regions side by side
==============================================

Three plug-in versions of the same ML/Bayes rule on two data sets: the two-feature iris data
(sepal length and width), and a two-class XOR whose classes are each made of two Gaussian
clusters in opposite corners.

- :class:`~discrim.discriminant.LinearDiscriminant`: normal classes with one pooled covariance,
  linear boundaries;
- :class:`~discrim.discriminant.QuadraticDiscriminant`: one covariance per class, quadratic
  boundaries;
- :class:`~discrim.discriminant.MixtureDiscriminant`: a finite mixture per class fitted by EM, so
  a class may occupy several separate regions.
"""

import matplotlib.pyplot as plt
import numpy as np

from discrim.datasets import load_dataset
from discrim.discriminant import LinearDiscriminant, MixtureDiscriminant, QuadraticDiscriminant
from discrim.distributions import Gaussian
from discrim.plotting import plot_decision_surface

rng = np.random.default_rng(1)
centres = {0: [(-2, -2), (2, 2)], 1: [(-2, 2), (2, -2)]}  # an XOR of clusters
X_xor = np.vstack([rng.normal(c, 0.8, size=(100, 2)) for k in (0, 1) for c in centres[k]])
y_xor = np.repeat([0, 1], 200)
X_iris, y_iris = load_dataset("iris-2f")

models = {
    "LDA": LinearDiscriminant(),
    "QDA": QuadraticDiscriminant(),
    "MDA (2 per class)": MixtureDiscriminant(Gaussian("full"), n_components=2, random_state=0),
}
fig, axes = plt.subplots(2, 3, figsize=(12, 7.5))
for row, (X, y, name) in enumerate([(X_iris, y_iris, "iris-2f"), (X_xor, y_xor, "XOR of clusters")]):
    for ax, (label, model) in zip(axes[row], models.items()):
        model.fit(X, y)
        plot_decision_surface(model, X, y, ax=ax, resolution=150)
        accuracy = model.score(X, y)
        ax.set_title(f"{name}: {label}, training accuracy {accuracy:.2f}", fontsize=9)
        print(f"{name:>16} {label:>18}: training accuracy {accuracy:.3f}")
fig.tight_layout()
plt.show()
