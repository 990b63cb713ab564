"""Component families: log-densities, additive sufficient statistics and weighted MLEs for all K components."""

from discrim.distributions import _constraints as constraints
from discrim.distributions._base import ComponentFamily, Params, Stats
from discrim.distributions.binomial import Bernoulli, Binomial, BinomialParams, BinomialStats
from discrim.distributions.categorical import Categorical, CategoricalParams, CategoricalStats
from discrim.distributions.gaussian import Gaussian, GaussianParams, GaussianStats
from discrim.distributions.poisson import Poisson, PoissonParams, PoissonStats

#: Every family class: the command line offers their ``cli_names``.
FAMILY_CLASSES = (Gaussian, Poisson, Binomial, Bernoulli, Categorical)

#: One instance of every family (and every Gaussian covariance type); tests parametrize over it.
FAMILIES = [
    Binomial(n_trials=10),
    Bernoulli(),
    Poisson(),
    Categorical(n_categories=3),
    Gaussian(covariance_type="full"),
    Gaussian(covariance_type="diag"),
    Gaussian(covariance_type="tied"),
    Gaussian(covariance_type="spherical"),
]

__all__ = [
    "FAMILIES",
    "FAMILY_CLASSES",
    "Bernoulli",
    "Binomial",
    "BinomialParams",
    "BinomialStats",
    "Categorical",
    "CategoricalParams",
    "CategoricalStats",
    "ComponentFamily",
    "Gaussian",
    "GaussianParams",
    "GaussianStats",
    "Params",
    "Poisson",
    "PoissonParams",
    "PoissonStats",
    "Stats",
    "constraints",
]
