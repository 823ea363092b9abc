"""RunConfig: the one declarative home of every setting of a run.

Each field of :class:`RunConfig` is an entry of the table in :mod:`csvm.runs.fields`
(type, default, allowed range or choices, label, one-line help, scale, the models that
use it), carried as a :class:`~csvm.runs.fields.Spec` in the field's metadata.  This
module holds the dataclass, cross-field checks (:meth:`RunConfig.problems`), estimator
construction (:meth:`RunConfig.build_estimator`) and parsing of untrusted values
(:func:`parse`, :func:`fit_to_datasets`).  The rest derives from the same table in
modules of its own: :mod:`csvm.runs.query` (the URL round trip), :mod:`csvm.runs.flags`
(the CLI flags), :mod:`csvm.runs.snippet` (the reproduce script) and
:mod:`csvm.runs.values` (one raw value checked).

Parsing never raises on user input: every value that is missing, malformed, non-finite,
out of range or unknown becomes a :class:`Problem` naming the parameter, what was given
and the value used instead, so a hostile link can never crash the page nor silently
change a setting.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from csvm.runs.fields import (
    DEFAULT_VALUES,
    MAX_CLASSES,
    MAX_RAW_LENGTH,
    MIN_CLASSES,
    MODEL_LABELS,
    SPECS,
    Spec,
    title,
)
from csvm.runs.values import parse_value, shorten, show

__all__ = [
    "DEFAULTS",
    "MAX_CLASSES",
    "MAX_RAW_LENGTH",
    "MIN_CLASSES",
    "MODEL_LABELS",
    "SPECS",
    "Problem",
    "RunConfig",
    "Spec",
    "fit_to_datasets",
    "parse",
]


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


def _field(name: str) -> Any:
    """A dataclass field with the table's default, and its Spec in the metadata."""
    return field(default=DEFAULT_VALUES[name], metadata={"spec": SPECS[name]})


@dataclass(frozen=True)
class RunConfig:
    """Every setting of a run, with its default: the classroom preset.

    The defaults (mnist-5k 3 vs 5, 50 images, RBF γ 0.02, two filters, DFO₂ λ 0.1,
    relative steps of η 0.1, 10 iterations) were chosen by ``bench/bench_preset.py``: the
    learned filters beat the same-kernel plain SVM on every seed, screened on five and
    confirmed on five fresh ones (docs/app.md, "A default that teaches").  The thesis's
    own recipe is in the presets.

    Frozen: change a setting with :meth:`replace`, which validates.  Use
    :func:`csvm.runs.config.parse` for untrusted input (a URL, a preset, a form), which
    reports problems instead of raising.

    Parameters
    ----------
    dataset, classes, multi_class, class_a, class_b, n_train, protocol, model, kernel, ...
        Every field is a setting of the one table, :data:`csvm.runs.fields.SPECS`: its
        type, default, range or choices, label and help are there (``csvm train --help``
        prints them all, one flag each).  A value outside its range raises ValueError
        naming the setting and what is allowed.

    Examples
    --------
    >>> from csvm.runs.config import RunConfig
    >>> config = RunConfig(n_iter=5, gamma=0.1)
    >>> config.n_iter, config.dataset, config.baselines
    (5, 'mnist-5k', ('svm', 'cnn'))
    >>> config.replace(n_filters=4).n_filters
    4
    >>> try:
    ...     RunConfig(n_iter=0)
    ... except ValueError as err:
    ...     print(str(err).split(";")[0])
    Iterations (n_iter) = 0 is out of range
    """

    dataset: str = _field("dataset")
    classes: str | None = _field("classes")
    multi_class: str = _field("multi_class")
    class_a: str = _field("class_a")
    class_b: str = _field("class_b")
    n_train: int | None = _field("n_train")
    protocol: str | None = _field("protocol")
    model: str = _field("model")
    kernel: str = _field("kernel")
    degree: int = _field("degree")
    gamma: float = _field("gamma")
    coef0: float = _field("coef0")
    regulariser: str = _field("regulariser")
    lam: float = _field("lam")
    lam_w: float = _field("lam_w")
    lam_f: float = _field("lam_f")
    eta: float = _field("eta")
    step: str = _field("step")
    momentum: float = _field("momentum")
    C: float | None = _field("C")
    C_last_only: bool = _field("C_last_only")
    n_iter: int = _field("n_iter")
    filter_size: int = _field("filter_size")
    n_filters: int = _field("n_filters")
    layers: str | None = _field("layers")
    filter_init: str = _field("filter_init")
    seed: int = _field("seed")
    baselines: tuple[str, ...] = _field("baselines")
    tune_baselines: bool = _field("tune_baselines")
    cnn_epochs: int = _field("cnn_epochs")
    cnn_hidden: int = _field("cnn_hidden")
    cnn_lr: float = _field("cnn_lr")

    def __post_init__(self) -> None:
        # Every RunConfig is valid field by field, however it was made; values are
        # normalised to their canonical types (a list of baselines becomes a tuple).
        for item in dataclasses.fields(self):
            raw = getattr(self, item.name)
            try:
                value = parse_value(item.name, raw)
            except ValueError as reason:
                spec = SPECS[item.name]
                raise ValueError(
                    f"{title(item.name)} = {shorten(repr(raw))} {reason}; allowed is "
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
                    f"Classes: {shorten(item)!r} is not a class of {self.dataset}; "
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
        if name in _LAYERS_REPLACE and self.layers and self.model == "kcsvm":
            return False
        if name == "cnn_epochs" and self.tune_baselines:  # then chosen on validation
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
        if image_shape is not None and self.layers and self.model == "kcsvm":
            # The stack names its own filter sizes; the one-layer size check does not apply.
            errors.extend(_layer_problems(self.layers, image_shape))
        elif image_shape is not None:
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
        if params.get("layers", "") is None:
            del params["layers"]  # the estimator's default: scripts written before it agree
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


#: The settings a stack of layers replaces (its first layer names its filters).
_LAYERS_REPLACE = ("filter_size", "n_filters")


def _layer_problems(layers: str, image_shape: tuple[int, ...]) -> list[str]:
    """Why a stack of layers does not fit these images (empty when it does)."""
    from csvm.model.layers import Network, parse_layers

    shape = tuple(int(s) for s in image_shape)
    try:
        Network(parse_layers(layers), shape if len(shape) == 3 else (1, *shape))
    except ValueError as err:
        return [f"Layers {layers!r}: {err}"]
    return []


# The class's fields are the table's entries, in its order (widgets and flags follow it).
assert [f.name for f in dataclasses.fields(RunConfig)] == list(SPECS)

#: The default settings (the classroom preset).
DEFAULTS = RunConfig()


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
    base = base or DEFAULTS
    chosen: dict[str, Any] = {}
    problems: list[Problem] = []
    for name, raw in values.items():
        if name not in SPECS:
            shown = shorten(str(name))
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
            chosen[name] = parse_value(name, raw)
        except ValueError as reason:
            spec = SPECS[name]
            used = getattr(base, name)
            raw_text = shorten(str(raw))
            problems.append(
                Problem(
                    name,
                    raw_text,
                    used,
                    f"{title(name)} from {source}: {raw_text!r} {reason}; allowed is "
                    f"{spec.describe_range()}. Using {show(name, used)} instead.",
                )
            )
    return dataclasses.replace(base, **chosen), problems


def _missing(dataset: str, used: str) -> str:
    """Why ``dataset`` is replaced by ``used``, and the true way to get it."""
    if re.fullmatch(SPECS["dataset"].pattern or "", dataset):  # an upload: nothing fetches it
        return (
            f"The uploaded images {dataset!r} are not available here: they belong to the "
            "browser that uploaded them and are removed from the server soon after no "
            f"page or run of it uses them. {used} is used instead; to train on your own "
            "images, upload their zip in the Train page's 'Your own images' box."
        )
    return (
        f"Dataset {dataset!r} is not on this machine, so {used} is used instead. "
        f"Fetch it with: python -m csvm data fetch {dataset}"
    )


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
        used = DEFAULTS.dataset if DEFAULTS.dataset in datasets else next(iter(datasets))
        changes["dataset"] = used
        problems.append(Problem("dataset", config.dataset, used, _missing(config.dataset, used)))
    dataset = changes.get("dataset", config.dataset)
    classes = [str(c) for c in datasets[dataset]["classes"]]
    for name, fallback in (("class_a", 0), ("class_b", 1)):
        value = getattr(config, name)
        if value not in classes:
            default = getattr(DEFAULTS, name)
            used = default if default in classes else classes[fallback]
            changes[name] = used
            problems.append(
                Problem(
                    name,
                    shorten(value),
                    used,
                    f"{title(name)}: {shorten(value)!r} is not a class of "
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
                    shorten(config.classes),
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
