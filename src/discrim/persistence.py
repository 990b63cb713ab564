"""Model files: fitted estimators saved and loaded with skops.io, checked so that loading runs no code."""

from __future__ import annotations

import dataclasses
import functools
import io
import json
import os
import re
import sys
import zipfile
from pathlib import Path

from sklearn.base import BaseEstimator
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from discrim import __version__
from discrim.utils import _fitted_state as state
from discrim.utils._files import atomic_output, not_a_file

__all__ = ["ModelFileError", "load_model", "save_model"]


def _import_skops_io():
    """``skops.io``, imported without importing torch or dask on the way.

    skops lists scikit-learn's estimators when it is imported (``all_estimators``), and the walk
    over scikit-learn's packages imports each one it descends into, array-api-compat's torch and
    dask wrappers included: they import torch and dask, 2-5 s before any model could be loaded.
    Those wrappers hold no estimator, so they are hidden for the walk (a None entry in
    ``sys.modules`` makes their import fail, which the walk skips) and visible again after it.
    """
    hidden = [f"sklearn.externals.array_api_compat.{backend}" for backend in ("torch", "dask", "cupy")]
    hidden = [name for name in hidden if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None
    try:
        import skops.io
    finally:
        for name in hidden:
            if sys.modules.get(name, 0) is None:
                del sys.modules[name]
    return skops.io


sio = _import_skops_io()

# Types rebuilt by skops's ObjectNode (``cls.__new__(cls)``, then ``__setstate__`` or an update
# of ``__dict__``: no ``__init__`` runs and the state is data). The reason for each is the model
# that contains it. A type belongs here only if neither its ``__setstate__`` nor its prediction
# methods execute, import or open anything named by its attributes; tests check that each is a
# class whose ``__setstate__`` is scikit-learn's BaseEstimator's or none (attributes only).
TRUSTED_OBJECT_TYPES = {
    # discrim's estimators (each is a top-level model, or a step of the CLI's Pipeline).
    "discrim.discriminant.gaussian.LinearDiscriminant": "discrim fit --model lda",
    "discrim.discriminant.gaussian.QuadraticDiscriminant": "discrim fit --model qda",
    "discrim.discriminant.mixture.MixtureDiscriminant": "discrim fit --model mda",
    "discrim.discriminant.known.KnownDensityClassifier": "the known-density rule (see the scipy entries)",
    "discrim.mixture.finite_mixture.FiniteMixture": "a model of its own and each class density of MDA",
    "discrim.prototype.classifier.PrototypeClassifier": "discrim fit --model proset",
    "discrim.model_selection.prototype_cv.PrototypeClassifierCV": "discrim fit --model proset-cv, discrim tune",
    # The prototype model's fitted batches.
    "discrim.prototype._prototype_set.PrototypeBatch": "one batch of a fitted prototype set",
    # Component families (FiniteMixture and MixtureDiscriminant parameters) and their fitted
    # parameters (the mixtures' params_).
    "discrim.distributions.gaussian.Gaussian": "family",
    "discrim.distributions.gaussian.GaussianParams": "fitted parameters",
    "discrim.distributions._gaussian_prior.GaussianPrior": "a Gaussian family's prior (and a mixture's family_)",
    "discrim.mixture._noise.NoiseRegion": "the region of a mixture's noise component (FiniteMixture(noise=True))",
    "discrim.distributions.binomial.Binomial": "family",
    "discrim.distributions.binomial.Bernoulli": "family",
    "discrim.distributions.binomial.BinomialParams": "fitted parameters",
    "discrim.distributions.poisson.Poisson": "family",
    "discrim.distributions.poisson.PoissonParams": "fitted parameters",
    "discrim.distributions.categorical.Categorical": "family",
    "discrim.distributions.categorical.CategoricalParams": "fitted parameters",
    "discrim.distributions.student_t.StudentT": "family",
    "discrim.distributions.student_t.StudentTParams": "fitted parameters",
    "discrim.distributions.gamma.Gamma": "family",
    "discrim.distributions.gamma.GammaParams": "fitted parameters",
    "discrim.distributions.exponential.Exponential": "family",
    "discrim.distributions.exponential.ExponentialParams": "fitted parameters",
    "discrim.distributions.lognormal.LogNormal": "family",
    "discrim.distributions.lognormal.LogNormalParams": "fitted parameters",
    "discrim.distributions.product.Product": "family (a family per group of columns)",
    "discrim.distributions.product.ProductParams": "fitted parameters (its parts', by qualified name)",
    "discrim.distributions.fixed.Fixed": "family (a family with fixed parameters)",
    # The CLI saves its models behind a StandardScaler in a Pipeline.
    "sklearn.pipeline.Pipeline": "discrim fit, discrim tune (scaling and model in one file)",
    "sklearn.preprocessing._data.StandardScaler": "discrim fit, discrim tune (the scaling step)",
    # Cross-validation splitters a PrototypeClassifierCV may keep as its ``cv`` parameter.
    "sklearn.model_selection._split.StratifiedKFold": "PrototypeClassifierCV(cv=StratifiedKFold(...))",
    "sklearn.model_selection._split.KFold": "PrototypeClassifierCV(cv=KFold(...))",
    # scikit-learn's covariance estimators, kept unfitted as LDA/QDA's ``covariance_estimator``
    # parameter (plain estimators: skops sets their attributes; nothing of theirs runs on load).
    **{f"sklearn.covariance.{module}.{name}": "LinearDiscriminant / QuadraticDiscriminant covariance_estimator"
       for module, name in (("_empirical_covariance", "EmpiricalCovariance"), ("_shrunk_covariance", "LedoitWolf"),
                            ("_shrunk_covariance", "OAS"), ("_shrunk_covariance", "ShrunkCovariance"),
                            ("_robust_covariance", "MinCovDet"), ("_graph_lasso", "GraphicalLasso"),
                            ("_graph_lasso", "GraphicalLassoCV"))},
    # KnownDensityClassifier's documented densities ``multivariate_normal(mean, cov)``: rebuilt
    # by attribute update only (no __setstate__) and evaluated by linear algebra on their arrays.
    # The univariate scipy.stats distributions are refused: their __setstate__ executes a code
    # template kept in their state (rv_generic._attach_argparser_methods), which a file controls.
    "scipy.stats._multivariate.multivariate_normal_frozen": "KnownDensityClassifier density",
    "scipy.stats._multivariate.multivariate_normal_gen": "its distribution object",
    "scipy.stats._multivariate._PSD": "its covariance factorisation",
    "scipy.stats._covariance.CovViaPSD": "its covariance object",
}

# numpy scalar types: the class of a saved numpy scalar (skops calls ``T(array)``) and of
# dtype-valued parameters (``dtype=np.float32``, saved as the type itself).
_NUMPY_SCALAR_TYPES = tuple(
    f"numpy.{name}"
    for name in ("float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint64", "uint32", "uint16",
                 "uint8", "bool_", "bool", "str_", "bytes_", "complex128", "complex64", "longdouble")
)

# Types of the other nodes, by loader. skops rebuilds each of them itself, calling nothing
# named by the file beyond the type: the containers build themselves from their items, arrays
# are read by np.load(allow_pickle=False), and a RandomState is set from its saved state.
_TRUSTED_BY_LOADER = {
    "DictNode": {"builtins.dict"},
    "ListNode": {"builtins.list"},
    "TupleNode": {"builtins.tuple"},
    "JsonNode": {"builtins.str"},  # every JSON primitive (str, int, float, bool, None)
    "NdArrayNode": {"numpy.ndarray", *_NUMPY_SCALAR_TYPES},
    "DTypeNode": {"numpy.dtype"},
    # Dict keys are rebuilt by calling their saved type on the key's text: primitive types only.
    "TypeNode": {"builtins.str", "builtins.int", "builtins.float", "builtins.bool", *_NUMPY_SCALAR_TYPES},
    "RandomStateNode": {"numpy.random.mtrand.RandomState"},
    "ObjectNode": set(TRUSTED_OBJECT_TYPES),
}

# Nesting of schema.json (dicts and lists) allowed. discrim's deepest files nest about 21
# levels; skops rebuilds the tree recursively, so a bound far below Python's recursion limit
# keeps a crafted file from reaching RecursionError.
_MAX_DEPTH = 100

# schema.json of discrim's largest models is a few hundred kB (arrays are separate .npy files).
_MAX_SCHEMA_BYTES = 64 * 2**20

# skops reads each member whole into memory; the sizes an archive declares bound what zipfile
# decompresses, so a small file cannot expand into more memory than this.
_MAX_ARCHIVE_BYTES = 4 * 2**30

# The member beside skops's schema.json that records the discrim release that wrote the file,
# ``{"discrim_version": "0.1.0"}``: skops reads only the members its schema names, so it loads the
# file as before. load_model refuses a file of a newer major.minor release (the versioning policy).
_VERSION_MEMBER = "discrim.json"
_MAX_VERSION_BYTES = 2**16
# Files written before they recorded their version come from this release (none was published earlier).
_UNRECORDED_VERSION = "0.1.0"


@functools.cache
def _skops_protocol():
    """The skops protocol this installation writes (read from a file it writes, not a private name)."""
    with zipfile.ZipFile(io.BytesIO(sio.dumps([]))) as archive:
        return json.loads(archive.read("schema.json"))["protocol"]


class ModelFileError(ValueError):
    """A model file that cannot be read: missing, unreadable, corrupted or not a discrim model.

    Examples
    --------
    >>> from discrim.persistence import ModelFileError
    >>> issubclass(ModelFileError, ValueError)
    True
    """


def _with_device_names(estimator):
    """The estimator with every ``torch.device`` parameter as its name ("cuda:1"), which it means too:
    a model file holds no torch objects (their loader could run code), so ``device=torch.device("cpu")``
    could not be saved. The caller's estimator is left as it is."""
    import copy

    devices = {name: value for name, value in estimator.get_params(deep=True).items()
               if type(value).__module__ == "torch" and type(value).__name__ == "device"}
    if not devices:
        return estimator
    named = copy.deepcopy(estimator)
    named.set_params(**{name: str(value) for name, value in devices.items()})
    return named


def _pandas_parameter(estimator):
    """Name the first parameter of an estimator in ``estimator`` (itself or one it holds) that is a
    pandas object, with the fix; None if none is.

    A model file holds no pandas objects (skops rebuilds them by calling constructors named by
    the file), and ``priors=y.value_counts(normalize=True)``, which the estimators read by label,
    made skops fail with "no default __reduce__ due to non-trivial __cinit__", naming neither the
    parameter nor the fix.

    Parameters
    ----------
    estimator : object
        The estimator about to be saved.

    Returns
    -------
    problem : str or None
        The rest of the refusal: which parameter, and how to save the model.
    """
    for held in _estimators_held_first(estimator):
        for name, value in held.get_params(deep=False).items():
            # in the parameter itself, or within it: a dict, a list, a family (Fixed's params)
            stack, seen = [(value, name)], set()
            while stack:
                value, where = stack.pop()
                if id(value) in seen or isinstance(value, BaseEstimator):  # estimators: checked on their own
                    continue
                seen.add(id(value))
                if type(value).__module__.split(".")[0] == "pandas":
                    example = ("; for priors, set_params(priors=list(model.priors_)) gives the fitted ones, in the "
                               "order of classes_" if where == "priors" and hasattr(held, "priors_") else "")
                    kind = f"a pandas {type(value).__name__}"
                    what = f"is {kind}" if where == name else f"holds {kind} ({where})"
                    return (f"the parameter {name!r} of its {type(held).__name__} {what}, which model files do not "
                            "hold: set it to plain values with set_params before saving (a list or array in the "
                            "order the parameter reads them, or a dict where it takes one; the fitted model does "
                            f"not change){example}.")
                if isinstance(value, dict):
                    stack.extend((v, f"{where}[{k!r}]") for k, v in value.items())
                elif isinstance(value, (list, tuple)):
                    stack.extend((v, f"{where}[{i}]") for i, v in enumerate(value))
                elif hasattr(value, "__dict__") and not isinstance(value, type):
                    stack.extend((v, f"{where}.{k}") for k, v in vars(value).items())
    return None


def save_model(estimator: BaseEstimator, path: str | os.PathLike[str]) -> None:
    """Save a fitted estimator to ``path`` with skops.io, atomically.

    The file is written to a temporary name in the same folder and renamed at the end, so a
    failure never leaves a half-written model file behind. The content is checked as
    :func:`load_model` checks it (its types and its fitted state), so a model that could not be
    loaded is never written. The file records the version of discrim that wrote it
    (``discrim.__version__``, in a ``discrim.json`` member beside skops's ``schema.json``), by
    which :func:`load_model` refuses files of newer releases.

    Parameters
    ----------
    estimator : object
        A fitted discrim estimator, or a scikit-learn Pipeline of a StandardScaler and one.
    path : str or path-like
        Destination; conventionally ending in ``.skops``.

    Raises
    ------
    ModelFileError
        If the folder does not exist, the estimator holds objects that discrim's model files
        do not allow (for example univariate ``scipy.stats`` distributions, or a parameter given
        as a pandas Series, named with the fix), or its fitted state is inconsistent (see
        :func:`load_model`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from discrim.discriminant import LinearDiscriminant
    >>> from discrim.persistence import load_model, save_model
    >>> lda = LinearDiscriminant().fit([[0.0], [1.0], [3.0], [4.0]], [0, 0, 1, 1])
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "lda.skops"
    >>> save_model(lda, path)
    >>> load_model(path).predict([[0.2], [3.9]]).tolist()
    [0, 1]
    """
    path = Path(path)
    if not path.parent.exists():
        raise ModelFileError(f"cannot save model: folder {str(path.parent)!r} does not exist.")
    if path.is_dir() or not path.name:
        raise ModelFileError(f"cannot save model: {str(path)!r} is a folder; give a file name such as model.skops.")
    if not isinstance(estimator, BaseEstimator):
        raise ModelFileError(f"cannot save model: a {type(estimator).__name__} is not an estimator; discrim's model "
                             "files hold a fitted estimator or Pipeline.")
    pandas_parameter = _pandas_parameter(estimator)
    if pandas_parameter is not None:
        raise ModelFileError(f"cannot save model: {pandas_parameter}")
    try:
        data = sio.dumps(_with_device_names(estimator))
    except Exception as exc:  # skops raises TypeError and its own types for unsupported objects
        raise ModelFileError(f"cannot save model: skops cannot save it: {_one_line(exc)}") from None
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        schema = json.loads(archive.read("schema.json"))
        problems, _ = _schema_problems(schema, set(archive.namelist()))
    if problems:
        raise ModelFileError(f"cannot save model: {problems[0]}{_save_hint(problems)}.")
    inconsistent = _inconsistent_state(estimator)
    if inconsistent is not None:
        raise ModelFileError(f"cannot save model: {inconsistent}; load_model would refuse it.")
    data = _with_version(data)
    try:
        with atomic_output(path) as tmp:
            Path(tmp).write_bytes(data)
    except OSError as exc:  # a read-only folder, a full disk: named by the user's path, not the temporary one
        raise ModelFileError(f"cannot save model to {str(path)!r}: {exc.strerror or type(exc).__name__}.") from None


def load_model(path: str | os.PathLike[str]) -> BaseEstimator:
    """Load an estimator saved by :func:`save_model`; loading runs no code from the file.

    Every node of the file is checked against discrim's exact list of trusted types and skops
    loaders (see Notes) before skops imports or calls anything; the estimator is then rebuilt
    by skops.io, and its fitted state checked before it is returned.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    estimator : object
        A scikit-learn estimator (a discrim estimator, or a Pipeline holding one).

    Raises
    ------
    ModelFileError
        If the file is missing, unreadable, corrupted, malformed, of a newer discrim release,
        holds a type or loader outside the trusted ones, holds data rather than an estimator
        (what ``skops.io.dump`` writes for a dict, list or array), or an estimator whose fitted
        state is inconsistent (see Notes). Always this one exception, with a one-line message.

    Notes
    -----
    A skops file is a zip archive whose ``schema.json`` describes a tree of nodes; each node names a
    *loader* (how skops rebuilds it) and a type (``module.Class``). Whoever writes the file chooses
    both, so this function checks the whole tree against exact lists of types, one per loader,
    *before* skops imports or calls anything, and refuses the file unless every node is one of:

    * a plain container (dict, list, tuple), a JSON primitive, or a numpy array, scalar or dtype;
    * an object of a type listed in ``discrim.persistence.TRUSTED_OBJECT_TYPES`` (with the reason
      each is there), rebuilt without calling its ``__init__`` (skops's ObjectNode:
      ``cls.__new__(cls)``, then ``__setstate__`` or an update of ``__dict__``), whose
      reconstruction and prediction methods read data only;
    * a numpy ``RandomState`` (``random_state`` parameters), rebuilt from its saved state.

    A file records the discrim version that wrote it (``discrim.json``, see :func:`save_model`); a
    file whose major.minor version is newer than this discrim's is refused before anything else
    is read from it, since it may hold state this release would load wrongly. Files of this or an
    older release load, and so do files with no record, written by discrim 0.1.0 before the
    version was recorded.

    Loaders that call or return functions (FunctionNode, MethodNode, PartialNode, OperatorFuncNode),
    call a constructor named by the file (ReduceNode, ConstructorFromReduceNode and its relatives) or
    read other formats (sparse matrices, bytes) are never accepted, and neither are module prefixes:
    a type is trusted by its exact name or not at all. :func:`save_model` applies the same check
    to the file it is about to write, so it never writes a model that :func:`load_model` refuses.

    skops sets the estimators' attributes from the file unchecked, so an edited or damaged file
    could predict silently wrong or fail deep inside numpy. Every fitted estimator of the model
    (the Pipeline's steps, a search's ``best_estimator_``, a discriminant's class mixtures, each
    before the estimator that holds it) then checks its fitted state: every fitted attribute
    present, arrays of their dtype and of shapes that agree with ``n_features_in_`` and the number
    of classes, components, prototypes and active features, finite values, priors, marginals
    and mixing weights non-negative (marginals positive) and summing to 1, positive prototype and
    feature weights, active features that are columns of X and prototype targets that are
    classes, mixture parameters within their family's constraints. These checks read shapes and
    a few sums, nothing of the size of the training data.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from discrim.persistence import ModelFileError, load_model
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "not-a-model.skops"
    >>> _ = path.write_bytes(b"not a zip archive")
    >>> try:
    ...     load_model(path)
    ... except ModelFileError as error:
    ...     print("refused")
    refused
    """
    path = Path(path)
    if not path.is_file():
        raise ModelFileError(f"model file {str(path)!r} {not_a_file(path, 'a model file')}.")
    try:
        # Read once: the bytes checked are the bytes loaded, even if the file changes meanwhile.
        data = path.read_bytes()
    except OSError as exc:
        raise ModelFileError(f"model file {str(path)!r} cannot be read: {_one_line(exc)}") from None
    schema, members = _read_schema(data, f"model file {str(path)!r}")
    # before the types: a newer release may save types this one does not know, and the fix is the upgrade
    _check_written_by(data, members, f"model file {str(path)!r}")
    problems, types = _schema_problems(schema, members)
    if problems:
        raise ModelFileError(
            f"model file {str(path)!r} is refused, it is not a model discrim trusts: {problems[0]}"
            f"{f' (and {len(problems) - 1} more)' if len(problems) > 1 else ''}. Load it with "
            "skops.io.load only after reviewing its content."
        )
    try:
        model = sio.loads(data, trusted=sorted(types))
    except Exception as exc:  # the tree was checked; what remains is damaged content
        raise ModelFileError(f"model file {str(path)!r} could not be loaded: {_one_line(exc)}") from None
    if not isinstance(model, BaseEstimator):  # data (skops.io.dump of a dict, list or array), as save_model refuses
        raise ModelFileError(f"model file {str(path)!r} holds a {type(model).__name__}, not a model; give a file "
                             "written by save_model, `discrim fit --output` or `discrim tune --output`.")
    missing = _missing_parameter(model)
    if missing is not None:
        raise ModelFileError(f"model file {str(path)!r} is damaged: {missing}.")
    inconsistent = _inconsistent_state(model)
    if inconsistent is not None:
        raise ModelFileError(f"model file {str(path)!r} is damaged: {inconsistent}; fit and save the model again.")
    return model


def _missing_parameter(model):
    """The first estimator (or dataclass) of a loaded model that lacks a parameter (or field).

    skops sets attributes from the file without calling ``__init__``, so a damaged file can
    leave out a parameter that every method reads; this finds it before any method runs.

    Parameters
    ----------
    model : object
        What skops loaded.

    Returns
    -------
    missing : str or None
        A sentence naming the estimator and the parameter.
    """
    from sklearn.base import BaseEstimator

    seen, stack = set(), [model]
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, BaseEstimator) or (dataclasses.is_dataclass(value) and not isinstance(value, type)):
            state = vars(value)
            if dataclasses.is_dataclass(value):
                kind, names = "field", [f.name for f in dataclasses.fields(value)]
            else:
                kind, names = "parameter", type(value)._get_param_names()
            for name in names:
                if name not in state:
                    return f"its {type(value).__name__} lacks the {kind} {name!r}"
            stack.extend(state.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
    return None


def _with_version(data):
    """A skops file (bytes) with the member that records this discrim's version added."""
    buffer = io.BytesIO(data)
    with zipfile.ZipFile(buffer, "a") as archive:
        archive.writestr(_VERSION_MEMBER, json.dumps({"discrim_version": __version__}))
    return buffer.getvalue()


def _release(version):
    """(major, minor) of a version string such as "0.1.0" or "1.2.0.dev3", or None."""
    match = re.match(r"(\d+)\.(\d+)(?!\d)", version) if isinstance(version, str) else None
    return None if match is None else (int(match[1]), int(match[2]))


def _check_written_by(data, members, where):
    """Refuse a model file written by a newer major.minor release of discrim than this one.

    Parameters
    ----------
    data : bytes
        The whole file (a zip archive that :func:`_read_schema` has read).
    members : set of str
        Names of the archive's members.
    where : str
        The file, as messages name it.

    Raises
    ------
    ModelFileError
        If the file is of a newer release, or its version record is unreadable.
    """
    if _VERSION_MEMBER not in members:  # written before files recorded their version
        version = _UNRECORDED_VERSION
    else:
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                info = archive.getinfo(_VERSION_MEMBER)
                if info.file_size > _MAX_VERSION_BYTES:
                    raise ValueError(f"it has {info.file_size} bytes")
                record = json.loads(archive.read(info))
            version = record.get("discrim_version") if isinstance(record, dict) else None
            if _release(version) is None:
                raise ValueError(f"discrim_version is {_shown(version)}")
        except Exception as exc:  # zipfile, zlib, JSON, a record of another shape
            raise ModelFileError(f"{where} is damaged: its {_VERSION_MEMBER} does not record the discrim version "
                                 f"that wrote it ({_one_line(exc)}).") from None
    written = _release(version)
    if written > _release(__version__):
        shown = version if len(version) <= 40 and version.isprintable() else f"{written[0]}.{written[1]}"
        raise ModelFileError(
            f"{where} was written by discrim {shown}, newer than this discrim {__version__}, "
            f"and may hold what this version would load wrongly: upgrade discrim to {written[0]}.{written[1]} or "
            "later (pip install . in a checkout of that release: discrim is not on PyPI) to load it."
        )


def _inconsistent_state(model):
    """The first estimator of a model whose fitted state is inconsistent, and how; None if none is.

    skops sets attributes from the file without checking them, so an edited or damaged file can
    hold arrays that predict silently wrong (a feature weight per column where one column is
    active) or fail deep in numpy. Every fitted estimator in the model checks its own state
    (``_check_loaded_state`` of discrim's estimators, :data:`_SKLEARN_STATE_CHECKS` for the
    scikit-learn types model files hold), each after the estimators it holds, so that a check may
    rely on theirs (a search's ``best_estimator_``, a discriminant's mixtures, a Pipeline's steps).

    Parameters
    ----------
    model : object
        What skops loaded (or the estimator about to be saved).

    Returns
    -------
    problem : str or None
        A clause naming the estimator and its attribute.
    """
    for estimator in _estimators_held_first(model):
        check = _SKLEARN_STATE_CHECKS.get(type(estimator)) or getattr(type(estimator), "_check_loaded_state", None)
        if check is None or not (isinstance(estimator, Pipeline) or state.is_fitted(estimator)):
            continue  # an unfitted estimator (a parameter such as covariance_estimator) has no state to check
        try:
            check(estimator)
        except state.FittedStateError as exc:
            return f"its {type(estimator).__name__}.{_one_line(exc)}"
        except Exception as exc:  # a check that met values of a kind it does not expect
            return (f"its {type(estimator).__name__} has an inconsistent fitted state "
                    f"({type(exc).__name__}: {_one_line(exc)})")
    return None


def _estimators_held_first(model):
    """Every estimator in ``model`` (in containers and other estimators' attributes), each after those it holds."""
    order, seen, stack = [], set(), [(model, False)]
    while stack:
        value, children_done = stack.pop()
        if children_done:
            order.append(value)
            continue
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, BaseEstimator):
            stack.append((value, True))
            children = vars(value).values()
        elif isinstance(value, (list, tuple)):
            children = value
        elif isinstance(value, dict):
            children = value.values()
        else:
            continue
        stack.extend((child, False) for child in children)
    return order


def _check_pipeline(pipeline):
    """A Pipeline's steps are (name, estimator) pairs, and a StandardScaler gives the next step its features."""
    steps = pipeline.steps
    if not (isinstance(steps, list) and steps and all(
            isinstance(step, tuple) and len(step) == 2 and isinstance(step[0], str) for step in steps)):
        raise state.FittedStateError("steps is not a list of (name, estimator) pairs")
    for i, ((_, before), (_, after)) in enumerate(zip(steps, steps[1:])):
        given, taken = getattr(before, "n_features_in_", None), getattr(after, "n_features_in_", None)
        if isinstance(before, StandardScaler) and None not in (given, taken) and given != taken:
            raise state.FittedStateError(f"steps[{i + 1}] ({type(after).__name__}) takes {taken} features, where "
                                         f"steps[{i}] (StandardScaler) gives {given}")


def _check_standard_scaler(scaler):
    """A fitted StandardScaler's mean_, var_ and scale_ (each None without centring or scaling) are
    finite, of n_features_in_ entries, the variances non-negative and the scales positive."""
    (n_features,) = state.fitted_attributes(scaler, "n_features_in_")
    n_features = state.count(n_features, "n_features_in_", minimum=1)
    for name in ("mean_", "var_", "scale_"):
        if getattr(scaler, name, None) is not None:
            state.array(getattr(scaler, name), name, (n_features,), dims="(n_features_in_,)",
                        nonnegative=name == "var_", positive=name == "scale_")


# The checks of the fitted state of the scikit-learn types a model file may hold (discrim's
# estimators check their own, with _check_loaded_state); the others hold no fitted arrays.
_SKLEARN_STATE_CHECKS = {Pipeline: _check_pipeline, StandardScaler: _check_standard_scaler}


def _shown(text, limit=80):
    """Text from the file as a message shows it: quoted, escaped to one line, and shortened."""
    shown = repr(text)
    return shown if len(shown) <= limit else f"{shown[: limit - 4]}...{shown[-1]}"


def _one_line(exc):
    """The first line of an exception's message, with its type when the message is empty."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _read_schema(data, where):
    """``schema.json`` of a skops file, parsed, and the names of the archive's members.

    Parameters
    ----------
    data : bytes
        The whole file.
    where : str
        The file, as messages name it.

    Returns
    -------
    schema : object
        The parsed JSON (checked by :func:`_schema_problems`, not here).
    members : set of str

    Raises
    ------
    ModelFileError
        If the file is not a zip archive, has no readable ``schema.json``, or that is not JSON.
    """
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            info = archive.getinfo("schema.json")
            if info.file_size > _MAX_SCHEMA_BYTES:
                raise ModelFileError(f"{where} is refused: its schema.json has {info.file_size} bytes.")
            total = sum(member.file_size for member in archive.infolist())
            if total > _MAX_ARCHIVE_BYTES:
                raise ModelFileError(f"{where} is refused: it would expand to {total} bytes.")
            members = set(archive.namelist())
            text = archive.read(info)
    except ModelFileError:
        raise
    except Exception as exc:  # zipfile, zlib, lzma: BadZipFile, zlib.error, EOFError, KeyError, ...
        raise ModelFileError(
            f"{where} is not a readable skops model file (corrupted or of another format): {_one_line(exc)}"
        ) from None
    try:
        return json.loads(text), members
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise ModelFileError(
            f"{where} is not a readable skops model file: schema.json is not valid JSON ({_one_line(exc)})."
        ) from None


def _schema_problems(schema, members):
    """Why a parsed ``schema.json`` is not a trusted discrim model; empty if it is one.

    Walks the whole tree iteratively (a crafted depth cannot reach RecursionError) and checks,
    for every node, its loader, its exact type, and the shape of the fields that loader reads.

    Parameters
    ----------
    schema : object
        Parsed ``schema.json``.
    members : set of str
        Names of the archive's members (arrays must name one of them).

    Returns
    -------
    problems : list of str
        One sentence per refused node, in the order found; empty for a trusted model.
    types : set of str
        ``module.Class`` of every node checked (what skops is then told to trust).
    """
    if not isinstance(schema, dict):
        return [f"schema.json holds a {type(schema).__name__}, not a dict"], set()
    protocol, current = schema.get("protocol"), _skops_protocol()
    if type(protocol) is not int or protocol != current:
        # Earlier protocols rebuild some nodes differently (old RandomGeneratorNode called a
        # class named by the file); discrim writes only the current one.
        return [f"skops protocol {_shown(protocol)}, where discrim reads protocol {current} "
                "(save the model again with this version)"], set()
    problems, types = [], set()
    stack = [(schema, "root", 1)]
    while stack:
        node, where, depth = stack.pop()
        if depth > _MAX_DEPTH:
            return [f"{where} is nested more than {_MAX_DEPTH} levels deep"], set()
        children, problem = _node_children(node, where, members)
        if problem is None:
            types.add(f"{node['__module__']}.{node['__class__']}")
        else:
            problems.append(problem)
        stack.extend((child, child_where, depth + 1) for child, child_where in children)
    return problems, types


def _node_children(node, where, members):
    """Check one node; return its child nodes (with where they are) and a problem or None.

    Parameters
    ----------
    node : object
        One node of the parsed schema.
    where : str
        Path of the node in the tree, for messages.
    members : set of str

    Returns
    -------
    children : list of (object, str)
    problem : str or None
    """
    if not isinstance(node, dict):
        return [], f"{where} is a {type(node).__name__}, not a node"
    loader, module, name = node.get("__loader__"), node.get("__module__"), node.get("__class__")
    if not all(isinstance(v, str) for v in (loader, module, name)):
        return [], f"{where} lacks a text __loader__, __module__ or __class__"
    if "__id__" in node and type(node["__id__"]) is not int:
        return [], f"{where} has a non-integer __id__"
    type_name = f"{module}.{name}"
    trusted = _TRUSTED_BY_LOADER.get(loader)
    if trusted is None:
        return [], f"{where} uses skops loader {_shown(loader)} (for {_shown(type_name)}), which discrim never accepts"
    if type_name not in trusted:
        return [], f"{where} has type {_shown(type_name)} (loader {loader}), which discrim does not trust"
    return _FIELDS[loader](node, where, members)


def _dict_fields(node, where, members):
    content, key_types = node.get("content"), node.get("key_types")
    if not isinstance(content, dict) or not isinstance(key_types, dict):
        return [], f"{where} (a dict) lacks its content or key types"
    kids = [(value, f"{where}[{_shown(key)}]") for key, value in content.items()]
    listed = key_types.get("content") if isinstance(key_types.get("content"), list) else []
    if any(isinstance(t, dict) and t.get("__class__") in ("bool", "bool_") for t in listed):
        # skops rebuilds a key as bool("false"), which is True: the False entry would be lost
        return kids, (f"{where} is a dict with True/False keys, which skops cannot restore (its False key "
                      "comes back as True); use other labels (e.g. 0/1 or strings) for what the keys name")
    return [*kids, (key_types, f"{where}.key_types")], None


def _sequence_fields(node, where, members):
    content = node.get("content")
    if not isinstance(content, list):
        return [], f"{where} (a {node['__class__']}) lacks its list of items"
    return [(value, f"{where}[{i}]") for i, value in enumerate(content)], None


def _json_fields(node, where, members):
    if not isinstance(node.get("content"), str):
        return [], f"{where} (a JSON value) lacks its text"
    return [], None


def _array_fields(node, where, members):
    kind = node.get("type")
    if kind == "numpy":
        if not isinstance(node.get("file"), str) or node["file"] not in members:
            return [], f"{where} (an array) names no member of the archive"
        return [], None
    if kind == "json":  # an object array (e.g. string labels), item by item
        content, shape = node.get("content"), node.get("shape")
        if not isinstance(content, list) or not isinstance(shape, dict):
            return [], f"{where} (an object array) lacks its items or shape"
        return [*((v, f"{where}[{i}]") for i, v in enumerate(content)), (shape, f"{where}.shape")], None
    return [], f"{where} (an array) has unknown storage {kind!r}"


def _content_node_fields(node, where, members):
    content = node.get("content")
    if not isinstance(content, dict):
        return [], f"{where} ({node['__loader__']}) lacks its content"
    return [(content, f"{where}.content")], None


def _object_fields(node, where, members):
    if "content" not in node:
        return [], None
    content = node["content"]
    # ObjectNode sets the attributes from a dict; anything else would reach __setstate__.
    if not isinstance(content, dict) or content.get("__loader__") != "DictNode":
        return [], f"{where} ({node['__class__']}) has attributes that are not a dict"
    return [(content, f"{where}.{node['__class__']}")], None


def _no_fields(node, where, members):
    return [], None


# What each accepted loader reads from its node (skops's own code decides: see skops.io._general,
# _numpy): the children to check next, or why the node is malformed.
_FIELDS = {
    "DictNode": _dict_fields,
    "ListNode": _sequence_fields,
    "TupleNode": _sequence_fields,
    "JsonNode": _json_fields,
    "NdArrayNode": _array_fields,
    "DTypeNode": _content_node_fields,
    "TypeNode": _no_fields,
    "RandomStateNode": _content_node_fields,
    "ObjectNode": _object_fields,
}


def _save_hint(problems):
    """Advice for the refusals users meet in practice when saving.

    Parameters
    ----------
    problems : list of str
        As returned by :func:`_schema_problems`.

    Returns
    -------
    hint : str
        Empty, or clauses to append to the message: one per kind of problem met, in the order
        of the problems.
    """
    callables = ("'FunctionNode'", "'MethodNode'", "'PartialNode'", "(loader TypeNode)")
    advice = [
        (lambda p: "scipy.stats" in p,
         "; of scipy.stats, model files hold only multivariate_normal densities: the other scipy "
         "distributions rebuild themselves by executing code kept in the file, so a file holding "
         "them cannot be loaded safely. Write the densities as multivariate_normal (one feature: "
         "multivariate_normal(mean, var)) or keep them in code and refit"),
        (lambda p: any(kind in p for kind in callables),
         "; model files hold no functions: set parameters that hold a function or a class "
         "(such as callback) to None first"),
        (lambda p: "'RandomGeneratorNode'" in p,
         "; model files hold no numpy Generator: pass an int seed as random_state (e.g. random_state=0), "
         "or a RandomState"),
        # a search's transformer (any type there is one), or a scaler as a Pipeline step: of
        # scikit-learn's transformers TRUSTED_OBJECT_TYPES lists StandardScaler (and Pipeline) only
        # a PrototypeClassifierCV's splitter: TRUSTED_OBJECT_TYPES lists StratifiedKFold and KFold
        (lambda p: "does not trust" in p and "['cv']" in p and "sklearn.model_selection." in p,
         "; of scikit-learn's splitters, model files hold StratifiedKFold and KFold as cv: search with one "
         "of them (or an int), or set cv to an int with set_params before saving (the fitted model does not "
         "change, but cv no longer records the search's splitter)"),
        (lambda p: "does not trust" in p and ("['transformer" in p or "has type 'sklearn.preprocessing." in p),
         "; of scikit-learn's transformers, model files hold only StandardScaler, as a "
         "PrototypeClassifierCV's transformer or a Pipeline step (a Pipeline of StandardScalers too): "
         "use it, or transform the rows in code and save the model fitted on them"),
    ]
    first = {text: min((i for i, p in enumerate(problems) if applies(p)), default=None) for applies, text in advice}
    return "".join(sorted((text for text, i in first.items() if i is not None), key=first.get))
