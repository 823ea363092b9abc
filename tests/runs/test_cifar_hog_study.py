"""The CIFAR-10 study of the stack beside HOG with mirrored support vectors (issue 35)."""

import numpy as np
import pytest

from csvm.data.protocols import PairData
from csvm.runs import cifar_hog_study as study


def _stacked_pair(n_train: int = 24, n_test: int = 16, seed: int = 0) -> PairData:
    """Stacked 96 x 32 colour images (three 32 x 32 planes) of two textures."""
    rng = np.random.default_rng(seed)

    def draw(n):
        y = np.tile([-1, 1], n // 2)
        X = rng.random((n, 1, 96, 32)).astype(np.float32) * 0.3
        X[y == 1, :, :, ::4] += 0.7  # vertical stripes: mirrored, still stripes
        return X, y

    X_train, y_train = draw(n_train)
    X_val, y_val = draw(8)
    X_test, y_test = draw(n_test)
    return PairData(
        X_train, y_train, X_val, y_val, X_test, y_test, image_shape=(1, 96, 32),
        class_names=("a", "b"), classes=(0, 1), counts={}, source="synthetic", dataset="cifar10",
    )  # fmt: skip


@pytest.fixture
def small_pairs(monkeypatch):
    loaded = []

    def fake_load_pair(name, a, b, protocol=None, data_dir=None, color=None, **kw):
        loaded.append((name, a, b, protocol, color))
        return _stacked_pair(seed=len(loaded))

    monkeypatch.setattr("csvm.data.load_pair", fake_load_pair)
    return loaded


def test_the_study_scores_four_models_on_both_report_pairs(small_pairs):
    logged = []
    lines, models, extra = study.run_cifar_hog_study("somewhere", log=logged.append)
    # the declared report pairs, data_batch_1's protocol, the stacked colour planes
    assert small_pairs == [("cifar10", a, b, "thesis", "stacked") for a, b in study.REPORT_PAIRS]
    assert len(models) == 4 * len(study.REPORT_PAIRS) == len(logged)
    names = [m["name"] for m in models]
    assert names[0] == "airplane v automobile: " + study.MODELS["mirror"]
    # the targets are lines of their own, not a "published" figure
    assert all(m["reference"] is None for m in models)
    targets = [line for line in lines if "issue 35's target" in line]
    assert [t.split(": ")[1] for t in targets] == [
        "issue 35's target 93 %",
        "issue 35's target 72 %",
    ]
    pairs = extra["details"]["test_images"]
    for pair, model_rows in zip(pairs, (models[:4], models[4:]), strict=True):
        bits = pair["correct"]
        assert set(bits) == set(study.MODELS)
        right = np.unpackbits(np.frombuffer(bytes.fromhex(bits["mirror"]), np.uint8))
        assert right[: pair["n_test"]].mean() == pytest.approx(model_rows[0]["mean"])
    # the target and three comparisons of the mirrored stack on each pair
    assert len(extra["details"]["mcnemar"]) == 4 * len(study.REPORT_PAIRS)
    assert lines[1:] == extra["details"]["mcnemar"]


def test_the_stack_is_the_curves_hogprod3_at_c_10():
    from csvm.analysis.curves import PRODUCT_STACKS
    from csvm.model.hog_product import HOGProductCSVM

    data = _stacked_pair()
    fitted = study.fitted_model("none", data)
    assert isinstance(fitted, HOGProductCSVM) and fitted.C == study.C == 10.0
    assert fitted.layers == PRODUCT_STACKS["hogprod3"][0]
    assert fitted.eta == 0.1 and fitted.n_iter == 10 and fitted.random_state == 0


def test_reproduce_saves_the_study_for_the_page(tmp_path, small_pairs, capsys):
    from csvm.__main__ import main
    from csvm.analysis.reproduced import load_run

    out = tmp_path / "cifar10-hog-mirror.json"
    assert main(["reproduce", "cifar10-hog-mirror", "--data-dir", "x", "--out", str(out)]) == 0
    run = load_run(out)
    assert run["table"] == "cifar10-hog-mirror" and len(run["models"]) == 8
    assert "stack beside HOG + mirrored support vectors" in capsys.readouterr().out
