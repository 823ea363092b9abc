"""The table of every setting of a run: name, default and :class:`Spec`.

This is the one place a setting is declared.  :class:`csvm.runs.config.RunConfig` has a
field per entry, in the table's order, and everything else walks :data:`SPECS`: the
explorer's widgets, validation and its messages, the URL round trip, the CLI flags and
the estimator's keywords.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from csvm.model.kernel_registry import KERNELS, kernels_using
from csvm.model.recommend import GRAM_LIMIT, HOG_MIN_SIDE
from csvm.model.regularisers import REGULARISERS

__all__ = [
    "DEFAULT_VALUES",
    "MAX_CLASSES",
    "MAX_RAW_LENGTH",
    "MIN_CLASSES",
    "MODEL_LABELS",
    "SPECS",
    "RegistryChoices",
    "Spec",
    "fmt",
    "title",
    "tuned_label",
]

#: Longest raw value a URL or preset may hold for one setting (longer is refused unread).
MAX_RAW_LENGTH = 200
#: How many classes a multi-class run may name (every dataset here has ten).
MIN_CLASSES, MAX_CLASSES = 3, 10
MODEL_LABELS = {
    "kcsvm": "K-CSVM",
    "lcsvm": "L-CSVM",
    "svm": "plain SVM",
    "cnn": "small CNN",
    "mkl": "filter-bank MKL",
    "hog": "HOG + SVM",
    "mlsvm": "two-layer SVM",
    "recommended": "recommended model",
}


def tuned_label(label: str) -> str:
    """A baseline's name once tuned on the validation split ("plain SVM (tuned on
    validation)"): the jobs label their results so, the command line says it, and a
    reloaded file may claim nothing else."""
    return f"{label} (tuned on validation)"


_BOTH = ("kcsvm", "lcsvm")
_DATASETS = ("mnist-5k", "shapes", "digits", "mnist", "fashion-mnist", "cifar10")


class RegistryChoices(Sequence):
    """A setting's choices read from a registry whenever they are asked for.

    The kernel and regulariser choices (and which kernels use degree, γ and coef0) come
    from :data:`csvm.model.kernel_registry.KERNELS` and
    :data:`csvm.model.regularisers.REGULARISERS`: an entry added there is offered by
    the app's widgets, the CLI's flags and the URL parsing with no change here.  It behaves
    as the tuple of the registry's names at the moment it is read.

    Parameters
    ----------
    names : callable returning an iterable of str
        E.g. ``KERNELS.keys``.
    """

    def __init__(self, names: Callable[[], Iterable[str]]):
        self._names = names

    def _now(self) -> tuple[str, ...]:
        return tuple(self._names())

    def __getitem__(self, index):  # type: ignore[override]
        return self._now()[index]

    def __len__(self) -> int:
        return len(self._now())

    def __iter__(self) -> Iterator[str]:
        return iter(self._now())

    def __contains__(self, value: object) -> bool:
        return value in self._now()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RegistryChoices | tuple | list):
            return self._now() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._now())

    def __repr__(self) -> str:
        return f"RegistryChoices({self._now()!r})"


@dataclass(frozen=True)
class Spec:
    """What one setting is: its type, bounds, label, help and where it applies.

    Parameters
    ----------
    kind : {"int", "float", "str", "bool", "set", "classes", "layers"}
        ``"set"`` is a tuple of choices (the baselines); ``"classes"`` a comma list of
        3 to 10 class names, or "all" (multi-class runs); ``"layers"`` a stack of layers
        (:mod:`csvm.model.layers`), None for the one-layer model.
    label, help : str
        What a widget shows; help is one line (what it does, typical range).
    group : {"data", "model", "baselines"}
        Where the widget sits.
    choices : tuple or RegistryChoices, optional
        Allowed values of a "str" or "set" field (a registry's names for the kernel and
        the regulariser).
    low, high : float, optional
        Inclusive bounds of a number.
    scale : {"linear", "log"}
        How a number is best varied (log: a widget steps through decades).
    none_label : str, optional
        The field may be None, shown with this label ("no limit", "all", …).
    models : tuple of str
        Models that use the field; the others ignore it (widgets hide it).
    param : str, optional
        The estimator keyword the field becomes (None: not an estimator parameter).
    cli : bool
        Whether ``python -m csvm train`` has a flag for it.
    kernels : sequence of str, optional
        The kernels that use the field (None: every kernel); for degree, γ and coef0 the
        registry's entries say.
    pattern : str, optional
        A "str" value matching it is allowed besides the choices.
    """

    kind: str
    label: str
    help: str
    group: str
    choices: Sequence[Any] | None = None
    low: float | None = None
    high: float | None = None
    scale: str = "linear"
    none_label: str | None = None
    models: tuple[str, ...] = _BOTH
    param: str | None = None
    cli: bool = True
    kernels: Sequence[str] | None = None
    pattern: str | None = None

    def describe_range(self) -> str:
        """The allowed values in words, for messages."""
        if self.choices is not None:
            own = " (or an uploaded dataset's own-… name)" if self.pattern else ""
            return "one of " + ", ".join(str(c) for c in self.choices) + own
        if self.kind == "classes":
            return (
                f"a comma list of {MIN_CLASSES} to {MAX_CLASSES} different classes "
                f'("0,1,2"), "all", or "none" ({self.none_label})'
            )
        if self.kind == "str":
            return "a name of up to 64 printable characters"
        if self.kind == "layers":
            return 'empty or "none" (one layer), or layers such as 5x5x2-abs-avg2,3x3x4-abs-avg2'

        if self.kind == "bool":
            return "true or false"
        low, high = fmt(self.low), fmt(self.high)
        text = f"a {'whole number' if self.kind == 'int' else 'number'} from {low} to {high}"
        if self.none_label:
            text += f', or "none" ({self.none_label})'
        return text


def fmt(value: Any) -> str:
    """A value as messages show it (floats in their shortest form)."""
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def title(name: str) -> str:
    """How messages name a setting: its label, and its URL name when that differs."""
    label = SPECS[name].label
    return name if label == name else f"{label} ({name})"


# name -> (default, Spec), in the order of RunConfig's fields.  The defaults are the
# classroom preset (mnist-5k 3 vs 5, 50 images, RBF γ 0.02, two filters, DFO₂ λ 0.1,
# relative steps of η 0.1, 10 iterations), chosen by ``bench/bench_preset.py``
# (docs/app.md, "A default that teaches").
_TABLE: dict[str, tuple[Any, Spec]] = {
    "dataset": (
        "mnist-5k",
        Spec(
            "str",
            "Dataset",
            "Which images to learn from. mnist-5k (real digits) and shapes (a bar or a "
            "cross at a random place in noise, made for teaching) ship with the app; "
            "'Your own images' in the sidebar adds a zip of your own class folders.",
            "data",
            choices=_DATASETS,
            pattern=r"own-[0-9a-f]{16}",
            cli=True,
        ),
    ),
    "classes": (
        None,
        Spec(
            "classes",
            "Classes",
            "Several classes at once: 3 to 10 of the dataset's classes, or all of them. "
            "One binary CSVM (with its own filter) is trained per sub-problem.",
            "data",
            none_label="two classes (the pair)",
        ),
    ),
    "multi_class": (
        "ovo",
        Spec(
            "str",
            "Multi-class scheme",
            "One-vs-one: a filter per pair of classes, k(k−1)/2 of them, the thesis's "
            "choice. One-vs-rest: a filter per class against all the others, k of them.",
            "data",
            choices=("ovo", "ovr"),
            param="multi_class",
        ),
    ),
    "class_a": ("3", Spec("str", "Class −1", "The class labelled −1.", "data")),
    "class_b": ("5", Spec("str", "Class +1", "The class labelled +1.", "data")),
    "n_train": (
        50,
        Spec(
            "int",
            "Training images",
            "How many training images to use. More images: "
            "slower, usually better (typical 300–2,000).",
            "data",
            low=10,
            high=60000,
            none_label="all",
        ),
    ),
    "protocol": (
        None,
        Spec(
            "str",
            "Split",
            "'thesis' uses the exact subsets of the thesis (full datasets "
            "only); otherwise a random split.",
            "data",
            choices=("thesis",),
            none_label="random split",
        ),
    ),
    "model": (
        "kcsvm",
        Spec(
            "str",
            "Model",
            "K-CSVM: kernel SVM + gradient steps on the filter (Alg. 5). "
            "L-CSVM: alternating linear SVMs for weights and filter (Alg. 4).",
            "model",
            choices=_BOTH,
        ),
    ),
    "kernel": (
        "rbf",
        Spec(
            "str",
            "Kernel",
            "Kernel on the feature maps: polynomial (γ z·z′ + c)^d, Gaussian RBF or linear.",
            "model",
            choices=RegistryChoices(KERNELS.keys),
            models=("kcsvm",),
            param="kernel",
        ),
    ),
    "degree": (
        2,
        Spec(
            "int",
            "Degree",
            "Polynomial degree d (typical 2–3).",
            "model",
            low=1,
            high=10,
            models=("kcsvm",),
            param="degree",
            kernels=RegistryChoices(lambda: kernels_using("degree")),
        ),
    ),
    "gamma": (
        0.02,
        Spec(
            "float",
            "γ",
            "Scale of the kernel (poly: 1; RBF: 0.01–0.05 for 28×28 images).",
            "model",
            low=1e-6,
            high=1e3,
            scale="log",
            models=("kcsvm",),
            param="gamma",
            kernels=RegistryChoices(lambda: kernels_using("gamma")),
        ),
    ),
    "coef0": (
        1.0,
        Spec(
            "float",
            "coef0",
            "c in (γ z·z′ + c)^d (the thesis uses 1).",
            "model",
            low=0.0,
            high=100.0,
            models=("kcsvm",),
            param="coef0",
            kernels=RegistryChoices(lambda: kernels_using("coef0")),
        ),
    ),
    "regulariser": (
        "dfo2",
        Spec(
            "str",
            "Regulariser",
            "Penalty r(f) on the filter. DFO₁ and DFO₂ penalise only a norm above 1: while "
            "the filter's norm stays below 1, λ changes nothing.",
            "model",
            choices=RegistryChoices(REGULARISERS.keys),
            models=("kcsvm",),
            param="regulariser",
        ),
    ),
    "lam": (
        0.1,
        Spec(
            "float",
            "λ",
            "Strength of the filter penalty (typical 0.01–0.1; 0 switches it off). With DFO "
            "it acts only on a filter whose norm is above 1.",
            "model",
            low=0.0,
            high=1e3,
            scale="log",
            models=("kcsvm",),
            param="lam",
        ),
    ),
    "lam_w": (
        0.1,
        Spec(
            "float",
            "λ_w",
            "Weight decay of the SVM weights (typical 0.01–0.1).",
            "model",
            low=1e-6,
            high=1e3,
            scale="log",
            models=("lcsvm",),
            param="lam_w",
        ),
    ),
    "lam_f": (
        0.1,
        Spec(
            "float",
            "λ_f",
            "Weight decay of the filter (typical 0.01–0.1).",
            "model",
            low=1e-6,
            high=1e3,
            scale="log",
            models=("lcsvm",),
            param="lam_f",
        ),
    ),
    "eta": (
        0.1,
        Spec(
            "float",
            "η",
            "Step size of the filter update (thesis 0.1). Too large and it "
            "diverges; 0 freezes the filter.",
            "model",
            low=0.0,
            high=1e6,
            scale="log",
            models=("kcsvm",),
            param="eta",
        ),
    ),
    "step": (
        "relative",
        Spec(
            "str",
            "Step rule",
            "Constant: the thesis's raw η (its effect grows with the number of images); "
            "relative: each step moves the filter by η times its own norm (works at any N); "
            "Armijo: backtracking until the objective falls.",
            "model",
            choices=("constant", "relative", "armijo"),
            models=("kcsvm",),
            param="step",
        ),
    ),
    "momentum": (
        0.0,
        Spec(
            "float",
            "Momentum",
            "Heavy-ball momentum for constant steps (0 = none, 0.9 typical).",
            "model",
            low=0.0,
            high=0.99,
            models=("kcsvm",),
            param="momentum",
        ),
    ),
    "C": (
        None,
        Spec(
            "float",
            "C",
            "Upper bound on each α (soft margin), on a log scale; 'no limit' "
            "is a hard margin, as in the thesis's MNIST runs.",
            "model",
            low=1e-20,
            high=1e6,
            scale="log",
            none_label="no limit",
            models=("kcsvm",),
            param="C",
        ),
    ),
    "C_last_only": (
        False,
        Spec(
            "bool",
            "Apply C on the last iteration only",
            "Train with no bound and apply C "
            "only on the last iteration (the thesis's CIFAR-10 schedule).",
            "model",
            models=("kcsvm",),
            param="C_last_only",
        ),
    ),
    "n_iter": (
        10,
        Spec(
            "int",
            "Iterations",
            "Number of SVM solves; the filter moves between them.",
            "model",
            low=1,
            high=1000,
            param="n_iter",
        ),
    ),
    "filter_size": (
        5,
        Spec(
            "int",
            "Filter size",
            "Each learned filter is size × size pixels (thesis 5).",
            "model",
            low=1,
            high=15,
        ),
    ),
    "n_filters": (
        2,
        Spec(
            "int",
            "Filters",
            "Several filters: their feature maps are concatenated (thesis eq. 4.12).",
            "model",
            low=1,
            high=8,
            param="n_filters",
        ),
    ),
    "layers": (
        None,
        Spec(
            "layers",
            "Layers",
            "Empty: one layer of the filters above (the thesis's model). Or a stack, "
            "e.g. 5x5x2-abs-avg2,3x3x4-abs-avg2: layer 1 has 2 filters of 5×5, then |x| "
            "and 2×2 average pooling; layer 2 has 4 filters of 3×3 over layer 1's maps. "
            "Every layer's filters are learned; -relu and -max2 also work.",
            "model",
            models=("kcsvm",),
            param="layers",
        ),
    ),
    "filter_init": (
        "uniform",
        Spec(
            "str",
            "First filters",
            "How the first filters are drawn: uniform weights (each map starts as a local "
            "average, the thesis's start), zero-mean weights (each map a local contrast, "
            "which a stack with -abs then pools), Gabor stroke detectors at spread "
            "orientations, Gaussian blurs of spread widths, HOG's oriented derivative "
            "filters (with -relu-avg4-bn2-sqrt a stack starts as a HOG descriptor), or "
            "hog-colour: the same along luminance, red-green and yellow-blue on images "
            "with R, G, B channels (on other images it is hog).",
            "model",
            choices=("uniform", "zero-mean", "gabor", "gaussian", "hog", "hog-colour"),
            models=("kcsvm",),
            param="filter_init",
        ),
    ),
    "seed": (
        0,
        Spec(
            "int",
            "Seed",
            "Seeds the first random filter and the data subsample: same seed, same run.",
            "model",
            low=0,
            high=10**6,
        ),
    ),
    "baselines": (
        ("svm", "cnn"),
        Spec(
            "set",
            "Train alongside",
            "Also train these on the same split, for comparison: the plain SVM and the "
            "small CNN, and the other ways of giving an SVM features — MKL over a fixed "
            "filter bank (which filters it weights), HOG features with an RBF SVM, the "
            "two-layer SVM — and the model the project recommends at this size "
            f"(csvm.recommended: HOG + RBF SVM up to {GRAM_LIMIT:,} images, a plain RBF SVM "
            f"above, or on images under {HOG_MIN_SIDE} px). Each gets its row, interval and "
            "McNemar test.",
            "baselines",
            choices=("svm", "cnn", "mkl", "hog", "mlsvm", "recommended"),
        ),
    ),
    "tune_baselines": (
        False,
        Spec(
            "bool",
            "Tune the baselines",
            "Tune the plain SVM (C and γ or degree) and the CNN (learning rate around its own, "
            "and 5, 10 or 20 epochs) on the validation split, with a budget of fits "
            "comparable to the CSVM's, so the comparison is fair; off: they use the CSVM's "
            "own kernel settings and the CNN's epochs as set. The CNN has the CSVM's number "
            "and size of filters.",
            "baselines",
        ),
    ),
    "cnn_epochs": (
        5,
        Spec(
            "int", "CNN epochs", "Training epochs of the small CNN.", "baselines", low=1, high=200
        ),
    ),
    "cnn_hidden": (
        100,
        Spec(
            "int",
            "Hidden units",
            "Hidden sigmoid units of the small CNN (thesis 500; 0 = linear CNN).",
            "baselines",
            low=0,
            high=2000,
        ),
    ),
    "cnn_lr": (
        0.1,
        Spec(
            "float",
            "CNN learning rate",
            "Learning rate of the small CNN (typical 0.01–0.1).",
            "baselines",
            low=1e-8,
            high=10.0,
            scale="log",
        ),
    ),
}

#: name -> Spec, in the table's order (widgets, CLI flags and messages follow it).
SPECS: dict[str, Spec] = {name: spec for name, (_, spec) in _TABLE.items()}
#: name -> default value, in the table's order (RunConfig's field defaults).
DEFAULT_VALUES: dict[str, Any] = {name: default for name, (default, _) in _TABLE.items()}
