"""A fresh visitor starts on the Classroom preset; a link keeps whatever it names."""

from csvm.runs.config import RunConfig
from csvm.runs.presets import load_presets
from explorer.settings import app_default
from tests._apptest import open_app, preset_box


def _query(at) -> dict[str, str]:
    """The page's URL parameters as it wrote them (one value each)."""
    return {k: v if isinstance(v, str) else v[-1] for k, v in at.query_params.items()}


def test_a_fresh_visitor_starts_on_the_first_preset_and_its_link_holds_it():
    at = open_app()
    first = load_presets()[0]
    assert app_default().dataset == first["config"]["dataset"] != RunConfig().dataset
    assert at.session_state["run_config"] == app_default()
    assert preset_box(at).value == first["name"]
    assert _query(at)["dataset"] == first["config"]["dataset"]
    # The link, opened in another browser, gives the same settings.
    again = open_app(_query(at))
    assert again.session_state["run_config"] == app_default()


def test_a_link_naming_a_setting_starts_from_the_librarys_defaults():
    at = open_app({"n_iter": "7"})
    assert at.session_state["run_config"] == RunConfig(n_iter=7)


def test_the_librarys_defaults_exactly_get_a_link_that_keeps_them():
    at = open_app({"dataset": RunConfig().dataset})
    assert at.session_state["run_config"] == RunConfig()
    query = _query(at)
    assert query.get("dataset") == RunConfig().dataset  # named, though it is the default
    assert open_app(query).session_state["run_config"] == RunConfig()


def test_long_class_names_get_the_sidebars_whole_width():
    # Side by side, "horizontal" read "horizon": shapes' classes get a row each, digits
    # (one character) stay side by side.
    at = open_app()

    def side_by_side(at) -> list[str]:
        return [box.label for column in at.sidebar.columns for box in column.selectbox]

    assert "Class −1" in [s.label for s in at.sidebar.selectbox]
    assert at.selectbox(key="w_class_a").value == "horizontal"
    assert side_by_side(at) == []
    at.selectbox(key="w_dataset").set_value("mnist-5k").run()
    assert not at.exception
    assert side_by_side(at) == ["Class −1", "Class +1"]


def test_another_dataset_gives_two_different_classes_at_once():
    # Both boxes fell back to the dataset's first class: "Choose two different classes"
    # held Start until the user picked one again.
    at = open_app({"n_iter": "3"})
    for dataset, pair in (("shapes", ["horizontal", "vertical"]), ("digits", ["0", "1"])):
        at.selectbox(key="w_dataset").set_value(dataset).run()
        assert [at.selectbox(key=f"w_class_{s}").value for s in "ab"] == pair
        assert not at.error, [e.value for e in at.error]
        assert at.button(key="start").disabled is False
        assert _query(at)["class_b"] == pair[1]
    at.selectbox(key="w_dataset").set_value("mnist-5k").run()  # "0" and "1" are digits too
    assert [at.selectbox(key=f"w_class_{s}").value for s in "ab"] == ["0", "1"]
