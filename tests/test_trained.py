"""attention_lib.trained: the stored sample matches all-MiniLM-L6-v2 and is read safely."""

import sys
from pathlib import Path

import numpy as np
import pytest
import tomllib

from attention_lib import pretrained, trained

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "authoring"))
import trained_sample  # noqa: E402


def test_the_stored_sample_is_what_the_model_computes():
    fresh = trained_sample.sample(pretrained.load_minilm())
    with np.load(trained.FILE) as stored:
        assert set(stored.files) == {"E", "tokens", "scores"}
        for name, array in fresh.items():
            assert trained_sample.matches(stored[name], array), name


def test_the_weights_are_the_models_attention_on_the_sentence():
    tokens, W = pretrained.load_minilm().attention(trained.SENTENCE)
    assert trained.tokens() == tokens
    np.testing.assert_allclose(trained.weights(), W, atol=1e-5)
    assert trained.weights(6, 12).shape == (11, 11)


def test_embeddings_keep_the_order_asked_for():
    words, E = trained.embeddings(["cake", "i"])
    assert words == ["cake", "i"] and E.shape == (2, trained.D_MODEL)
    all_words, all_E = trained.embeddings()
    np.testing.assert_array_equal(E[0], all_E[all_words.index("cake")])


@pytest.mark.parametrize(
    "call, needle",
    [
        (lambda: trained.embeddings(["cake", "biscuit"]), "'biscuit'"),
        (lambda: trained.scores(layer=7, head=1), "layer runs from 1 to 6"),
        (lambda: trained.scores(layer=0, head=1), "got layer=0"),
        (lambda: trained.weights(layer=2), "give both layer and head"),
    ],
)
def test_bad_requests_name_the_problem(call, needle):
    with pytest.raises(ValueError, match=needle):
        call()


def test_a_returned_array_cannot_change_the_stored_one():
    trained.scores(1, 1)[:] = 0
    trained.scores()[:] = 0
    assert np.abs(trained.scores(1, 1)).max() > 0


def test_the_sample_ships_with_the_package():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "data/*.npz" in config["tool"]["setuptools"]["package-data"]["attention_lib"]
    assert trained.FILE.is_file() and trained.FILE.parent.name == "data"
