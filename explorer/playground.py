"""The SVM playground's state as plain Python: settings, placed points, the URL, playback.

Nothing here imports Streamlit, so every rule (bounds, hostile URL values, clicks, the
SMO playback) is testable on its own.  The URL keys all start with ``pg_`` so that they
never collide with the Train page's settings (``C``, ``kernel``, ``gamma`` …).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import numpy as np

from csvm.data.toy2d import LIMIT, N_MAX, N_MIN

__all__ = [
    "Click",
    "Playback",
    "Problem",
    "Settings",
    "Steps",
    "add_point",
    "as_points",
    "carry_params",
    "click_axis",
    "decision_grid",
    "decision_values",
    "decode_points",
    "encode_points",
    "estimator",
    "from_query",
    "grid_axis",
    "make_data",
    "points_arrays",
    "record_steps",
    "remove_point",
    "resolve_click",
    "settings_dict",
    "solvable",
    "tick",
    "to_query",
]

PREFIX = "pg_"
DATASETS = ("blobs", "moons", "circles", "xor", "spirals", "placed")
KERNELS = ("linear", "poly", "rbf")
VIEWS = ("solution", "smo", "lift")
#: The most points a URL (or a teacher) may place; the generators' own bound.
MAX_POINTS = N_MAX
#: Coordinates are kept to two decimals (the URL stays about 12 characters a point).
DECIMALS = 2
#: Longest URL value read for the points (12 characters a point, with room to spare).
MAX_POINTS_CHARS = 16 * MAX_POINTS
_MAX_SHOWN = 40  # characters of a hostile value quoted back in a message


def _log_options(lo: int, hi: int, per_decade: int = 4) -> tuple[float, ...]:
    """10**(k/per_decade) for k from lo*per_decade to hi*per_decade, three digits."""
    return tuple(
        float(f"{10 ** (k / per_decade):.3g}") for k in range(lo * per_decade, hi * per_decade + 1)
    )


C_OPTIONS = _log_options(-2, 4)
GAMMA_OPTIONS = _log_options(-2, 2)
NOISE_RANGE, OVERLAP_RANGE, COEF0_RANGE = (0.0, 1.0), (0.0, 1.0), (-3.0, 3.0)
DEGREE_RANGE, SEED_RANGE = (1, 6), (0, 9999)


@dataclass(frozen=True)
class Settings:
    """Every setting of the playground (the placed points are kept beside it)."""

    data: str = "blobs"
    n: int = 100
    noise: float = 0.15
    overlap: float = 0.3
    seed: int = 0
    kernel: str = "linear"
    degree: int = 2
    gamma: float = 1.0
    coef0: float = 1.0
    C: float = 1.0
    hard: bool = False
    view: str = "solution"
    add: int = 1  # the class a click places

    @property
    def c_value(self) -> float | None:
        """``C`` for the solver: None for the hard margin."""
        return None if self.hard else self.C


DEFAULT = Settings()
Point = tuple[float, float, int]


@dataclass(frozen=True)
class Problem:
    """A URL value that could not be used as given, and what was used instead."""

    key: str
    message: str


def _shown(value: Any) -> str:
    text = str(value)
    return repr(text if len(text) <= _MAX_SHOWN else text[:_MAX_SHOWN] + "…")


# -- parsing one value ----------------------------------------------------------------------
def _choice(raw: str, options: Sequence[str]) -> str:
    if raw not in options:
        raise ValueError(f"is not one of {', '.join(options)}")
    return raw


def _float(raw: str) -> float:
    try:
        return float(raw)
    except ValueError:
        raise ValueError("is not a number") from None


def _number(raw: str, lo: float, hi: float, step: float | None = None) -> float:
    value = _float(raw)
    if not math.isfinite(value):
        raise ValueError("is not a finite number")
    if not lo <= value <= hi:
        raise ValueError(f"is outside {lo:g} … {hi:g}")
    return round(round(value / step) * step, 10) if step else value


def _integer(raw: str, lo: int, hi: int) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise ValueError("is not a whole number") from None
    if not lo <= value <= hi:
        raise ValueError(f"is outside {lo} … {hi}")
    return value


def _on_scale(raw: str, options: Sequence[float]) -> float:
    value = _float(raw)
    if not (math.isfinite(value) and value > 0):
        raise ValueError("is not a positive number")
    if not options[0] / 1.01 <= value <= options[-1] * 1.01:
        raise ValueError(f"is outside {options[0]:g} … {options[-1]:g}")
    return min(options, key=lambda o: abs(math.log(o / value)))


def _flag(raw: str) -> bool:
    if raw not in ("0", "1"):
        raise ValueError("is not 0 or 1")
    return raw == "1"


_PARSERS = {
    "data": lambda r: _choice(r, DATASETS),
    "n": lambda r: _integer(r, N_MIN, N_MAX),
    "noise": lambda r: _number(r, *NOISE_RANGE, 0.05),
    "overlap": lambda r: _number(r, *OVERLAP_RANGE, 0.05),
    "seed": lambda r: _integer(r, *SEED_RANGE),
    "kernel": lambda r: _choice(r, KERNELS),
    "degree": lambda r: _integer(r, *DEGREE_RANGE),
    "gamma": lambda r: _on_scale(r, GAMMA_OPTIONS),
    "coef0": lambda r: _number(r, *COEF0_RANGE, 0.5),
    "C": lambda r: _on_scale(r, C_OPTIONS),
    "hard": _flag,
    "view": lambda r: _choice(r, VIEWS),
    "add": lambda r: int(_choice(r, ("1", "-1"))),
}


def _write(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


# -- points -------------------------------------------------------------------------------
def encode_points(points: Sequence[Point]) -> dict[str, str]:
    """The points as two URL values, ``pg_pos`` and ``pg_neg``: ``x_y_x_y…`` (characters
    that URLs keep as they are)."""
    out = {}
    for key, label in (("pos", 1), ("neg", -1)):
        coords = [f"{v:.{DECIMALS}f}" for x, y, c in points if c == label for v in (x, y)]
        if coords:
            out[PREFIX + key] = "_".join(c.replace("-0.00", "0.00") for c in coords)
    return out


def decode_points(query: Mapping[str, str]) -> tuple[tuple[Point, ...], list[Problem]]:
    """Placed points from ``pg_pos`` / ``pg_neg``; each unusable part is named once and
    left out, coordinates are clipped to the square, at most ``MAX_POINTS`` are kept."""
    points: list[Point] = []
    problems: list[Problem] = []
    for key, label in (("pos", 1), ("neg", -1)):
        name = PREFIX + key
        raw = str(query.get(name, ""))
        if not raw:
            continue
        if len(raw) > MAX_POINTS_CHARS:
            problems.append(
                Problem(
                    name,
                    f"{name} is longer than {MAX_POINTS_CHARS} "
                    "characters; only its beginning was read.",
                )
            )
            raw = raw[:MAX_POINTS_CHARS]
        values, bad, clipped = [], [], False
        for token in raw.split("_"):
            try:
                v = float(token)
            except (ValueError, OverflowError):
                bad.append(token)
                continue
            if not math.isfinite(v):
                bad.append(token)
                continue
            clipped |= abs(v) > LIMIT
            values.append(round(min(LIMIT, max(-LIMIT, v)), DECIMALS))
        if bad:
            problems.append(
                Problem(
                    name,
                    f"{name}: {_shown(bad[0])} is not a number; left out."
                    if len(bad) == 1
                    else f"{name}: {len(bad)} values such as {_shown(bad[0])} are not "
                    "numbers; left out.",
                )
            )
        if len(values) % 2:
            problems.append(
                Problem(
                    name, f"{name} has an odd number of coordinates; the last one was left out."
                )
            )
            values.pop()
        if clipped:
            problems.append(
                Problem(name, f"{name}: coordinates outside ±{LIMIT:g} were moved to the edge.")
            )
        points += [(values[k], values[k + 1], label) for k in range(0, len(values), 2)]
    if len(points) > MAX_POINTS:
        problems.append(
            Problem(
                PREFIX + "pos",
                f"The link places {len(points)} points; only the first {MAX_POINTS} were kept.",
            )
        )
        points = points[:MAX_POINTS]
    return tuple(points), problems


# -- the whole URL ------------------------------------------------------------------------
def from_query(
    query: Mapping[str, Any],
) -> tuple[Settings, tuple[Point, ...], list[Problem]]:
    """Settings and placed points from URL query parameters (other keys are ignored).

    Each value that is not allowed is replaced by the default and named in a
    :class:`Problem`; the messages quote at most 40 characters of it.
    """
    values: dict[str, Any] = {}
    problems: list[Problem] = []
    for name, parse in _PARSERS.items():
        key = PREFIX + name
        if key not in query:
            continue
        raw = query[key]
        raw = str(raw[-1] if isinstance(raw, list) and raw else raw)
        try:
            values[name] = parse(raw)
        except (ValueError, OverflowError) as reason:
            default = _write(getattr(DEFAULT, name))
            problems.append(Problem(key, f"{key}={_shown(raw)} {reason}; using {default}."))
            continue
        if name in ("C", "gamma") and float(raw) != values[name]:
            problems.append(
                Problem(key, f"{key}={_shown(raw)} is not on the slider; using {values[name]:g}.")
            )
    points, point_problems = decode_points(
        {k: str(v[-1] if isinstance(v, list) and v else v) for k, v in query.items()}
    )
    return replace(DEFAULT, **values), points, problems + point_problems


def to_query(settings: Settings, points: Sequence[Point] = ()) -> dict[str, str]:
    """The settings that differ from the defaults (and the placed points, when the data
    set is "placed"), as ``pg_*`` URL parameters."""
    out = {
        PREFIX + f.name: _write(getattr(settings, f.name))
        for f in fields(Settings)
        if getattr(settings, f.name) != getattr(DEFAULT, f.name)
    }
    if settings.data == "placed":
        out.update(encode_points(points))
    return out


def carry_params(query: Mapping[str, Any]) -> dict[str, str]:
    """The ``pg_*`` entries of a URL, for the app's URL writer to keep (bounded)."""
    out = {}
    for key, value in query.items():
        if isinstance(key, str) and key.startswith(PREFIX) and len(key) <= 16:
            text = str(value[-1] if isinstance(value, list) and value else value)
            out[key] = text[:MAX_POINTS_CHARS]
    return out


def settings_dict(settings: Settings) -> dict[str, Any]:
    """The settings as a plain dict (e.g. for a cache key)."""
    return asdict(settings)


# -- the data -----------------------------------------------------------------------------
def points_arrays(points: Sequence[Point]) -> tuple[np.ndarray, np.ndarray]:
    """Placed points as ``X`` (n, 2) and ``y`` (n,)."""
    if not points:
        return np.zeros((0, 2)), np.zeros(0, dtype=int)
    arr = np.asarray(points, dtype=float)
    return arr[:, :2], arr[:, 2].astype(int)


def as_points(X: np.ndarray, y: np.ndarray) -> tuple[Point, ...]:
    """Arrays as placed points, rounded as the URL keeps them."""
    return tuple(
        (round(float(a), DECIMALS), round(float(b), DECIMALS), int(c))
        for (a, b), c in zip(X, y, strict=True)
    )


def add_point(points: Sequence[Point], x: float, y: float, label: int) -> tuple[Point, ...]:
    """``points`` plus one (clipped to the square); unchanged when already full."""
    if len(points) >= MAX_POINTS or label not in (-1, 1):
        return tuple(points)
    x, y = (round(min(LIMIT, max(-LIMIT, float(v))), DECIMALS) for v in (x, y))
    return (*points, (x, y, label))


def remove_point(points: Sequence[Point], index: int) -> tuple[Point, ...]:
    """``points`` without the one at ``index`` (unchanged for an index out of range)."""
    if not 0 <= index < len(points):
        return tuple(points)
    return tuple(p for k, p in enumerate(points) if k != index)


@dataclass(frozen=True)
class Click:
    """What a click on the decision figure asks for: add at (x, y), or remove a point."""

    action: str  # "add" or "remove"
    x: float = 0.0
    y: float = 0.0
    index: int = -1


def resolve_click(
    traces: Mapping[int, tuple[str, Sequence[int] | None]], point: Mapping[str, Any]
) -> Click | None:
    """Turn one selected plotly point into a :class:`Click`.

    Parameters
    ----------
    traces : mapping
        ``curve_number -> (kind, customdata)``; kind "grid" (the invisible click grid) or
        "point" (a class's trace, whose customdata holds each point's index).
    point : mapping
        One entry of the chart's ``selection["points"]`` (``curve_number``,
        ``point_index``, ``x``, ``y``).
    """
    try:
        kind, custom = traces[int(point["curve_number"])]
        if kind == "grid":
            return Click("add", float(point["x"]), float(point["y"]))
        if kind == "point" and custom is not None:
            return Click("remove", index=int(custom[int(point["point_index"])]))
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    return None


# -- SMO playback -------------------------------------------------------------------------
@dataclass
class Playback:
    """Where the SMO playback stands: step ``position`` of ``total`` (0 = the start).

    ``signature`` names the problem the steps belong to; :meth:`follow` starts over when
    it changes.
    """

    signature: str = ""
    total: int = 0
    position: int = 0
    playing: bool = False

    def follow(self, signature: str, total: int) -> None:
        """Start over (paused, at step 0) when the problem changed."""
        if signature != self.signature or total != self.total:
            self.signature, self.total, self.position, self.playing = signature, total, 0, False

    @property
    def at_end(self) -> bool:
        return self.position >= self.total

    def step(self) -> None:
        """One SMO pair further (pauses playing)."""
        self.playing = False
        self.position = min(self.total, self.position + 1)

    def play(self) -> None:
        self.playing = not self.at_end

    def pause(self) -> None:
        self.playing = False

    def reset(self) -> None:
        self.position, self.playing = 0, False

    def advance(self, k: int = 1) -> None:
        """A playing tick: ``k`` pairs further; stops playing at the end."""
        self.position = min(self.total, self.position + max(1, int(k)))
        if self.at_end:
            self.playing = False


def tick(pace_seconds: float, total: int) -> tuple[float, int]:
    """How often a playing page redraws and how many pairs each redraw advances.

    A pace of 0 ("live") redraws four times a second and shows the whole solve in about
    ten seconds; other paces show one pair per ``pace_seconds``.
    """
    if pace_seconds <= 0:
        return 0.25, max(1, math.ceil(total / 40))
    return float(pace_seconds), 1


# -- the numbers the page draws -------------------------------------------------------------
#: The grid the decision function is drawn on, and the invisible grid a click snaps to.
GRID_SIZE = 81
CLICK_STEP = 0.1
#: At most this many SMO pairs are played back (and solved for the picture).
MAX_STEPS = 2000
TOL = 1e-3


def grid_axis(size: int = GRID_SIZE) -> np.ndarray:
    return np.linspace(-LIMIT, LIMIT, size)


def click_axis() -> np.ndarray:
    half = round((LIMIT - CLICK_STEP) / CLICK_STEP)
    return np.arange(-half, half + 1) * CLICK_STEP


def make_data(settings: Settings, points: Sequence[Point]) -> tuple[np.ndarray, np.ndarray]:
    """The points the SVM learns from: generated, or the placed ones."""
    from csvm.data.toy2d import make

    if settings.data == "placed":
        return points_arrays(points)
    return make(settings.data, settings.n, settings.noise, settings.seed, settings.overlap)


def solvable(y: np.ndarray) -> bool:
    """Both classes present (an SVM needs at least one point of each)."""
    return bool(np.any(y == 1) and np.any(y == -1))


def estimator(settings: Settings, max_iter: int = MAX_STEPS):
    """The :class:`csvm.model.smo.SMO` these settings describe."""
    from csvm.model.smo import SMO

    return SMO(
        kernel=settings.kernel,
        C=settings.c_value,
        gamma=settings.gamma,
        degree=settings.degree,
        coef0=settings.coef0,
        tol=TOL,
        max_iter=max_iter,
    )


def decision_values(
    settings: Settings,
    X: np.ndarray,
    y: np.ndarray,
    alpha: np.ndarray,
    b: float,
    at: np.ndarray,
) -> np.ndarray:
    """``f(at) = sum_i alpha_i y_i K(x_i, at) + b`` over the support vectors only."""
    from csvm.model.smo import kernel_matrix

    sv = np.flatnonzero(alpha > 0)
    if len(sv) == 0:
        return np.full(len(at), float(b))
    K = kernel_matrix(at, X[sv], settings.kernel, settings.gamma, settings.degree, settings.coef0)
    return K @ (alpha[sv] * y[sv]) + b


def decision_grid(settings, X, y, alpha, b, axis: np.ndarray) -> np.ndarray:
    """``F[r, c] = f(axis[c], axis[r])``, as :func:`csvm.figures.playground.decision_figure`
    wants it."""
    gx, gy = np.meshgrid(axis, axis)
    at = np.column_stack([gx.ravel(), gy.ravel()])
    return decision_values(settings, X, y, alpha, b, at).reshape(len(axis), len(axis))


@dataclass(frozen=True)
class Steps:
    """An SMO run kept compactly: each step changes two alphas.

    ``pairs[k]`` and ``values[k]`` are the indices and new alphas of step ``k + 1``;
    ``b``, ``objective`` and ``gap`` have one entry per step, the start (step 0) first.
    """

    n: int
    pairs: np.ndarray
    values: np.ndarray
    b: np.ndarray
    objective: np.ndarray
    gap: np.ndarray
    converged: bool

    @property
    def total(self) -> int:
        return len(self.pairs)

    def alpha_at(self, position: int) -> np.ndarray:
        """Every alpha after ``position`` steps (later writes of an index win)."""
        alpha = np.zeros(self.n)
        if position > 0:
            alpha[self.pairs[:position].ravel()] = self.values[:position].ravel()
        return alpha


def record_steps(settings: Settings, X: np.ndarray, y: np.ndarray) -> Steps:
    """Run SMO one pair at a time and keep every step (at most ``MAX_STEPS``)."""
    import warnings

    pairs, values, b, objective, gap = [], [], [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the hard margin on overlapping classes
        for rec in estimator(settings).iter_steps(X, y, include_start=True):
            if rec.step:
                pairs.append((rec.i, rec.j))
                values.append((rec.alpha[rec.i], rec.alpha[rec.j]))
            b.append(rec.b)
            objective.append(rec.dual_objective)
            gap.append(rec.kkt_gap)
    return Steps(
        n=len(y),
        pairs=np.asarray(pairs, dtype=int).reshape(-1, 2),
        values=np.asarray(values, dtype=float).reshape(-1, 2),
        b=np.asarray(b),
        objective=np.asarray(objective),
        gap=np.asarray(gap),
        converged=bool(gap[-1] < TOL),
    )
