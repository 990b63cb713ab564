"""Component families: log-densities, additive sufficient statistics and weighted MLEs for all K components."""

from discrim.distributions import _constraints as constraints
from discrim.distributions._base import ComponentFamily, Params, Stats
from discrim.distributions.binomial import Bernoulli, Binomial, BinomialParams, BinomialStats
from discrim.distributions.categorical import Categorical, CategoricalParams, CategoricalStats
from discrim.distributions.exponential import Exponential, ExponentialParams, ExponentialStats
from discrim.distributions.fixed import Fixed
from discrim.distributions.gamma import Gamma, GammaParams, GammaStats
from discrim.distributions._gaussian_prior import GaussianPrior
from discrim.distributions.gaussian import Gaussian, GaussianParams, GaussianStats
from discrim.distributions.lognormal import LogNormal, LogNormalParams, LogNormalStats
from discrim.distributions.poisson import Poisson, PoissonParams, PoissonStats
from discrim.distributions.product import Product, ProductParams, ProductStats
from discrim.distributions.student_t import StudentT, StudentTParams, StudentTStats

#: Every family class: the command line offers their ``cli_names``.
FAMILY_CLASSES = (Gaussian, Poisson, Binomial, Bernoulli, Categorical, StudentT, Gamma, Exponential, LogNormal)

#: One instance of each of the first families (and of scikit-learn's four Gaussian covariance
#: types); the shared tests parametrize over it. StudentT, Gamma, Exponential, LogNormal, Product,
#: Fixed and mclust's other covariance models have test files of their own (tests/distributions,
#: tests/mixture/test_covariance_models.py).
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
    "Exponential",
    "ExponentialParams",
    "ExponentialStats",
    "Fixed",
    "Gamma",
    "GammaParams",
    "GammaStats",
    "Gaussian",
    "GaussianParams",
    "GaussianPrior",
    "GaussianStats",
    "LogNormal",
    "LogNormalParams",
    "LogNormalStats",
    "Params",
    "Poisson",
    "PoissonParams",
    "PoissonStats",
    "Product",
    "ProductParams",
    "ProductStats",
    "Stats",
    "StudentT",
    "StudentTParams",
    "StudentTStats",
    "constraints",
]
