"""What one tick of the Train page's live panel costs the server in figures: the Plotly
figures it drew up to stop 30 against the SVG and PNG markup it draws now.

    python -m bench.bench_tick [--repeats 20]

Trains the two classroom presets in process (one layer; the two-layer stack), then for
the last recorded step builds each live figure both ways, as the page would each tick:
a Plotly figure is built and serialised to JSON (what ``st.plotly_chart`` sends), the
markup is built as a string.  Prints CPU milliseconds per figure and per tick (the
median of ``--repeats``).  Nothing here is asserted; tests check the figures' content.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import plotly.io as pio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from csvm import figures  # noqa: E402
from csvm.figures.filter_svg import gradient_svg  # noqa: E402
from csvm.figures.image_html import feature_maps_html  # noqa: E402
from csvm.figures.layers import layer_filters_figure, layer_maps_figure  # noqa: E402
from csvm.figures.layers_svg import layer_filters_svg, layer_maps_html  # noqa: E402
from csvm.figures.training_svg import objective_svg, progress_svg  # noqa: E402
from csvm.runs.config import RunConfig  # noqa: E402
from csvm.runs.targets import load_data, pinned_indices, run_model  # noqa: E402

STACK = "5x5x8-abs-max2,3x3x8-abs-max2"


def _cpu_ms(build, repeats: int) -> float:
    build()  # warm caches (imports, colour tables)
    times = []
    for _ in range(repeats):
        started = time.process_time()
        build()
        times.append(time.process_time() - started)
    return 1000 * float(np.median(times))


def _plotly(fig_builder):
    return lambda: pio.to_json(fig_builder(), validate=False)


def _figures(config: RunConfig):
    """Each live figure of the last step: (name, Plotly builder, markup builder)."""
    events: list[dict] = []
    run_model(events.append, config, "csvm")
    shown = [e for e in events if e.get("kind") in ("iteration", "half_step")]
    last = shown[-1]
    gradient = next(e["gradient"] for e in reversed(shown) if e.get("gradient") is not None)
    data = load_data(config)
    pinned = pinned_indices(data.y_train)
    images, labels = data.X_train[pinned], [str(y) for y in data.y_train[pinned]]
    out = [
        (
            "objective",
            _plotly(lambda: figures.objective_figure(shown, "Objective per step")),
            lambda: objective_svg(shown, "Objective per step"),
        ),
        (
            "progress",
            _plotly(lambda: figures.progress_figure(shown, "Train accuracy and filter norm")),
            lambda: progress_svg(shown, "Train accuracy and filter norm"),
        ),
        (
            "gradient",
            _plotly(lambda: figures.filter_figure(gradient, None, "G", "dT/df")),
            lambda: gradient_svg(gradient),
        ),
        (
            "pinned maps",
            _plotly(lambda: figures.feature_maps_figure(images, last["pinned_maps"], labels)),
            lambda: feature_maps_html(images, last["pinned_maps"], labels),
        ),
    ]
    if last.get("layer_filters"):
        later = last["layer_filters"][1]
        out.append(
            (
                "layer 2 filters",
                _plotly(lambda: layer_filters_figure(later, 2)),
                lambda: layer_filters_svg(later, 2),
            )
        )
        # The page draws the first pinned image of each class through the layers.
        for j, image in enumerate((images[0], images[len(images) // 2])):
            maps = [m[j] for m in last["layer_maps"]]
            out.append(
                (
                    f"layer maps, image {j + 1}",
                    _plotly(lambda image=image, maps=maps: layer_maps_figure(image, maps, "a")),
                    lambda image=image, maps=maps: layer_maps_html(image, maps, "a"),
                )
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    print(f"python -m bench.bench_tick --repeats {args.repeats}")
    for name, config in (
        ("Classroom (fast): one layer, 2 filters", RunConfig()),
        ("Classroom, two layers", RunConfig(n_iter=15, layers=STACK)),
    ):
        print(f"\n{name}\n| figure | Plotly + JSON, ms | SVG / PNG markup, ms |\n|---|---|---|")
        totals = [0.0, 0.0]
        for figure, plotly_build, markup_build in _figures(config):
            a, b = _cpu_ms(plotly_build, args.repeats), _cpu_ms(markup_build, args.repeats)
            totals[0] += a
            totals[1] += b
            print(f"| {figure} | {a:.1f} | {b:.1f} |")
        print(f"| **one tick** | **{totals[0]:.1f}** | **{totals[1]:.1f}** |")


if __name__ == "__main__":
    main()
