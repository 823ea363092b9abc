"""Stacks of learned convolutions with pooling: the features a layered K-CSVM feeds its SVM.

A stack is written as one short string (it travels in RunConfig, URLs and the CLI)::

    "5x5x2-abs-avg2,3x3x4-relu-max2s1"

Layers are separated by commas.  Each layer is ``PxQ`` or ``PxQxN`` (N filters of P x Q,
default 1), then optionally a nonlinearity (``abs``, ``relu``) and a pooling
(``avg<size>`` or ``max<size>``, stride = size unless ``s<stride>`` follows), then
optionally HOG's normalisations (:mod:`csvm.model.normalise`): ``bn<b>``, L2 contrast
normalisation over every ``b x b`` block of pooled cells (the layer then has ``N b^2``
maps, one per channel and cell of a block), and ``sqrt``, the signed square root (power
normalisation).  Whatever order the tokens come in, a layer runs correlation,
nonlinearity, pooling, block normalisation, square root: so
``"3x3x8-relu-avg4-bn2-sqrt"`` is a HOG of 8 signed orientations on 4x4 cells and
2x2-cell blocks, with filters that learn.  Layer l's
filters have one channel per map of layer l-1 (the image's channels for layer 1), so the
second layer combines the first layer's maps, as a CNN's does.

:class:`Network` runs the stack forward and carries ``dL/dZ`` of its output maps back to
every layer's filters (the chain rule through pooling, nonlinearity and correlation), so a
K-CSVM's ``dT/df`` for every layer is the one-layer gradient's first half (the kernel's
derivative in the maps, :func:`csvm.model.kernels.kernel_map_gradient`) followed by this
backward pass.  All filters travel as one flat float64 vector ``theta``; :meth:`Network.unpack`
gives them back layer by layer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial

import numpy as np

from csvm.model.conv import (
    correlate,
    correlate_input_gradient,
    correlate_then,
    correlate_transpose,
    map_shape,
)
from csvm.model.normalise import (
    block_normalise,
    block_normalise_backward,
    block_shape,
    signed_sqrt,
    signed_sqrt_backward,
)
from csvm.model.pooling import (
    ACTIVATIONS,
    activate,
    activation_gradient,
    pool,
    pool_backward,
    pooled_shape,
)
from csvm.model.regularisers import regulariser_gradient, regulariser_value

__all__ = ["LayerSpec", "Network", "format_layers", "keep_means", "parse_layers"]

_CONV = re.compile(r"^(\d+)x(\d+)(?:x(\d+))?$")
_POOL = re.compile(r"^(avg|max)(\d+)(?:s(\d+))?$")
_BLOCK = re.compile(r"^bn(\d+)$")
#: Bounds that keep a typed stack from asking for absurd work.
MAX_LAYERS = 4
MAX_FILTERS_PER_LAYER = 64
MAX_SIDE = 64
#: Multiply-adds of every layer's correlations for one image: a bound that keeps a typed
#: stack from tying a worker up for hours (the Classroom stack needs 1.7e5 on MNIST, 8.2e5
#: on CIFAR-10's stacked 96×32 images).
MAX_WORK_PER_IMAGE = 5e7

LAYERS_HELP = (
    "Layers are separated by commas; each is PxQ or PxQxN (N filters), then optionally "
    "-abs or -relu and -avg<size> or -max<size> (stride = size, or s<stride>), then "
    "-bn<b> (L2 normalisation over b x b blocks of cells) and -sqrt (signed square "
    "root), e.g. '5x5x2-abs-avg2,3x3x4-relu-max2' or '3x3x8-relu-avg4-bn2-sqrt'."
)


@dataclass(frozen=True)
class LayerSpec:
    """One layer: ``n_filters`` correlations of ``filter_shape``, then ``activation``,
    then ``pool`` over ``pool_size`` windows every ``pool_stride`` pixels, then L2
    normalisation over ``block x block`` blocks of cells (0: none) and ``power``
    ("sqrt": the signed square root; "none")."""

    n_filters: int = 1
    filter_shape: tuple[int, int] = (5, 5)
    activation: str = "none"
    pool: str = "none"
    pool_size: int = 1
    pool_stride: int = 1
    block: int = 0
    power: str = "none"

    @property
    def is_plain(self) -> bool:
        """A bare correlation: the thesis's one-layer model when it is the only layer."""
        pooled = self.pool != "none" and self.pool_size != 1
        return self.activation == "none" and not pooled and not self.normalised

    @property
    def normalised(self) -> bool:
        """Whether the layer ends with a block normalisation or a square root."""
        return self.block > 0 or self.power != "none"

    @property
    def n_maps(self) -> int:
        """The maps the layer hands on: its filters, times the cells of a block."""
        return self.n_filters * max(1, self.block) ** 2

    def __str__(self) -> str:
        p, q = self.filter_shape
        parts = [f"{p}x{q}" + (f"x{self.n_filters}" if self.n_filters != 1 else "")]
        if self.activation != "none":
            parts.append(self.activation)
        if self.pool != "none":
            stride = "" if self.pool_stride == self.pool_size else f"s{self.pool_stride}"
            parts.append(f"{self.pool}{self.pool_size}{stride}")
        if self.block:
            parts.append(f"bn{self.block}")
        if self.power != "none":
            parts.append(self.power)
        return "-".join(parts)


def _bad(text: str, why: str) -> ValueError:
    return ValueError(f"Cannot read the layers {text!r}: {why}. {LAYERS_HELP}")


def _parse_layer(text: str, token_text: str) -> LayerSpec:
    tokens = token_text.strip().lower().split("-")
    conv = _CONV.match(tokens[0])
    if not conv:
        raise _bad(text, f"{tokens[0]!r} is not a filter size like 5x5 or 5x5x2")
    p, q, n = int(conv[1]), int(conv[2]), int(conv[3] or 1)
    if not (1 <= p <= MAX_SIDE and 1 <= q <= MAX_SIDE):
        raise _bad(text, f"filter sides must be 1 to {MAX_SIDE}, got {p}x{q}")
    if not 1 <= n <= MAX_FILTERS_PER_LAYER:
        raise _bad(text, f"a layer holds 1 to {MAX_FILTERS_PER_LAYER} filters, got {n}")
    activation, mode, size, stride, block, power = "none", "none", 1, 1, 0, "none"
    for token in tokens[1:]:
        pooled, blocked = _POOL.match(token), _BLOCK.match(token)
        if token in ACTIVATIONS:
            activation = token
        elif token == "sqrt":
            power = token
        elif blocked:
            block = int(blocked[1])
            if not 1 <= block <= MAX_SIDE:
                raise _bad(text, f"blocks must be 1 to {MAX_SIDE} cells a side")
        elif pooled:
            mode, size = pooled[1], int(pooled[2])
            stride = int(pooled[3] or size)
            if not (1 <= size <= MAX_SIDE and 1 <= stride <= MAX_SIDE):
                raise _bad(text, f"pooling windows and strides must be 1 to {MAX_SIDE}")
        else:
            raise _bad(
                text,
                f"{token!r} is neither a nonlinearity (abs, relu), a pooling, a block "
                "normalisation (bn2) nor sqrt",
            )
    return LayerSpec(n, (p, q), activation, mode, size, stride, block, power)


def parse_layers(text: str | None) -> tuple[LayerSpec, ...]:
    """The layers a string describes (empty for None or ""), or a ValueError that says
    what was wrong and shows the format."""
    if text is None or not str(text).strip():
        return ()
    parts = [part for part in str(text).split(",")]
    if len(parts) > MAX_LAYERS:
        raise _bad(text, f"at most {MAX_LAYERS} layers, got {len(parts)}")
    return tuple(_parse_layer(str(text), part) for part in parts)


def format_layers(specs: tuple[LayerSpec, ...]) -> str:
    """The string :func:`parse_layers` reads back as ``specs``."""
    return ",".join(str(spec) for spec in specs)


class Network:
    """The forward and backward passes of a stack of layers on images of one shape.

    Parameters
    ----------
    specs : sequence of LayerSpec
    image_shape : tuple (C, H, W)

    Raises
    ------
    ValueError
        When a layer's filter or pooling window does not fit the maps it receives,
        naming the layer and the sizes.
    """

    def __init__(self, specs: tuple[LayerSpec, ...], image_shape: tuple[int, int, int]):
        self.specs = tuple(specs)
        self.image_shape = tuple(int(s) for s in image_shape)
        self.filter_shapes: list[tuple[int, int, int, int]] = []
        self.map_shapes: list[tuple[int, int, int]] = []  # after each layer's pooling
        channels, hw = self.image_shape[0], self.image_shape[1:]
        for index, spec in enumerate(self.specs, start=1):
            try:
                hw = map_shape(hw, spec.filter_shape)
                if spec.pool != "none":
                    hw = pooled_shape(hw, spec.pool_size, spec.pool_stride)
                if spec.block:
                    hw = block_shape((spec.n_filters, *hw), spec.block)[1:]
            except ValueError as err:
                where = "the image" if index == 1 else f"layer {index - 1}'s maps"
                raise ValueError(
                    f"Layer {index} ({spec}) does not fit {where} ({hw[0]}x{hw[1]}): {err}"
                ) from None
            self.filter_shapes.append((spec.n_filters, channels, *spec.filter_shape))
            channels = spec.n_maps
            self.map_shapes.append((channels, *hw))
        self.sizes = [int(np.prod(s)) for s in self.filter_shapes]
        if self.work_per_image() > MAX_WORK_PER_IMAGE:
            raise ValueError(
                f"These layers need {self.work_per_image():.2g} multiply-adds per image, more "
                f"than the {MAX_WORK_PER_IMAGE:.0e} allowed: use fewer or smaller filters, or "
                "pool earlier."
            )

    def work_per_image(self) -> float:
        """Multiply-adds of every layer's correlations for one image."""
        channels, h, w = self.image_shape
        work = 0.0
        for spec, out in zip(self.specs, self.map_shapes, strict=True):
            p, q = spec.filter_shape
            work += (h - p + 1) * (w - q + 1) * spec.n_filters * channels * p * q
            channels, h, w = out
        return work

    @property
    def output_shape(self) -> tuple[int, int, int]:
        """``(k, H'', W'')`` of the maps the SVM sees."""
        return self.map_shapes[-1]

    def unpack(self, theta: np.ndarray) -> list[np.ndarray]:
        """Every layer's filters ``(k, C, p, q)`` from the flat vector (views, no copy)."""
        bounds = np.cumsum([0, *self.sizes])
        return [
            theta[bounds[i] : bounds[i + 1]].reshape(shape)
            for i, shape in enumerate(self.filter_shapes)
        ]

    @staticmethod
    def pack(filters: list[np.ndarray]) -> np.ndarray:
        """The flat float64 vector of a list of per-layer filters."""
        return np.concatenate([np.asarray(f, dtype=np.float64).ravel() for f in filters])

    def initial(self, rng: np.random.Generator, first: np.ndarray | None = None) -> np.ndarray:
        """Starting filters: ``first`` for layer 1 when given, else uniform random weights
        with unit L1 norm per filter (each map starts as a local weighted average of the
        maps below it, so the scale of the values stays that of the image)."""
        filters = []
        for i, shape in enumerate(self.filter_shapes):
            if i == 0 and first is not None:
                filters.append(np.asarray(first, dtype=np.float64).reshape(shape))
                continue
            f = rng.random(shape)
            filters.append(f / f.reshape(shape[0], -1).sum(axis=1)[:, None, None, None])
        return self.pack(filters)

    def forward(self, X4: np.ndarray, theta: np.ndarray, keep: bool = False):
        """The output maps ``(n, k, H'', W'')`` in X4's precision (float32 at least); with
        ``keep`` also the per-layer cache :meth:`backward` needs."""
        out, cache = X4, []
        # The last layer's output is the result; earlier outputs are not kept (memory).
        for A_in, Z, stage_cache, out in self._layers(X4, theta, in_place=not keep):  # noqa: B007
            if keep:
                cache.append((A_in, Z, stage_cache))
        return (out, cache) if keep else out

    def _layers(self, X4: np.ndarray, theta: np.ndarray, in_place: bool = False):
        """Each layer in turn: its input, its correlation, its stages' cache (pooling,
        block normalisation, the square root's input), its output.  ``in_place``: the
        nonlinearity overwrites the correlation (a forward pass that keeps nothing for a
        backward pass saves a copy of every layer's largest maps)."""
        A = X4
        for spec, f in zip(self.specs, self.unpack(theta), strict=True):
            f = f.astype(np.result_type(A.dtype, np.float32), copy=False)
            if in_place and spec.pool == "max":
                # Nothing goes backward: each block of maps is rectified and pooled while
                # it is in the cache (exact: elementwise, then maxima).
                Z, pool_cache = None, None
                P = correlate_then(A, f, partial(_activate_pool, spec=spec))
            else:
                Z = correlate(A, f)
                H = activate(Z, spec.activation, out=Z if in_place else None)
                P, pool_cache = pool(H, spec.pool, spec.pool_size, spec.pool_stride)
            block_cache, root_in = None, None
            if spec.block:
                P, block_cache = block_normalise(P, spec.block)
            if spec.power == "sqrt":
                root_in, P = P, signed_sqrt(P)
            yield A, Z, (pool_cache, block_cache, root_in), P
            A = P

    def layer_outputs(self, X4: np.ndarray, theta: np.ndarray) -> list[np.ndarray]:
        """Every layer's pooled maps of X4, first layer first (what the page draws)."""
        return [out for *_, out in self._layers(X4, theta)]

    def backward(self, X4: np.ndarray, theta: np.ndarray, dA: np.ndarray) -> np.ndarray:
        """``sum_i <dA_i, d out_i / d theta>``: the flat gradient of every layer's filters,
        given ``dA`` (n, k, H'', W''), the derivative of a loss in the output maps of X4."""
        X4 = np.asarray(X4, dtype=np.float64)
        _, cache = self.forward(X4, theta, keep=True)
        filters = self.unpack(theta)
        grads: list[np.ndarray] = [np.empty(0)] * len(self.specs)
        dA = np.asarray(dA, dtype=np.float64)
        for i in range(len(self.specs) - 1, -1, -1):
            A_in, Z, (pool_cache, block_cache, root_in) = cache[i]
            if root_in is not None:
                dA = signed_sqrt_backward(root_in, dA)
            if block_cache is not None:
                dA = block_normalise_backward(dA, block_cache)
            dZ = activation_gradient(Z, pool_backward(dA, pool_cache), self.specs[i].activation)
            grads[i] = correlate_transpose(A_in, dZ, self.specs[i].filter_shape, sum_samples=True)
            if i:
                dA = correlate_input_gradient(dZ, filters[i], A_in.shape)
        return self.pack(grads)

    def regulariser(self, name: str, theta: np.ndarray, lam: float) -> float:
        """``sum_l r(f_l)``: each layer is kept near its own scale (a joint norm would let
        one layer grow while another shrinks, which changes nothing the SVM sees)."""
        return sum(regulariser_value(name, f, lam) for f in self.unpack(theta))

    def regulariser_gradient(self, name: str, theta: np.ndarray, lam: float) -> np.ndarray:
        """The flat gradient of :meth:`regulariser`."""
        return self.pack([regulariser_gradient(name, f, lam) for f in self.unpack(theta)])

    def relative_move(self, theta: np.ndarray, grad: np.ndarray, eta: float) -> np.ndarray:
        """The step that moves each layer's filters by the fraction ``eta`` of their own
        norm along minus their gradient (a layer whose gradient is zero stays).

        Per layer, because the layers' gradients differ by orders of magnitude: one joint
        norm would move only the steepest layer.  A layer with block normalisation
        (``-bn<b>``) moves along its gradient projected onto :meth:`keep_means`'s subspace,
        so each filter keeps its mean over every input channel: there the means are the
        stiff directions (docs/benchmarks.md, issue 35: 99.98 % of ``|dT/dθ|²`` and a
        curvature 1,000 times the zero-mean part's on CIFAR-10 deer v horse), and a step
        sized by the whole gradient overshot them and hardly moved the filters' shape.

        Parameters
        ----------
        theta, grad : ndarray
            The flat filters of every layer and dT/dθ there.
        eta : float
            The fraction of each layer's norm to move by.

        Returns
        -------
        ndarray like ``theta``
        """
        moves = []
        filters, grads = self.unpack(theta), self.unpack(grad)
        for spec, f, g in zip(self.specs, filters, grads, strict=True):
            if spec.block:
                g = keep_means(g)
            g_norm = float(np.linalg.norm(g))
            moves.append(np.zeros_like(g) if g_norm == 0 else -eta * np.linalg.norm(f) / g_norm * g)
        return self.pack(moves)


def keep_means(g: np.ndarray) -> np.ndarray:
    """The projection of a layer's filter gradient ``g`` (k, C, p, q) onto the directions
    that keep every filter's mean over each input channel: ``g`` less that mean.

    Examples
    --------
    >>> keep_means(np.arange(8.0).reshape(1, 2, 2, 2))[0, :, 0]
    array([[-1.5, -0.5],
           [-1.5, -0.5]])
    """
    return g - g.mean(axis=(-2, -1), keepdims=True)


def _activate_pool(Z: np.ndarray, spec: LayerSpec) -> np.ndarray:
    """A layer's nonlinearity (in place) and pooling of maps ``(..., H, W)``."""
    return pool(activate(Z, spec.activation, out=Z), spec.pool, spec.pool_size, spec.pool_stride)[0]
