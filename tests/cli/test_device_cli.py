"""--device on the command line (issue 20): the same scores as numpy, saved models run anywhere."""

import re

import pytest
from click.testing import CliRunner

from discrim.cli.main import cli
from discrim.persistence import _estimators_held_first, load_model

pytest.importorskip("torch")


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def _metrics(output):
    """{metric: value} of a fit's score table (fit time left out)."""
    found = re.findall(r"│ (log-loss|accuracy|balanced accuracy|ROC-AUC)\s+│ ([0-9.]+)", output)
    return dict(found)


@pytest.mark.parametrize("model, params", [("lda", []), ("qda", []), ("mda", []), ("mda", ["--param", "n_components=[1,2]"]),
                                           ("proset", [])])
def test_fit_on_the_torch_cpu_device_scores_as_numpy_and_saves_a_host_model(model, params, tmp_path):
    on_host = run("fit", "--dataset", "iris-2f", "--model", model, "--quiet", *params)
    on_device = run("fit", "--dataset", "iris-2f", "--model", model, "--quiet", "--device", "cpu",
                    "--output", tmp_path / "m.skops", *params)
    assert on_device.exit_code == 0, on_device.output
    assert _metrics(on_device.output) == _metrics(on_host.output) and len(_metrics(on_host.output)) == 4
    # every estimator of the saved model computes on the host, the class mixtures of mda too
    loaded = load_model(tmp_path / "m.skops")
    held = _estimators_held_first(loaded)
    if model == "mda":  # the BIC tables' fits too (selections_, rebuilt from plain containers)
        held += [e for s in loaded[-1].selections_ if s is not None for e in (s.estimators or [])]
    assert [type(e).__name__ for e in held if getattr(e, "device", None) is not None] == []


def test_mixture_on_the_torch_cpu_device_reports_as_numpy(tmp_path):
    csv = tmp_path / "iris.csv"
    assert run("datasets", "--export", "iris", "--output", csv).exit_code == 0
    args = ["mixture", "--csv", csv, "--columns", "sepal length (cm),petal length (cm)", "--components", "1-3",
            "--quiet"]
    on_host, on_device = run(*args), run(*args, "--device", "cpu")
    assert on_device.exit_code == 0, on_device.output
    assert on_device.output == on_host.output


def test_tune_takes_a_device(tmp_path):
    result = run("tune", "--dataset", "iris-2f", "--device", "cpu", "--n-alphas", "2", "--max-batches", "1",
                 "--cv", "2", "--quiet", "--output", tmp_path / "tuned")
    assert result.exit_code == 0, result.output
    assert load_model(tmp_path / "tuned" / "model.skops").device is None


@pytest.mark.parametrize("command", [["fit", "--dataset", "iris-2f", "--model", "lda"],
                                     ["tune", "--dataset", "iris-2f"]])
def test_a_device_that_is_not_there_is_one_line(command):
    result = run(*command, "--device", "gpu")
    assert result.exit_code == 1
    assert result.output.strip() == ("Error: --device='gpu' is not a device: leave out --device (numpy on the host) "
                                     "or give --device cpu, 'cuda' or 'cuda:<index>'.")
