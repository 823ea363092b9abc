"""The run settings as widgets, derived from :data:`csvm.runs.config.SPECS`.

Why a canonical copy: Streamlit forgets the state of a widget that a page does not draw,
so leaving the Train page used to reset every setting.  The session keeps one
:class:`~csvm.runs.config.RunConfig` under ``run_config`` (a plain key, which survives page
changes); widgets are seeded from it whenever their own state is missing, and every
change of a widget writes it back.  The URL holds the same settings (only valid values:
they come from a RunConfig), so a reload or a shared link restores them.
"""

from __future__ import annotations

import math
import re
from typing import Any

import streamlit as st

from csvm.runs.config import (
    MODEL_LABELS,
    SPECS,
    Problem,
    RunConfig,
    fit_to_datasets,
    parse,
)
from csvm.runs.presets import load_presets
from csvm.runs.query import from_query, to_query
from csvm.runs.values import parse_value
from explorer.glossary import explain, value_words
from explorer.widget_state import resend

CONFIG_KEY = "run_config"
#: Settings :func:`set_config` gave the widgets, until a run has drawn every one of them.
_PUSHED_KEY = "run_config_pushed"
PROBLEMS_KEY = "config_problems"
#: Messages about the form itself (fewer than three classes ticked), read by the Train page.
FORM_ERRORS_KEY = "form_errors"
_TASKS = ("Two classes", "Several classes")
#: Every settings widget's key: a value box per setting, its "none" tick box, the task.
_WIDGET_KEYS = (
    *(f"w_{name}{suffix}" for name in SPECS for suffix in ("", "__none")),
    "w_classes__task",
    "w_classes__all",
)
_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&\"'=^%@;,?/])")
_C_DECADES = [10.0**e for e in range(-20, 7)]


def c_options(current: float | None) -> list[float]:
    """The C slider's stops: every decade, plus ``current`` where it falls between two
    (a link's ``C=3.3`` is kept as it is, not snapped to a decade)."""
    if current is None or any(math.isclose(current, d) for d in _C_DECADES):
        return list(_C_DECADES)
    return sorted([*_C_DECADES, float(current)])


def _c_label(value: float) -> str:
    """A C as a class reads it: "1", "0.01", "1000" from 0.001 to 1000 (where "1e0" was
    written beside the playground's "1"), beyond them a power of ten ("1e-11")."""
    exponent = math.log10(value)
    if 1e-3 <= value <= 1e3 or not math.isclose(exponent, round(exponent)):
        return f"{value:g}"
    return f"1e{round(exponent)}"


_FORMAT = {
    "model": MODEL_LABELS.get,
    "baselines": MODEL_LABELS.get,
    # "DFO₂", not "dfo2: lam * max(0, ||f||_2 - 1)^2", which a projected sidebar cut
    # to "dfo2: lam * max(0, ||"; the About page writes each one out.
    "regulariser": value_words,
    "multi_class": {"ovo": "one-vs-one", "ovr": "one-vs-rest"}.get,
    "dataset": lambda d: f"your own images ({d})" if str(d).startswith("own-") else d,
}


def md_escape(text: Any) -> str:
    """Text that Streamlit's markdown shows literally: every ASCII punctuation escaped.

    CommonMark lets any ASCII punctuation be backslash-escaped, so no link, image, HTML
    tag, emphasis, LaTeX (``$``) or Streamlit directive (``:red[…]``) survives.
    """
    escaped = _PUNCTUATION.sub(r"\\\1", str(text)).replace("\n", " ")
    # GitHub-flavoured autolinks ("http://…", "www.…", e-mail addresses) survive escaping:
    # a zero-width space after their marker keeps them plain text.
    for marker in ("\\:\\/\\/", "www\\.", "\\@"):
        escaped = escaped.replace(marker, marker[:2] + "\u200b" + marker[2:])
    return escaped


def current_config() -> RunConfig:
    """This session's settings (restored from the URL on the first visit)."""
    restore_from_url()
    return st.session_state[CONFIG_KEY]


def app_default() -> RunConfig:
    """The settings a fresh visitor starts from: the first preset (the Classroom preset a
    class trains first), not the library's defaults (a digits pair)."""
    first = load_presets()[0]
    config, problems = parse(first["config"], source=f"the preset {first['name']!r}")
    return RunConfig() if problems else config  # a broken preset: a test names it


def restore_from_url() -> None:
    """On a session's first run: settings from the URL, with a message for each value that
    could not be used as given.  A URL with no setting at all starts from
    :func:`app_default`; one that names any setting, from the library's defaults (that is
    how :func:`sync_url` writes every link)."""
    if CONFIG_KEY in st.session_state:
        return
    query = st.query_params.to_dict()
    base = None if any(name in SPECS for name in query) else app_default()
    config, problems = from_query(query, base)
    st.session_state[CONFIG_KEY] = config
    st.session_state[PROBLEMS_KEY] = problems


def fit_to_machine(datasets: dict[str, dict]) -> RunConfig:
    """The session's settings, with a dataset, classes and split that exist here."""
    config, problems = fit_to_datasets(current_config(), datasets)
    if problems:
        st.session_state.setdefault(PROBLEMS_KEY, []).extend(problems)
        set_config(config)
    return config


def show_problems() -> None:
    """One warning per setting that was replaced, its values escaped."""
    problems: list[Problem] = st.session_state.get(PROBLEMS_KEY, [])
    for problem in problems:
        st.warning(md_escape(problem.message), icon=":material/link_off:")


def set_config(config: RunConfig) -> None:
    """Make ``config`` the session's settings and show it in the widgets.

    Call it from a callback (before the widgets are drawn) or before drawing them.
    """
    st.session_state[CONFIG_KEY] = st.session_state[_PUSHED_KEY] = config
    for key in _WIDGET_KEYS:
        st.session_state.pop(key, None)


def sync_url(extra: dict[str, str] | None = None) -> None:
    """Write the settings (and e.g. the run id) into the URL, if they changed."""
    config = current_config()
    query = to_query(config)
    if not query and config != app_default():
        # The library's defaults exactly: name one setting, or a reload would start from
        # the app's default preset instead.
        query = {"dataset": str(config.dataset)}
    query.update(extra or {})
    if query != st.query_params.to_dict():
        st.query_params.from_dict(query)


# -- one widget per field ------------------------------------------------------------------
def key_of(name: str) -> str:
    """The session-state key of a setting's widget."""
    return f"w_{name}"


def _seed(name: str, value: Any) -> None:
    """Give a widget its value from the canonical settings when its state is missing."""
    spec = SPECS[name]
    if name == "protocol":
        st.session_state.setdefault(key_of(name), value or spec.none_label)
        return
    if name == "layers":  # a text box: empty stands for one layer
        st.session_state.setdefault(key_of(name), value or "")
        return
    if name == "classes":  # the class list itself is seeded where its options are known
        st.session_state.setdefault("w_classes__task", _TASKS[value is not None])
        st.session_state.setdefault("w_classes__all", value == "all")
        return
    if spec.none_label is not None and f"w_{name}__none" not in st.session_state:
        st.session_state[f"w_{name}__none"] = value is None
    if f"w_{name}" not in st.session_state:
        if value is None:
            value = {"C": 1.0, "n_train": 600, "protocol": "thesis"}.get(name)
        if name == "C":
            value = min(c_options(value), key=lambda d: abs(math.log10(d / value)))
        if spec.kind == "set":
            value = list(value)
        st.session_state[f"w_{name}"] = value


#: Settings whose symbol has a plain-language entry in the glossary (the beginner's layer).
_PLAIN = {
    "gamma": ("γ (gamma)",),
    "lam": ("λ (lambda)", "r(f)"),
    "lam_w": ("λ (lambda)",),
    "lam_f": ("λ (lambda)",),
    "eta": ("η (eta)",),
    "regulariser": ("r(f)", "DFO₂"),
    "C": ("C",),
    "kernel": ("kernel",),
}


def _help(name: str) -> str:
    """A setting's tooltip: the plain words first (where its symbol has them), then the
    setting's own line (what it does, typical range)."""
    plain = explain(*_PLAIN[name]) + "\n\n" if name in _PLAIN else ""
    return plain + SPECS[name].help


def _number(container, name: str, disabled: bool = False) -> None:
    """A number box with no bounds of its own: a bounded box turned a typed 100000 red and
    silently kept the old value, so Start trained with it.  The value is checked against
    the setting's range in :func:`render_settings`, which names it and holds Start.

    ``value=None``: Streamlit replaces a value it cannot hold (NaN, infinity, a whole
    number beyond ±2⁵³, as a crafted websocket message can send) by the box's default.
    With the default 0 that became a silent λ = 0 or seed 0 that trained; with None the
    box is empty and :func:`render_settings` refuses it by name (:data:`_EMPTY`).
    """
    spec = SPECS[name]
    allowed = f" Allowed: {spec.describe_range()}."
    if spec.kind == "int":
        container.number_input(
            spec.label,
            value=None,
            step=1,
            key=f"w_{name}",
            help=_help(name) + allowed,
            disabled=disabled,
        )
        return
    container.number_input(
        spec.label,
        value=None,
        step=0.01 if spec.high <= 1 else 0.1,
        format="%g",
        key=f"w_{name}",
        help=_help(name) + allowed,
        disabled=disabled,
    )


#: Why a number box holds no value: emptied, or sent a value it cannot hold.
_EMPTY = "is empty or was not a finite number in reach (NaN, infinity, beyond ±2⁵³)"


def _widget(container, name: str, options: list | None = None) -> None:
    """The widget of one setting, chosen from its spec."""
    spec = SPECS[name]
    key = f"w_{name}"
    if name == "classes":
        _classes_widget(container, options or [])
        return
    if name == "C":
        container.checkbox("No limit on C (hard margin)", key="w_C__none", help=_help(name))
        if not st.session_state["w_C__none"]:
            container.select_slider(
                "C",
                c_options(st.session_state.get(key)),
                key=key,
                format_func=_c_label,
                help=_help(name),
            )
        return
    if spec.none_label is not None and name == "n_train":
        container.checkbox("Use all training images", key="w_n_train__none", help=_help(name))
        _number(container, name, disabled=st.session_state["w_n_train__none"])
        return
    if spec.kind == "layers":
        container.text_input(
            spec.label, key=key, placeholder="one layer (the thesis's model)", help=_help(name)
        )
    elif spec.kind == "bool":
        container.checkbox(spec.label, key=key, help=_help(name))
    elif spec.kind == "set":
        container.multiselect(
            spec.label,
            list(spec.choices),
            key=key,
            format_func=_FORMAT.get(name, str),
            help=_help(name),
        )
    elif spec.kind == "str":
        options = list(options if options is not None else spec.choices)
        if st.session_state.get(key) not in options:
            st.session_state[key] = _first_usable(name, options)
        if len(options) <= 3 and name in ("model", "step", "kernel"):
            container.radio(
                spec.label,
                options,
                key=key,
                horizontal=True,
                format_func=_FORMAT.get(name, str),
                help=_help(name),
            )
        else:
            container.selectbox(
                spec.label,
                options,
                key=key,
                format_func=_FORMAT.get(name, str),
                help=_help(name),
            )
    else:
        _number(container, name)


def _first_usable(name: str, options: list) -> Any:
    """The choice for a box whose value is not among its options (another dataset was
    chosen): the first, and for class +1 the first that is not class −1 (both boxes at
    the first class held Start with "Choose two different classes")."""
    if name == "class_b":
        taken = st.session_state.get(key_of("class_a"))
        return next((option for option in options if option != taken), options[0])
    return options[0]


def _read(name: str, fallback: Any) -> Any:
    """A widget's value in the RunConfig's terms (fallback: not drawn this run)."""
    key = f"w_{name}"
    if name == "protocol":
        value = st.session_state.get(key, fallback)
        return None if value in (None, SPECS[name].none_label) else value
    if name == "classes":
        return _read_classes(fallback)
    if name == "layers":
        return str(st.session_state.get(key, fallback or "")).strip() or None
    if SPECS[name].none_label is not None and st.session_state.get(f"{key}__none"):
        return None
    if key not in st.session_state:
        return fallback
    value = st.session_state[key]
    if name == "C":
        return float(value)
    if value is None and SPECS[name].kind in ("int", "float"):
        return ""  # an empty box (see _number): refused by parse, never a default
    return value


#: Settings drawn side by side (the first of each pair opens a row of two columns).
_PAIRS = {
    "class_a": "class_b",
    "degree": "coef0",
    "lam": "eta",
    "lam_w": "lam_f",
    "n_iter": "filter_size",
    "n_filters": "seed",
    "cnn_epochs": "cnn_hidden",
}
_GROUPS = (("data", "Data", True), ("model", "Model", True), ("baselines", "Baselines", False))


def _options(name: str, datasets: dict[str, dict], config: RunConfig) -> list | None:
    if name == "dataset":
        return list(datasets)
    if name in ("class_a", "class_b", "classes"):
        dataset = st.session_state.get(key_of("dataset"), config.dataset)
        return [str(c) for c in datasets[dataset]["classes"]]
    if name == "protocol":
        dataset = st.session_state.get(key_of("dataset"), config.dataset)
        full = dataset in ("mnist", "fashion-mnist", "cifar10")
        return [SPECS[name].none_label] + (["thesis"] if full else [])
    return None


#: The longest choice a half-width sidebar box shows whole (at the sidebar's default width):
#: "horizontal" or "automobile" would read "horizon" and "automo".
_HALF_WIDTH_CHARS = 7


def _fit_side_by_side(*choices: list | None) -> bool:
    """Whether paired settings' choices (None: a typed value) fit in half the sidebar each."""
    return all(len(str(c)) <= _HALF_WIDTH_CHARS for options in choices for c in options or ())


def _visible(name: str, config: RunConfig) -> bool:
    """Whether the chosen model and kernel use a setting (read live from the widgets)."""
    spec = SPECS[name]
    model = st.session_state.get(key_of("model"), config.model)
    kernel = st.session_state.get(key_of("kernel"), config.kernel)
    if model not in spec.models:
        return False
    several = st.session_state.get("w_classes__task", _TASKS[config.multiclass]) == _TASKS[1]
    if name in ("class_a", "class_b") and several:
        return False
    if name == "multi_class" and not several:
        return False
    if name == "C_last_only" and st.session_state.get("w_C__none", config.C is None):
        return False
    if name in ("filter_size", "n_filters") and st.session_state.get(key_of("layers")):
        return False  # a stack of layers names its own filters
    if name == "cnn_epochs" and st.session_state.get(
        key_of("tune_baselines"), config.tune_baselines
    ):
        return False  # the tuned CNN's epochs are chosen on validation
    return spec.kernels is None or kernel in spec.kernels


def render_settings(datasets: dict[str, dict]) -> RunConfig:
    """Every setting as a widget in the sidebar; returns (and stores) the RunConfig.

    Parameters
    ----------
    datasets : dict
        The datasets available here: name -> row of ``csvm.data.list_datasets``.
    """
    pushed = st.session_state.get(_PUSHED_KEY)
    if pushed is not None:
        # The run that was to draw these settings (a preset's, a link's) was cut short by
        # a click: the boxes it never sent still hold their old values in the browser,
        # which sent them back with the click as if chosen. Draw the settings again.
        set_config(pushed)
    config = fit_to_machine(datasets)
    st.session_state[FORM_ERRORS_KEY] = []
    for name in SPECS:
        _seed(name, getattr(config, name))
    resend(_WIDGET_KEYS)  # a run cut short must not leave the browser a box without its value
    for group, title, expanded in _GROUPS:
        with st.sidebar.expander(title, expanded=expanded):
            names = [n for n, s in SPECS.items() if s.group == group and _visible(n, config)]
            paired = set(_PAIRS.values())
            for name in names:
                if (
                    name in paired
                    and _PAIRS.get(_partner_of(name)) == name
                    and (_partner_of(name) in names)
                ):
                    continue  # drawn beside its partner
                partner = _PAIRS.get(name)
                if partner not in names:
                    _widget(st, name, _options(name, datasets, config))
                    continue
                options = _options(name, datasets, config)
                partner_options = _options(partner, datasets, config)
                if _fit_side_by_side(options, partner_options):
                    left, right = st.columns(2)
                else:
                    left = right = st  # a row each
                _widget(left, name, options)
                _widget(right, partner, partner_options)
    st.session_state.pop(_PUSHED_KEY, None)  # every box has now been sent with its value
    values = {name: _read(name, getattr(config, name)) for name in SPECS}
    new, problems = parse(values, base=config, source="the form")
    # One slot for the messages, however many: the boxes below keep their places (the
    # browser matches a box by its place, and one that moved was drawn anew, folded).
    messages = st.sidebar.container()
    for problem in problems:  # a typed value out of range: named, and Start waits
        spec = SPECS[problem.name]
        given = "" if values.get(problem.name) in (None, "") else f" = {problem.raw}"
        message = (
            f"{spec.label}{given} {_reason(problem.name, values.get(problem.name, problem.raw))}"
            f" (allowed: {spec.describe_range()}); change it to press Start."
        )
        st.session_state[FORM_ERRORS_KEY].append(message)
        messages.error(md_escape(message))
    if new != config:
        st.session_state[CONFIG_KEY] = new
        st.session_state.pop(PROBLEMS_KEY, None)  # the user has moved on from the link
    return new


def _reason(name: str, raw: Any) -> str:
    """Why a typed value cannot be used ("is out of range", "cannot be read (…)")."""
    if raw in (None, "") and SPECS[name].kind in ("int", "float"):
        return _EMPTY
    try:
        parse_value(name, raw)
    except ValueError as err:
        return str(err)
    return "is out of range"


#: Where the ticked classes wait while "All classes" hides their picker.
_PICKED = "classes__picked"


def _classes_widget(container, options: list[str]) -> None:
    """Two classes or several: the task, then (several) all classes or a choice of 3-10."""
    container.radio(
        "Task",
        _TASKS,
        key="w_classes__task",
        horizontal=True,
        help="Two classes: one binary CSVM, as in the thesis's tables. Several classes: "
        "one CSVM per pair of classes (or per class), combined by votes.",
    )
    if st.session_state["w_classes__task"] == _TASKS[0]:
        return
    # A widget that is not drawn loses its state, so the picks live on under _PICKED
    # while "All" is ticked, and come back when it is unticked.
    state = st.session_state.get("w_classes", st.session_state.get(_PICKED))
    if state is None or any(c not in options for c in state):
        # First drawn, or another dataset: the settings' classes, else the pair and one more.
        current = st.session_state[CONFIG_KEY].classes
        chosen = [c for c in (current or "").split(",") if c in options]
        if len(chosen) < 3:
            pair = [st.session_state.get(key_of(n)) for n in ("class_a", "class_b")]
            chosen = [c for c in pair if c in options]
            chosen += [c for c in options if c not in chosen][: 3 - len(chosen)]
        state = chosen
    st.session_state["w_classes"] = st.session_state[_PICKED] = list(state)
    container.checkbox(f"All {len(options)} classes", key="w_classes__all")
    if st.session_state["w_classes__all"]:
        # Not a greyed-out picker showing the earlier choice: say what will be trained.
        container.caption(f"Training on all {len(options)}: {', '.join(options)}.")
        return
    container.multiselect(
        SPECS["classes"].label,
        options,
        key="w_classes",
        max_selections=10,
        help=SPECS["classes"].help,
    )


def _read_classes(fallback: str | None) -> str | None:
    """The ``classes`` value of the form; fewer than three ticked is a form error (the
    setting keeps its last valid value and Start waits)."""
    if st.session_state.get("w_classes__task", _TASKS[fallback is not None]) == _TASKS[0]:
        return None
    if st.session_state.get("w_classes__all"):
        return "all"
    chosen = st.session_state.get("w_classes")
    if chosen is None:
        return fallback
    if len(chosen) < 3:
        st.session_state.setdefault(FORM_ERRORS_KEY, []).append(
            f"Choose at least 3 classes for a multi-class run ({len(chosen)} chosen), or "
            "switch the task to two classes."
        )
        return fallback
    return ",".join(chosen)


def _partner_of(name: str) -> str | None:
    return next((a for a, b in _PAIRS.items() if b == name), None)
