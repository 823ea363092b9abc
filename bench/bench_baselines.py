"""Benchmark the baselines on the thesis's tables 4.1 and 4.4, printing figures.

    python bench/bench_baselines.py            # 3 seeds, tables 4.1 and 4.4, PyTorch ratio
    python bench/bench_baselines.py --quick    # 1 seed, table 4.1 only

Table 4.1: MNIST 3 vs 5 (the 3s and 5s among the first 10,000 training images; test: all 3s
and 5s of the test set). CNN with 1 filter 5x5, 500 sigmoid hidden units, lr 0.1, Nesterov
0.9, L2 1e-5, batch size 32, 10 epochs.  Where PyTorch is importable, the same network in
PyTorch on the CPU (same threads) gives a seconds-per-epoch ratio; torch is never a
dependency of the product.
Table 4.4: CIFAR-10 airplane vs automobile (data_batch_1 / test_batch, RGB planes stacked
to 96x32): poly-3 SVC with C = 1e-8, and the CNN with 800 hidden units, lr 1e-4, 30 epochs.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

from bench._data import SHARED, mnist_pair  # noqa: E402
from csvm.baselines import SmallCNN, make_plain_svm  # noqa: E402

EPOCHS = 10
CIFAR_EPOCHS = 30  # lr 1e-4 is slow: 10 epochs reach 76 %, 30 epochs the thesis's 80 %
BATCH = 32


def cnn_runs(Xtr, ytr, Xte, yte, seeds, **params):
    accs, per_epoch = [], []
    for seed in seeds:
        cnn = SmallCNN(
            image_shape=Xtr.shape[1:],
            filter_shape=(5, 5),
            batch_size=BATCH,
            random_state=seed,
            **params,
        )
        t0 = time.perf_counter()
        cnn.fit(Xtr, ytr)
        per_epoch.append((time.perf_counter() - t0) / len(cnn.history_))
        accs.append(100 * cnn.score(Xte, yte))
    return np.array(accs), np.array(per_epoch)


def torch_seconds_per_epoch(Xtr, ytr, hidden=500, epochs=3):
    """The same network in PyTorch on the CPU, at its best thread count (1 or 2), or None
    when torch is not installed."""
    try:
        import torch
    except ImportError:
        return None
    best = np.inf
    for threads in (1, 2):
        torch.set_num_threads(threads)
        torch.manual_seed(0)
        h2, w2 = Xtr.shape[-2] - 4, Xtr.shape[-1] - 4
        net = torch.nn.Sequential(
            torch.nn.Conv2d(Xtr.shape[1], 1, 5),
            torch.nn.Flatten(),
            torch.nn.Linear(h2 * w2, hidden),
            torch.nn.Sigmoid(),
            torch.nn.Linear(hidden, 1),
        )
        opt = torch.optim.SGD(
            net.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-5
        )
        X = torch.from_numpy(np.ascontiguousarray(Xtr))
        y = torch.from_numpy((ytr > 0).astype(np.float32))
        loss_fn = torch.nn.BCEWithLogitsLoss()
        for _ in range(epochs):
            t0 = time.perf_counter()
            order = torch.randperm(len(X))
            for first in range(0, len(X), BATCH):
                idx = order[first : first + BATCH]
                opt.zero_grad()
                loss = loss_fn(net(X[idx])[:, 0], y[idx])
                loss.backward()
                opt.step()
            best = min(best, time.perf_counter() - t0)
    return float(best)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--skip-cifar", action="store_true")
    args = parser.parse_args()
    seeds = range(1 if args.quick else args.seeds)
    rows = ["| table | model | test accuracy % | seconds | thesis |", "|---|---|---|---|---|"]

    Xtr, ytr, Xte, yte = mnist_pair()
    t0 = time.perf_counter()
    svm = make_plain_svm(
        {"kernel": "poly", "degree": 2, "gamma": 1.0, "coef0": 1.0, "C": None}
    ).fit(Xtr, ytr)
    rows.append(
        f"| 4.1 | plain SVC poly d=2, no C | {100 * svm.score(Xte, yte):.2f} | "
        f"{time.perf_counter() - t0:.2f} | 98.32 |"
    )
    print(rows[-1], flush=True)
    accs, per_epoch = cnn_runs(
        Xtr,
        ytr,
        Xte,
        yte,
        seeds,
        hidden=500,
        activation="sigmoid",
        lr=0.1,
        momentum=0.9,
        nesterov=True,
        weight_decay=1e-5,
        epochs=EPOCHS,
    )
    rows.append(
        f"| 4.1 | SmallCNN 1×5×5, 500 sigmoid, {EPOCHS} epochs, batch {BATCH} | "
        f"{accs.mean():.2f} ± {accs.std():.2f} | {per_epoch.mean():.3f} s/epoch | "
        "98.38 ± 0.25 |"
    )
    print(rows[-1], flush=True)
    torch_epoch = torch_seconds_per_epoch(Xtr, ytr)
    if torch_epoch is None:
        rows.append("| 4.1 | PyTorch CPU, same network | – | not installed | – |")
    else:
        rows.append(
            f"| 4.1 | PyTorch CPU, same network | – | {torch_epoch:.3f} s/epoch "
            f"(numpy / torch = {per_epoch.mean() / torch_epoch:.2f}×) | – |"
        )
    print(rows[-1], flush=True)

    cifar = SHARED / "cifar10"
    if not (args.quick or args.skip_cifar) and cifar.is_dir():
        from csvm.datasets import load_pair

        d = load_pair(
            "cifar10", "airplane", "automobile", protocol="thesis", data_dir=SHARED, color="stacked"
        )
        t0 = time.perf_counter()
        svm = make_plain_svm(
            {"kernel": "poly", "degree": 3, "gamma": 1.0, "coef0": 1.0, "C": 1e-8}
        ).fit(d.X_train, d.y_train)
        rows.append(
            f"| 4.4 | plain SVC poly d=3, C=1e-8 | {100 * svm.score(d.X_test, d.y_test):.2f}"
            f" | {time.perf_counter() - t0:.2f} | 85.05 |"
        )
        print(rows[-1], flush=True)
        accs, per_epoch = cnn_runs(
            d.X_train,
            d.y_train,
            d.X_test,
            d.y_test,
            seeds,
            hidden=800,
            activation="sigmoid",
            lr=1e-4,
            momentum=0.9,
            nesterov=True,
            weight_decay=1e-5,
            epochs=CIFAR_EPOCHS,
        )
        rows.append(
            f"| 4.4 | SmallCNN 1×5×5, 800 sigmoid, lr 1e-4, {CIFAR_EPOCHS} epochs | "
            f"{accs.mean():.2f} ± {accs.std():.2f} | {per_epoch.mean():.3f} s/epoch | "
            "80.15 ± 1.09 |"
        )
        print(rows[-1], flush=True)
    print()
    print("\n".join(rows))
    print(f"command: python bench/bench_baselines.py{' --quick' if args.quick else ''}")


if __name__ == "__main__":
    main()
