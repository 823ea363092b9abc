"""The beginner's layer: every symbol has plain words where it appears (issue 23)."""

from streamlit.testing.v1 import AppTest

from explorer.glossary import GLOSSARY, explain
from tests._apptest import ROOT, open_app, wait_for_results

SMALL_RUN = {"n_iter": "3", "n_train": "100", "cnn_epochs": "1", "pace": "live"}


def test_about_opens_with_plain_words_and_every_symbol():
    at = AppTest.from_file(str(ROOT / "pages/about.py"), default_timeout=30).run()
    assert not at.exception
    headers = [h.value for h in at.header]
    assert headers[0] == "In plain words"  # before any of the thesis's maths
    table = at.table[0].value
    assert list(table["symbol"]) == list(GLOSSARY)
    for symbol in ("γ (gamma)", "λ (lambda)", "η (eta)", "DFO₂", "T(f)", "Σα", "½aᵀKa"):
        assert symbol in GLOSSARY
    assert {"dT/df", "p", "α (alpha)"} <= set(GLOSSARY)


def test_train_page_explains_its_symbols_where_they_appear():
    at = open_app(SMALL_RUN)
    sidebar_help = {w.label: w.help for w in at.sidebar.number_input}
    assert GLOSSARY["γ (gamma)"] in sidebar_help["γ"]
    assert GLOSSARY["λ (lambda)"] in sidebar_help["λ"]
    assert GLOSSARY["η (eta)"] in sidebar_help["η"]
    at.button(key="start").click().run()
    at = wait_for_results(at)
    assert not at.exception
    metrics = {m.label: m.help for m in at.metric}
    assert metrics["objective"] == explain("objective", "T(f)")
    assert GLOSSARY["support vectors"] in metrics["support vectors"]
    captions = " ".join(c.value for c in at.caption)
    for symbol in ("Σα", "½aᵀKa", "r(f)", "α (alpha)", "p"):
        assert GLOSSARY[symbol] in captions, symbol
    if any("Gradient dT/df" in m.value for m in at.markdown):
        assert GLOSSARY["dT/df"] in captions  # the gradient, where the page draws it


def test_dfo_is_explained_as_the_code_computes_it_and_named_without_code():
    """The glossary said (‖f‖ − 1)², smallest at size 1, but DFO costs nothing below 1; the
    sidebar's select offered "dfo2: lam * max(0, ||f||_2 - 1)^2", cut on a projector."""
    assert "max(0, ‖f‖ − 1)²" in GLOSSARY["DFO₂"] and "nothing while" in GLOSSARY["DFO₂"]
    options = open_app({}).selectbox(key="w_regulariser").options
    assert options == ["none", "L1", "L2", "L1²", "L2²", "DFO₁", "DFO₂"]
