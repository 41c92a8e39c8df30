"""Write attention_lib/data/minilm_sample.npz: the trained model's numbers chapters 1-7 show.

    python tools/authoring/trained_sample.py          # (re)write the file from the model
    python tools/authoring/trained_sample.py --check  # exit 1 if the file differs from the model

Needs the model package (``make`` installs it). The file holds the word-embedding rows of
``attention_lib.trained.WORDS``, the tokens of ``trained.SENTENCE`` and every head's scaled
scores on it, computed by ``attention_lib.pretrained`` (float32, as the model runs).
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from attention_lib import pretrained, trained  # noqa: E402
from attention_lib.heads import split_heads  # noqa: E402


def sample(model) -> dict:
    """The arrays the file stores, computed from a loaded ``MiniLM``."""
    ids = []
    for word in trained.WORDS:
        pieces = model.tokenizer.encode(word).ids[1:-1]  # drop [CLS] and [SEP]
        if len(pieces) != 1:
            raise ValueError(f"{word!r} is not one token in the model's vocabulary")
        ids.append(pieces[0])
    X, mask, toks = model.embed([trained.SENTENCE])
    all_scores = []
    for layer in model.layers:
        Q = split_heads(X @ layer.W_q + layer.b_q, model.h)  # (1, h, n, d_k)
        K = split_heads(X @ layer.W_k + layer.b_k, model.h)
        all_scores.append((Q @ np.swapaxes(K, -1, -2))[0] / np.sqrt(Q.shape[-1]))
        X, _ = pretrained.encoder_layer(X, layer, model.h, mask[:, None, None, :], model.eps)
    return {
        "E": model.E_word[np.array(ids)].astype(np.float32),
        "tokens": np.array(toks[0]),
        "scores": np.stack(all_scores).astype(np.float32),
    }


def matches(stored, fresh) -> bool:
    """Equal tokens, and numbers equal up to float32 rounding (BLAS builds differ slightly)."""
    if stored.dtype.kind in "US":
        return np.array_equal(stored, fresh)
    return stored.shape == fresh.shape and np.allclose(stored, fresh, rtol=1e-5, atol=1e-5)


def encode(arrays: dict) -> bytes:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args(argv)
    fresh = sample(pretrained.load_minilm())
    if args.check:
        with np.load(trained.FILE) as f:
            same = set(f.files) == set(fresh) and all(matches(f[k], fresh[k]) for k in fresh)
        print("up to date" if same else f"{trained.FILE} differs from the model: rewrite it")
        return 0 if same else 1
    trained.FILE.write_bytes(encode(fresh))
    print(f"wrote {trained.FILE} ({trained.FILE.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
