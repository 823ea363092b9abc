"""RunConfig: the one declarative home of every setting of a run.

Each field of :class:`RunConfig` carries a :class:`Spec` in its metadata: type, default,
allowed range or choices, label, one-line help, scale (log for C, η, λ, γ), the widget
that shows it and the models that use it.  Everything else derives from this table:

- the explorer's widgets (``pages/settings.py`` walks :data:`SPECS`),
- the URL round trip (:func:`to_query`, :func:`from_query`),
- validation and its messages (:func:`parse`, :meth:`RunConfig.problems`),
- estimator construction (:meth:`RunConfig.build_estimator`),
- the CLI flags (:func:`add_cli_arguments`, :func:`from_cli`),
- the presets' check, the run's export and the reproduce snippet (:func:`python_snippet`).

Parsing never raises on user input: every value that is missing, malformed, non-finite,
out of range or unknown becomes a :class:`Problem` naming the parameter, what was given
and the value used instead, so a hostile link can never crash the page nor silently
change a setting.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import pprint
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MAX_CLASSES",
    "MAX_RAW_LENGTH",
    "MIN_CLASSES",
    "MODEL_LABELS",
    "SPECS",
    "Problem",
    "RunConfig",
    "Spec",
    "add_cli_arguments",
    "fit_to_datasets",
    "from_cli",
    "from_query",
    "parse",
    "python_snippet",
    "to_query",
]

#: Longest raw value a URL or preset may hold for one setting (longer is refused unread).
MAX_RAW_LENGTH = 200
#: How many classes a multi-class run may name (every dataset here has ten).
MIN_CLASSES, MAX_CLASSES = 3, 10
MODEL_LABELS = {"kcsvm": "K-CSVM", "lcsvm": "L-CSVM", "svm": "plain SVM", "cnn": "small CNN"}
_BOTH = ("kcsvm", "lcsvm")
_DATASETS = ("mnist-5k", "digits", "mnist", "fashion-mnist", "cifar10")


@dataclass(frozen=True)
class Spec:
    """What one setting is: its type, bounds, label, help and where it applies.

    Parameters
    ----------
    kind : {"int", "float", "str", "bool", "set", "classes"}
        ``"set"`` is a tuple of choices (the baselines); ``"classes"`` a comma list of
        3 to 10 class names, or "all" (multi-class runs).
    label, help : str
        What a widget shows; help is one line (what it does, typical range).
    group : {"data", "model", "baselines"}
        Where the widget sits.
    choices : tuple, optional
        Allowed values of a "str" or "set" field.
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
    """

    kind: str
    label: str
    help: str
    group: str
    choices: tuple[Any, ...] | None = None
    low: float | None = None
    high: float | None = None
    scale: str = "linear"
    none_label: str | None = None
    models: tuple[str, ...] = _BOTH
    param: str | None = None
    cli: bool = True
    kernels: tuple[str, ...] | None = None  # kernels that use it (None: every kernel)

    def describe_range(self) -> str:
        """The allowed values in words, for messages."""
        if self.choices is not None:
            return "one of " + ", ".join(str(c) for c in self.choices)
        if self.kind == "classes":
            return (
                f"a comma list of {MIN_CLASSES} to {MAX_CLASSES} different classes "
                f'("0,1,2"), "all", or "none" ({self.none_label})'
            )
        if self.kind == "str":
            return "a name of up to 64 printable characters"
        if self.kind == "bool":
            return "true or false"
        low, high = _fmt(self.low), _fmt(self.high)
        text = f"a {'whole number' if self.kind == 'int' else 'number'} from {low} to {high}"
        if self.none_label:
            text += f', or "none" ({self.none_label})'
        return text


def _title(name: str) -> str:
    """How messages name a setting: its label, and its URL name when that differs."""
    label = SPECS[name].label
    return name if label == name else f"{label} ({name})"


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _field(default: Any, spec: Spec) -> Any:
    return field(default=default, metadata={"spec": spec})


@dataclass(frozen=True)
class RunConfig:
    """Every setting of a run, with its default: the classroom preset.

    The defaults (mnist-5k 3 vs 5, 50 images, RBF γ 0.02, two filters, DFO₂ λ 0.1,
    relative steps of η 0.1, 10 iterations) were chosen by ``bench/bench_preset.py``: the
    learned filters beat the same-kernel plain SVM on every seed, screened on five and
    confirmed on five fresh ones (docs/app.md, "A default that teaches").  The thesis's
    own recipe is in the presets.

    Frozen: change a setting with :meth:`replace`, which validates.  Use :func:`parse`
    for untrusted input (a URL, a preset, a form), which reports problems instead of
    raising.
    """

    dataset: str = _field(
        "mnist-5k",
        Spec(
            "str",
            "Dataset",
            "Which images to learn from. mnist-5k ships with the app (no download).",
            "data",
            choices=_DATASETS,
            cli=True,
        ),
    )
    classes: str | None = _field(
        None,
        Spec(
            "classes",
            "Classes",
            "Several classes at once: 3 to 10 of the dataset's classes, or all of them. "
            "One binary CSVM (with its own filter) is trained per sub-problem.",
            "data",
            none_label="two classes (the pair)",
        ),
    )
    multi_class: str = _field(
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
    )
    class_a: str = _field("3", Spec("str", "Class −1", "The class labelled −1.", "data"))
    class_b: str = _field("5", Spec("str", "Class +1", "The class labelled +1.", "data"))
    n_train: int | None = _field(
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
    )
    protocol: str | None = _field(
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
    )
    model: str = _field(
        "kcsvm",
        Spec(
            "str",
            "Model",
            "K-CSVM: kernel SVM + gradient steps on the filter (Alg. 5). "
            "L-CSVM: alternating linear SVMs for weights and filter (Alg. 4).",
            "model",
            choices=_BOTH,
        ),
    )
    kernel: str = _field(
        "rbf",
        Spec(
            "str",
            "Kernel",
            "Kernel on the feature maps: polynomial (γ z·z′ + c)^d or Gaussian RBF.",
            "model",
            choices=("poly", "rbf"),
            models=("kcsvm",),
            param="kernel",
        ),
    )
    degree: int = _field(
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
            kernels=("poly",),
        ),
    )
    gamma: float = _field(
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
        ),
    )
    coef0: float = _field(
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
            kernels=("poly",),
        ),
    )
    regulariser: str = _field(
        "dfo2",
        Spec(
            "str",
            "Regulariser",
            "Penalty r(f) on the filter. DFO keeps its norm near 1.",
            "model",
            choices=("none", "l1", "l2", "l1sq", "l2sq", "dfo1", "dfo2"),
            models=("kcsvm",),
            param="regulariser",
        ),
    )
    lam: float = _field(
        0.1,
        Spec(
            "float",
            "λ",
            "Strength of the filter penalty (typical 0.01–0.1; 0 switches it off).",
            "model",
            low=0.0,
            high=1e3,
            scale="log",
            models=("kcsvm",),
            param="lam",
        ),
    )
    lam_w: float = _field(
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
    )
    lam_f: float = _field(
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
    )
    eta: float = _field(
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
    )
    step: str = _field(
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
    )
    momentum: float = _field(
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
    )
    C: float | None = _field(
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
    )
    C_last_only: bool = _field(
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
    )
    n_iter: int = _field(
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
    )
    filter_size: int = _field(
        5,
        Spec(
            "int",
            "Filter size",
            "Each learned filter is size × size pixels (thesis 5).",
            "model",
            low=1,
            high=15,
        ),
    )
    n_filters: int = _field(
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
    )
    seed: int = _field(
        0,
        Spec(
            "int",
            "Seed",
            "Seeds the first random filter and the data subsample: same seed, same run.",
            "model",
            low=0,
            high=10**6,
        ),
    )
    baselines: tuple[str, ...] = _field(
        ("svm", "cnn"),
        Spec(
            "set",
            "Train alongside",
            "Also train these on the same split, for comparison.",
            "baselines",
            choices=("svm", "cnn"),
        ),
    )
    tune_baselines: bool = _field(
        False,
        Spec(
            "bool",
            "Tune the baselines",
            "Tune the plain SVM (C and γ or degree) and the CNN (learning rate, epochs) on the "
            "validation split, with a budget of fits comparable to the CSVM's, so the "
            "comparison is fair; off: they use the CSVM's own kernel settings.",
            "baselines",
        ),
    )
    cnn_epochs: int = _field(
        5,
        Spec(
            "int", "CNN epochs", "Training epochs of the small CNN.", "baselines", low=1, high=200
        ),
    )
    cnn_hidden: int = _field(
        100,
        Spec(
            "int",
            "Hidden units",
            "Hidden sigmoid units of the small CNN (thesis 500; 0 = linear CNN).",
            "baselines",
            low=0,
            high=2000,
        ),
    )
    cnn_lr: float = _field(
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
    )

    def __post_init__(self) -> None:
        # Every RunConfig is valid field by field, however it was made; values are
        # normalised to their canonical types (a list of baselines becomes a tuple).
        for item in dataclasses.fields(self):
            raw = getattr(self, item.name)
            try:
                value = _parse_one(item.name, raw)
            except ValueError as reason:
                spec = SPECS[item.name]
                raise ValueError(
                    f"{_title(item.name)} = {_shorten(repr(raw))} {reason}; allowed is "
                    f"{spec.describe_range()}."
                ) from None
            if value != raw or type(value) is not type(raw):
                object.__setattr__(self, item.name, value)

    # -- derived views ------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Plain values (the baselines as a list), as jobs and JSON exports take them."""
        out = dataclasses.asdict(self)
        out["baselines"] = list(self.baselines)
        return out

    def replace(self, **changes: Any) -> RunConfig:
        """A copy with some settings changed; raises ValueError naming any bad value."""
        return dataclasses.replace(self, **changes)

    @property
    def multiclass(self) -> bool:
        """Whether this run trains several classes (``classes`` set) rather than a pair."""
        return self.classes is not None

    def class_list(self, names: Iterable[str]) -> list[str]:
        """The classes of a multi-class run, as the dataset spells them.

        Parameters
        ----------
        names : iterable of str
            The dataset's class names.

        Returns
        -------
        list of str
            In the order given ("all": the dataset's order).

        Raises
        ------
        ValueError
            When a class is not one of ``names`` (the message lists them), or when the run
            is a pair run.
        """
        names = [str(n) for n in names]
        if self.classes is None:
            raise ValueError("This run trains a pair (class_a, class_b), not several classes.")
        if self.classes == "all":
            return names
        lower = {n.lower(): n for n in names}
        out = []
        for item in self.classes.split(","):
            if item.lower() not in lower:
                raise ValueError(
                    f"Classes: {_shorten(item)!r} is not a class of {self.dataset}; "
                    f"choose among {', '.join(names)}."
                )
            out.append(lower[item.lower()])
        return out

    def n_sub_problems(self, n_classes: int) -> int:
        """Binary sub-problems of a run on ``n_classes`` classes: one for a pair,
        k(k−1)/2 one-vs-one, k one-vs-rest."""
        k = int(n_classes)
        if k <= 2:
            return 1
        return k * (k - 1) // 2 if self.multi_class == "ovo" else k

    def uses(self, name: str) -> bool:
        """Whether the chosen model (and kernel) uses a setting."""
        spec = SPECS[name]
        if self.model not in spec.models:
            return False
        return spec.kernels is None or self.kernel in spec.kernels

    def differences(self, other: RunConfig) -> list[str]:
        """Names of the settings that differ from ``other``, in table order."""
        return [n for n in SPECS if getattr(self, n) != getattr(other, n)]

    def problems(
        self,
        image_shape: tuple[int, ...] | None = None,
        n_available: int | None = None,
        classes: Iterable[str] | None = None,
    ) -> list[str]:
        """Everything wrong with this combination of settings, as messages that say what
        to change (each value alone is already valid: the checks here are across fields
        and against the chosen dataset).

        Parameters
        ----------
        image_shape : tuple, optional
            ``(C, H, W)`` of the chosen dataset, to check the filter size.
        n_available : int, optional
            Training images available for the chosen pair.
        classes : iterable of str, optional
            The dataset's class names.
        """
        errors = []
        if self.multiclass:
            if classes is not None:
                try:
                    self.class_list(classes)
                except ValueError as reason:
                    errors.append(str(reason))
        elif self.class_a == self.class_b:
            errors.append("Choose two different classes: the pair needs a class for each side.")
        if classes is not None and not self.multiclass:
            names = [str(c) for c in classes]
            for name, value in (("Class −1", self.class_a), ("Class +1", self.class_b)):
                if value not in names:
                    errors.append(
                        f"{name}: {value!r} is not a class of {self.dataset}; "
                        f"choose one of {', '.join(names)}."
                    )
        if self.eta == 0 and self.step == "armijo" and self.model == "kcsvm":
            errors.append(
                "η = 0 freezes the filter; Armijo's line search needs η > 0: "
                "choose the constant or relative step."
            )
        if self.momentum and self.step == "armijo" and self.model == "kcsvm":
            errors.append(
                "Momentum applies to the constant step rule only: set it to 0 "
                "or choose the constant step."
            )
        if image_shape is not None:
            h, w = image_shape[-2:]
            if self.filter_size > min(h, w):
                errors.append(
                    f"The filter ({self.filter_size}×{self.filter_size}) is larger "
                    f"than the image ({h}×{w}): choose a size up to {min(h, w)}."
                )
        if n_available is not None and self.n_train is not None and self.n_train > n_available:
            what = "these classes" if self.multiclass else "this pair"
            errors.append(
                f"Only {n_available} training images of {what} exist: lower the training-set size."
            )
        return errors

    def estimator_params(self, image_shape: tuple[int, ...]) -> dict[str, Any]:
        """The keyword arguments of the CSVM this configuration describes."""
        params = {
            spec.param: getattr(self, name)
            for name, spec in SPECS.items()
            if spec.param is not None and self.model in spec.models
        }
        params.update(
            image_shape=tuple(int(s) for s in image_shape),
            filter_shape=(self.filter_size, self.filter_size),
            random_state=self.seed,
        )
        return params

    def build_estimator(self, image_shape: tuple[int, ...]):
        """The unfitted KernelCSVM or LinearCSVM with these settings.

        Parameters
        ----------
        image_shape : tuple of int
            ``(C, H, W)`` (or ``(H, W)``) of the images it will be trained on.
        """
        from csvm.model.kernelised import KernelCSVM
        from csvm.model.linear import LinearCSVM

        cls = LinearCSVM if self.model == "lcsvm" else KernelCSVM
        return cls(**self.estimator_params(image_shape))


#: name -> Spec, in the table's order (widgets, CLI flags and messages follow it).
SPECS: dict[str, Spec] = {f.name: f.metadata["spec"] for f in dataclasses.fields(RunConfig)}


def fit_to_datasets(
    config: RunConfig, datasets: Mapping[str, Mapping[str, Any]]
) -> tuple[RunConfig, list[Problem]]:
    """Make a configuration usable with the datasets on this machine.

    Parameters
    ----------
    config : RunConfig
    datasets : mapping
        Available dataset name -> its row of :func:`csvm.data.list_datasets` (at least
        ``classes``).

    Returns
    -------
    config : RunConfig
        The same, or with the dataset, classes or split replaced by usable values.
    problems : list of Problem
        One per replaced value, saying what was asked for and what is used instead.
    """
    problems: list[Problem] = []
    changes: dict[str, Any] = {}
    if config.dataset not in datasets:
        used = _DEFAULTS.dataset if _DEFAULTS.dataset in datasets else next(iter(datasets))
        changes["dataset"] = used
        problems.append(
            Problem(
                "dataset",
                config.dataset,
                used,
                f"Dataset {config.dataset!r} is not on this machine, so {used} is used instead. "
                f"Fetch it with: python -m csvm data fetch {config.dataset}",
            )
        )
    dataset = changes.get("dataset", config.dataset)
    classes = [str(c) for c in datasets[dataset]["classes"]]
    for name, fallback in (("class_a", 0), ("class_b", 1)):
        value = getattr(config, name)
        if value not in classes:
            default = getattr(_DEFAULTS, name)
            used = default if default in classes else classes[fallback]
            changes[name] = used
            problems.append(
                Problem(
                    name,
                    _shorten(value),
                    used,
                    f"{_title(name)}: {_shorten(value)!r} is not a class of "
                    f"{dataset}; using {used} instead.",
                )
            )
    if config.classes is not None:
        try:
            dataclasses.replace(config, dataset=dataset).class_list(classes)
        except ValueError as reason:
            changes["classes"] = None
            problems.append(
                Problem(
                    "classes",
                    _shorten(config.classes),
                    None,
                    f"{reason} Training the pair {changes.get('class_a', config.class_a)} / "
                    f"{changes.get('class_b', config.class_b)} instead.",
                )
            )
    if config.protocol == "thesis" and dataset not in ("mnist", "fashion-mnist", "cifar10"):
        changes["protocol"] = None
        problems.append(
            Problem(
                "protocol",
                "thesis",
                None,
                f"The thesis split exists for the full datasets only, not {dataset}; using a "
                "random split instead.",
            )
        )
    return dataclasses.replace(config, **changes), problems


@dataclass(frozen=True)
class Problem:
    """One setting that could not be used as given.

    ``message`` is plain text (never markdown): it quotes the raw value, shortened, with
    ``repr`` so that a page can show it escaped.
    """

    name: str
    raw: str
    used: Any
    message: str


def _shorten(raw: str, limit: int = 40) -> str:
    return raw if len(raw) <= limit else raw[:limit] + f"… ({len(raw)} characters)"


def _show(name: str, value: Any) -> str:
    if value is None:
        return SPECS[name].none_label or "none"
    if isinstance(value, tuple):
        return ", ".join(value) or "none"
    return _fmt(value)


def _parse_number(spec: Spec, raw: Any) -> float | int:
    """A finite number of the spec's kind, or ValueError saying why not."""
    if isinstance(raw, bool):
        raise ValueError("is not a number")
    if isinstance(raw, int | float):
        value = float(raw)
    else:
        text = str(raw).strip()
        try:
            value = float(text)
        except ValueError:
            raise ValueError("is not a number") from None
    if not math.isfinite(value):
        raise ValueError("is not a finite number")
    if spec.kind == "int":
        if value != int(value):
            raise ValueError("is not a whole number")
        return int(value)
    return value


def _parse_one(name: str, raw: Any) -> Any:
    """The value of one setting from a raw value (str from a URL, or a typed value).

    Raises ValueError with the reason (without the parameter's name) when it cannot be used.
    """
    spec = SPECS[name]
    if isinstance(raw, str) and len(raw) > MAX_RAW_LENGTH:
        raise ValueError(f"is too long ({len(raw)} characters)")
    is_none = raw is None or (
        isinstance(raw, str) and raw.strip().lower() in ("none", "null") and spec.kind != "str"
    )
    if spec.kind == "classes":
        return _parse_classes(raw)
    if spec.none_label is not None and (
        is_none or (isinstance(raw, str) and raw.strip() == spec.none_label)
    ):
        return None
    if raw is None and spec.kind != "set":
        raise ValueError("cannot be empty")
    if spec.kind == "bool":
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off"):
            return False
        raise ValueError("is not true or false")
    if spec.kind == "set":
        if raw is None:
            items: list[str] = []
        elif isinstance(raw, str):
            items = [s.strip() for s in raw.split(",") if s.strip() and s.strip() != "-"]
        else:
            items = [str(s) for s in raw]
        unknown = [s for s in items if s not in spec.choices]
        if unknown:
            raise ValueError(f"holds an unknown choice {_shorten(unknown[0])!r}")
        return tuple(c for c in spec.choices if c in items)  # canonical order, no repeats
    if spec.kind == "str":
        if not isinstance(raw, str | int) or isinstance(raw, bool):
            raise ValueError("is not text")
        value = str(raw).strip()
        if spec.choices is not None and value not in spec.choices:
            raise ValueError("is not a known choice")
        if not value or len(value) > 64 or not value.isprintable():
            raise ValueError("is not a valid name")
        return value
    value = _parse_number(spec, raw)
    if (spec.low is not None and value < spec.low) or (spec.high is not None and value > spec.high):
        raise ValueError("is out of range")
    return value


def _parse_classes(raw: Any) -> str | None:
    """The canonical ``classes`` value: None (a pair), "all", or "a,b,c" (3 to 10 different
    names, stripped, in the order given).  Which names exist depends on the dataset: that
    is checked by :meth:`RunConfig.class_list`."""
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise ValueError("is not text")
    text = raw.strip()
    if text.lower() in ("", "none", "null", "pair", SPECS["classes"].none_label):
        return None
    if text.lower() == "all":
        return "all"
    items = [s.strip() for s in text.split(",")]
    if any(not s or len(s) > 64 or not s.isprintable() for s in items):
        raise ValueError("holds an empty or invalid class name")
    seen: set[str] = set()
    for item in items:
        if item.lower() in seen:
            raise ValueError(f"names the class {_shorten(item)!r} twice")
        seen.add(item.lower())
    if not MIN_CLASSES <= len(items) <= MAX_CLASSES:
        raise ValueError(f"names {len(items)} class{'es' if len(items) != 1 else ''}")
    return ",".join(items)


_DEFAULTS = RunConfig()


def parse(
    values: Mapping[str, Any], base: RunConfig | None = None, *, source: str = "the link"
) -> tuple[RunConfig, list[Problem]]:
    """A RunConfig from untrusted values, and every problem met on the way.

    Parameters
    ----------
    values : mapping
        Setting name -> value (strings from a URL, or typed values); unknown names are
        reported, missing ones keep ``base``'s value.
    base : RunConfig, optional
        Where missing and refused values come from (default: the defaults).
    source : str
        Named in messages ("the link", "the preset 'X'").

    Returns
    -------
    config : RunConfig
        Always valid field by field.
    problems : list of Problem
        One per value that was not used as given, naming the parameter and the value used
        instead.  Never raises for bad input.
    """
    base = base or _DEFAULTS
    chosen: dict[str, Any] = {}
    problems: list[Problem] = []
    for name, raw in values.items():
        if name not in SPECS:
            shown = _shorten(str(name))
            problems.append(
                Problem(
                    str(name)[:40],
                    "",
                    None,
                    f"{source} names an unknown setting {shown!r}; it was ignored.",
                )
            )
            continue
        try:
            chosen[name] = _parse_one(name, raw)
        except ValueError as reason:
            spec = SPECS[name]
            used = getattr(base, name)
            raw_text = _shorten(str(raw))
            problems.append(
                Problem(
                    name,
                    raw_text,
                    used,
                    f"{_title(name)} from {source}: {raw_text!r} {reason}; allowed is "
                    f"{spec.describe_range()}. Using {_show(name, used)} instead.",
                )
            )
    return dataclasses.replace(base, **chosen), problems


# -- URL ----------------------------------------------------------------------------------
def to_query(config: RunConfig) -> dict[str, str]:
    """The settings that differ from the defaults, as URL query parameters.

    ``None`` is written "none", the baselines comma-separated ("-" for none); numbers with
    ``repr`` so that they read back exactly.
    """
    out = {}
    for name in SPECS:
        value = getattr(config, name)
        if value == getattr(_DEFAULTS, name):
            continue
        if value is None:
            out[name] = "none"
        elif isinstance(value, tuple):
            out[name] = ",".join(value) or "-"
        elif isinstance(value, bool):
            out[name] = "true" if value else "false"
        else:
            out[name] = repr(value) if isinstance(value, float) else str(value)
    return out


def from_query(
    query: Mapping[str, str], base: RunConfig | None = None
) -> tuple[RunConfig, list[Problem]]:
    """Settings from URL query parameters; keys that are not settings are skipped.

    Parameters
    ----------
    query : mapping of str to str
        The page's query parameters (it may hold other keys, such as the run id).
    base : RunConfig, optional
        Values for settings the URL does not name (default: the defaults).
    """
    return parse({k: v for k, v in query.items() if k in SPECS}, base)


# -- CLI ----------------------------------------------------------------------------------
def _cli_type(name: str):
    def convert(text: str) -> Any:
        try:
            return _parse_one(name, text)
        except ValueError as reason:
            raise argparse.ArgumentTypeError(
                f"{text!r} {reason}; allowed is {SPECS[name].describe_range()}"
            ) from None

    convert.__name__ = SPECS[name].kind
    return convert


def add_cli_arguments(parser: argparse.ArgumentParser, skip: Iterable[str] = ()) -> None:
    """A ``--flag`` for every setting (``--n-iter``, ``--C``, …), checked by the table.

    Defaults are left unset (None), so :func:`from_cli` can tell a given flag from an
    omitted one.
    """
    group = parser.add_argument_group("run settings (see csvm.runs.config.RunConfig)")
    for name, spec in SPECS.items():
        if not spec.cli or name in skip:
            continue
        default = _show(name, getattr(_DEFAULTS, name))
        group.add_argument(
            f"--{name.replace('_', '-')}" if name != "C" else "--C",
            dest=f"cfg_{name}",
            type=_cli_type(name),
            default=argparse.SUPPRESS,
            metavar=spec.kind.upper(),
            help=f"{spec.help} Default {default}.",
        )


def from_cli(args: argparse.Namespace, base: RunConfig | None = None) -> RunConfig:
    """The RunConfig given on the command line (flags from :func:`add_cli_arguments`)."""
    base = base or _DEFAULTS
    given = {k[4:]: v for k, v in vars(args).items() if k.startswith("cfg_")}
    return dataclasses.replace(base, **given)


# -- export -------------------------------------------------------------------------------
def python_snippet(config: RunConfig) -> str:
    """A Python script that reproduces a run with the library.

    The settings are written with :func:`pprint.pformat` (Python literals, not JSON), and
    read back through :func:`parse`, so the script refuses what the app would refuse.
    """
    values = textwrap.indent(pprint.pformat(config.to_dict(), sort_dicts=False, width=84), "    ")
    if config.multiclass:
        return f'''"""Reproduce a multi-class CSVM Explorer run with the csvm library."""

from csvm.runs.config import parse
from csvm.runs.targets import load_data

config, problems = parse(
{values}
)
assert not problems, problems
data = load_data(config)  # the chosen classes, labelled 0..k-1 in the order given
clf = config.build_estimator(data.image_shape)
clf.fit(data.X_train, data.y_train,
        callback=lambda e: print(e["pair"], e["iteration"], e["objective"]))
print("test accuracy:", clf.score(data.X_test, data.y_test))
'''
    return f'''"""Reproduce a CSVM Explorer run with the csvm library."""

from csvm.runs.config import parse
from csvm.data import load_pair

config, problems = parse(
{values}
)
assert not problems, problems
data = load_pair(config.dataset, config.class_a, config.class_b,
                 protocol=config.protocol, n_train=config.n_train,
                 random_state=config.seed)
clf = config.build_estimator(data.image_shape)
clf.fit(data.X_train, data.y_train,
        callback=lambda e: print(e["iteration"], e["step"], e["objective"]))
print("test accuracy:", clf.score(data.X_test, data.y_test))
'''
