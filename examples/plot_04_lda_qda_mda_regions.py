"""
LDA, QDA and MDA decision regions side by side
==============================================

Three plug-in versions of the same ML/Bayes rule on two data sets: the two-feature iris data
(sepal length and width), and a 3 x 3 grid of Gaussian clusters coloured like a checkerboard:
class 0 holds the four corners and the centre, class 1 the four edge midpoints.

- :class:`~discrim.discriminant.LinearDiscriminant`: normal classes with one pooled covariance,
  linear boundaries;
- :class:`~discrim.discriminant.QuadraticDiscriminant`: one covariance per class, quadratic
  boundaries;
- :class:`~discrim.discriminant.MixtureDiscriminant`: a finite mixture per class fitted by EM, so
  a class may occupy several separate regions.

On the grid both classes have their mean at the centre and no correlation, so one normal
density per class cannot tell them apart by location: LDA is at chance and QDA, which can only
give the class of smaller spread a disc around the centre, gets about 0.7 of the training rows
right. Each class is a mixture of separate clusters, and MDA, with up to five Gaussian
components per class chosen by BIC, finds them. On iris, where each class is one cloud, the three
rules agree closely.
"""

import matplotlib.pyplot as plt
import numpy as np

from discrim.datasets import load_dataset
from discrim.discriminant import LinearDiscriminant, MixtureDiscriminant, QuadraticDiscriminant
from discrim.distributions import Gaussian
from discrim.plotting import plot_decision_surface

rng = np.random.default_rng(1)
centres = {0: [(-3, -3), (3, 3), (-3, 3), (3, -3), (0, 0)],  # corners and centre
           1: [(-3, 0), (3, 0), (0, -3), (0, 3)]}  # edge midpoints
X_grid = np.vstack([rng.normal(c, 0.7, size=(80, 2)) for k in (0, 1) for c in centres[k]])
y_grid = np.repeat([0, 1], [80 * len(centres[0]), 80 * len(centres[1])])
X_iris, y_iris = load_dataset("iris-2f")

models = {
    "LDA": LinearDiscriminant(),
    "QDA": QuadraticDiscriminant(),
    "MDA": MixtureDiscriminant(Gaussian("full"), n_components=[1, 2, 3, 4, 5], random_state=0),
}
cases = [
    (X_iris, y_iris, "iris-2f", ("sepal length (cm)", "sepal width (cm)")),
    (X_grid, y_grid, "grid of clusters", ("x0", "x1")),
]
fig, axes = plt.subplots(2, 3, figsize=(12, 8))
for row, (X, y, name, (xlabel, ylabel)) in enumerate(cases):
    for ax, (label, model) in zip(axes[row], models.items()):
        model.fit(X, y)
        plot_decision_surface(model, X, y, ax=ax, resolution=150)
        accuracy = model.score(X, y)
        ax.set_title(f"{name}: {label}\ntraining accuracy {accuracy:.3f}", fontsize=10)
        ax.set(xlabel=xlabel, ylabel=ylabel)
        print(f"{name:>16} {label:>4}: training accuracy {accuracy:.3f}")
fig.tight_layout()
plt.show()

# %%
# The components per class that BIC chose for the grid: five for class 0, four for class 1.
print(models["MDA"].n_components_)
