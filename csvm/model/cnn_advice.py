"""What :class:`csvm.SmallCNN` says about input and training that cannot work.

Its defaults are the thesis's network for MNIST pixels in [0, 1].  On other input (raw
0-16 digits, 0-255 pixels) or with a learning rate far off, SGD ends at chance without an
error; these warnings name the cause and the way to change it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from csvm.exceptions import CSVMWarning

__all__ = ["INPUT_RANGE", "advice", "warn_if_nothing_learned", "warn_if_unscaled"]

#: Largest |pixel| SmallCNN trains on without a warning.  On three classes of load_digits
#: (402 images, the default network, seeds 0-4; bench/bench_smallcnn_input.py) pixels up
#: to 2 trained to 99-100 % test accuracy every time; up to 4, two seeds in five ended at
#: chance (27 %); raw (0-16), three in five (31-41 %).
INPUT_RANGE = 2.0


def warn_if_unscaled(X4: np.ndarray, stacklevel: int) -> None:
    """Warn when the training images reach beyond ±:data:`INPUT_RANGE`."""
    peak = float(np.max(np.abs(X4))) if X4.size else 0.0
    if peak > INPUT_RANGE:
        warnings.warn(
            f"SmallCNN expects images scaled to about [0, 1] (its defaults are the "
            f"thesis's, for such pixels), but X's values reach {peak:g}: its units "
            f"saturate and training is likely to fail. Divide X by {peak:g} (or put "
            "sklearn's MinMaxScaler before it in a Pipeline).",
            CSVMWarning,
            stacklevel=stacklevel + 1,
        )


def advice(lr: float, peak: float, losses: Sequence[float], chance: float) -> str:
    """What to change after a run that ended at chance: the input's range first, then
    lr when it is tiny or the loss went far above ``chance`` (the loss of answering the
    class frequencies) in any epoch, more epochs while the loss still falls, else a smaller lr.

    A loss far above chance means the steps overshoot.  Once the loss has stopped falling
    near chance, it sits there whether lr is too large (the sigmoid units saturate: lr=0.1
    on a few hundred 8x8 digits, one seed in five) or far too small (the weights barely
    move), so the size of lr itself decides which way to go.
    """
    if peak > INPUT_RANGE:
        return (
            f"X's values reach {peak:g}: scale the images to [0, 1] first "
            f"(e.g. X / {peak:g}), then tune lr if it still does not learn."
        )
    if lr <= 1e-3:
        return (
            f"The learning rate lr={lr:g} is likely too small to move the weights: "
            "try lr=0.01 to 0.1, or tune it (csvm.analysis.tuning.tune_cnn)."
        )
    # The highest loss, not the last: a chaotic run can overshoot to 3.6 and fall back
    # to 2.1 by chance (lr=5 on three classes of digits), which is still overshooting.
    peak_epoch = int(np.argmax(losses))
    if losses[peak_epoch] > 2 * chance:
        return (
            f"The learning rate lr={lr:g} is likely too large: the loss reached "
            f"{losses[peak_epoch]:.3g} (epoch {peak_epoch + 1}), far above the {chance:.3g} "
            f"of answering the class frequencies (the steps overshoot): try "
            f"lr={lr / 10:g}, or tune it (csvm.analysis.tuning.tune_cnn)."
        )
    if len(losses) < 2:  # one epoch says nothing of where the loss was heading
        return "Only one epoch ran: train for more epochs."
    if losses[-1] < 0.98 * losses[-2]:
        return (
            f"Its loss was still falling ({losses[-2]:.3g} -> {losses[-1]:.3g} in the last "
            f"epoch): train for more than {len(losses)} epochs."
        )
    return (
        f"The learning rate lr={lr:g} is likely too large: try lr={lr / 10:g} "
        "(or another seed), or tune it (csvm.analysis.tuning.tune_cnn)."
    )


def warn_if_nothing_learned(
    history: Sequence[dict[str, Any]],
    X4: np.ndarray,
    y_index: np.ndarray,
    accuracy: Callable[[], float],
    lr: float,
    stacklevel: int,
) -> None:
    """Warn when the final weights score barely better than always answering the
    commonest class (within a tenth of the way from there to 100 %).

    ``accuracy()`` gives the final weights' training accuracy.  The epochs' own
    accuracies are of the batches while the weights moved, which can be far above what
    the final weights score (46 % against 39 % on three classes of digits), so the final
    weights are judged: one forward pass, a few % of a 10-epoch fit.
    """
    epochs = [h for h in history if h.get("kind") == "epoch"]
    if not epochs:
        return
    majority = float(np.bincount(y_index).max() / len(y_index))
    score = accuracy()
    if score > majority + 0.1 * (1 - majority):
        return
    losses = [float(e["loss"]) for e in epochs]
    prior = np.bincount(y_index) / len(y_index)
    chance = float(-np.sum(prior[prior > 0] * np.log(prior[prior > 0])))
    warnings.warn(
        f"SmallCNN learned nothing: after {len(epochs)} epoch{'s' * (len(epochs) != 1)} its "
        "training accuracy "
        f"{100 * score:.1f} % is at or near what always answering the commonest class "
        f"scores ({100 * majority:.1f} %; loss {losses[0]:.3g} -> {losses[-1]:.3g}). "
        + advice(lr, float(np.max(np.abs(X4))), losses, chance),
        CSVMWarning,
        stacklevel=stacklevel + 1,
    )
