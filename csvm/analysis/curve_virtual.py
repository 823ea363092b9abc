"""The learning curves' virtual-support-vector methods, and which images they suit: the
copies such a method adds must be images of the same class.

- A mirrored support vector suits photographs (a car facing left is still a car), never
  digits: a mirrored 3 is no digit at all.
- A shifted support vector moves the whole image, so on CIFAR-10's stacked 96 × 32 image
  (the R, G and B planes above each other) rows would cross from one colour plane into the
  next.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "VIRTUAL",
    "VIRTUAL_SHIFTS_MNIST",
    "check_suited",
    "left_out_note",
    "suited_methods",
    "unsuited",
]

#: Methods that solve a base method's SVM again with virtual support vectors
#: (:func:`csvm.model.virtual.add_virtual`): method -> (base, shifts, mirror).  Chosen on
#: selection pairs only (docs/protocol_learned_hog.md, addenda 8 and 9): the MNIST shifts
#: by bench/bench_hog_mirror.py --stage select-shifts, CIFAR-10's mirror by --stage select.
#: "hogv" and "hogm" give the HOG baseline the same copies.
VIRTUAL_SHIFTS_MNIST = "4"
VIRTUAL: dict[str, tuple[str, str | None, bool]] = {
    "hogprodv": ("hogprod", VIRTUAL_SHIFTS_MNIST, False),
    "hogv": ("hog", VIRTUAL_SHIFTS_MNIST, False),
    "hogprod3m": ("hogprod3", None, True),
    "hogm": ("hog", None, True),
}


def _images(dataset: str) -> tuple[tuple[int, ...], bool] | None:
    """The dataset's image shape and whether its classes are digits; None if unknown."""
    from csvm.data.registry import DIGITS, spec
    from csvm.exceptions import CSVMError

    try:
        entry = spec(dataset)
    except (CSVMError, OSError, ValueError):  # loading the pair says what is wrong
        return None
    return tuple(entry.image_shape), tuple(entry.classes) == DIGITS


def unsuited(method: str, dataset: str) -> str | None:
    """Why ``method`` does not suit ``dataset``'s images, or None where it does.

    Examples
    --------
    >>> unsuited("hogm", "cifar10") is None, unsuited("hogv", "mnist") is None
    (True, True)
    >>> unsuited("hogm", "mnist")
    'mirrored support vectors: a mirrored digit is no digit'
    """
    if method not in VIRTUAL:  # read the dataset's entry only for a method that copies
        return None
    known = _images(dataset)
    if known is None:
        return None
    (c, h, w), digits = known
    _, shifts, mirror = VIRTUAL[method]
    if mirror and digits:
        return _MIRRORED
    if shifts and c == 1 and h == 3 * w:  # the stacked colour layout (curves.colour_planes)
        return _SHIFTED
    return None


_MIRRORED = "mirrored support vectors: a mirrored digit is no digit"
_SHIFTED = "shifted support vectors: rows would cross the stacked colour planes"


def left_out_note(methods: Sequence[str], dataset: str) -> str | None:
    """One short line on what of ``methods`` is not offered on ``dataset``, and why
    (None when all suit it)."""
    reasons = dict.fromkeys(r for r in (unsuited(m, dataset) for m in methods) if r)
    return "Not offered on these images: " + "; ".join(reasons) + "." if reasons else None


def suited_methods(methods: Sequence[str], dataset: str) -> list[str]:
    """``methods`` without those that do not suit ``dataset`` (:func:`unsuited`)."""
    return [m for m in methods if unsuited(m, dataset) is None]


def check_suited(methods: Sequence[str], dataset: str) -> None:
    """A ValueError naming the first method that does not suit ``dataset``, and why."""
    for method in methods:
        why = unsuited(method, dataset)
        if why is not None:
            raise ValueError(
                f"Method {method!r} does not suit {dataset}'s images "
                f"({why}). Leave it out, or run it on other data."
            )
