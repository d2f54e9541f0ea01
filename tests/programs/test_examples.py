"""The examples run and print what they promise (`python example.py`, in the suite's shared process)."""
from pathlib import Path

import pytest

from conftest import PYTHON

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_example(name, *args):
    result = PYTHON.run(EXAMPLES / name, *args)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_quickstart():
    out = run_example("quickstart.py")
    assert "f(2, 5)  = 11.652071" in out
    assert "gradient = (5.500000, 1.716338)" in out
    assert "def f_grad(x1, x2):" in out


def test_newton_sqrt_matches_the_analytic_derivative():
    out = run_example("newton_sqrt.py")
    for line in out.strip().splitlines():
        d_s2s = float(line.split("d/da = ")[1].split()[0])
        d_true = float(line.split("1/(2 sqrt a) = ")[1])
        assert d_s2s == pytest.approx(d_true, rel=1e-9)


def test_euler_ode_matches_the_discrete_scheme():
    out = run_example("euler_ode.py")
    line = out.splitlines()[1]
    ours, analytic = float(line.split("s2s ")[1].split(",")[0]), float(line.split("analytic ")[1])
    assert ours == pytest.approx(analytic, rel=1e-10)


def test_logistic_regression_learns():
    out = run_example("logistic_regression.py")
    losses = [float(line.split("loss ")[1]) for line in out.splitlines() if line.startswith("step")]
    assert losses == sorted(losses, reverse=True) and losses[-1] < 0.5 * losses[0]
    accuracy = float(out.strip().splitlines()[-1].split()[-1])
    assert accuracy >= 0.9


def test_logistic_regression_shows_its_source():
    out = run_example("logistic_regression.py", "--show-source")
    assert "def loss_grad(w, b, X, y):" in out


def test_mlp_loss_falls_tenfold_and_gradient_checks():
    out = run_example("mlp.py")
    factor = float(out.split("loss fell ")[1].split("x")[0])
    assert factor >= 10
    assert "gradient agrees with central differences" in out


def test_newton_optimize_converges_to_one_one():
    out = run_example("newton_optimize.py")
    steps = int(out.split("after ")[1].split()[0])
    assert steps <= 30
    values = out.split("[")[1].split("]")[0].split()
    assert [float(v) for v in values] == pytest.approx([1.0, 1.0], abs=1e-8)


def test_params_mlp_trains_with_a_dict_of_parameters():
    # one run: --show-source prints the derivative's source before it trains as the plain run does
    out = run_example("params_mlp.py", "--show-source")
    source, trained = out.split("step    0", 1)
    assert float(trained.split("loss fell ")[1].split("x")[0]) >= 10
    assert "gradient agrees with central differences" in trained
    assert "def loss_grad(params, X, Y):" in source and "params['W1']" in source
