"""Section 4 of ``make bench``: the pretrained model (chapter 11) and chapter 12's decoder.

The pretrained model is timed only where ``attention_lib.pretrained`` and its weights are
installed; the decoder's training and its KV cache run on one BLAS thread.
"""

from __future__ import annotations

import functools
import time

import numpy as np

from bench.throughput import best_time

# --- 4. The pretrained model ----------------------------------------------------------------


def pretrained() -> dict:
    try:
        from attention_lib import pretrained as pre
    except ImportError as err:
        return {"skipped": f"attention_lib.pretrained is not available ({err})"}
    try:
        t0 = time.perf_counter()
        model = pre.load_minilm()
        load = time.perf_counter() - t0
    except Exception as err:  # not installed: the module says how to install it
        return {"skipped": f"load_minilm() failed: {type(err).__name__}: {str(err)[:120]}"}
    sentence = "I ate the cake and it was delicious."
    t, med = best_time(lambda: model.attention(sentence), repeat=10)
    tokens, weights = model.attention(sentence)
    return {
        "load_s": load,
        "forward_ms": t * 1e3,
        "forward_median_ms": med * 1e3,
        "tokens": len(tokens),
        "weights_shape": list(weights.shape),
    }


# --- 4b. Chapter 12's decoder --------------------------------------------------------------


def decoder_bench() -> dict:
    """Chapter 12 on one BLAS thread: its training run, and the KV cache per token.

    ``train_s`` is ``toy.decoder.train`` with the chapter's arguments (best of two runs);
    the KV cache is timed on an untrained model of the same width with 256 positions
    (the time does not depend on what the weights learned): per token at position ``t``,
    one cached step against a full forward pass over the ``t`` tokens.
    """
    from threadpoolctl import threadpool_limits

    from attention_lib import decoder
    from attention_lib.toy import decoder as food

    train, test = food.split()
    with threadpool_limits(1):
        runs = []
        for _ in range(2):
            t0 = time.perf_counter()
            run = food.train(train, test)  # the chapter's defaults: 800 steps of 32
            runs.append(time.perf_counter() - t0)
        wide = decoder.init_params(len(food.VOCAB), food.D_MODEL, 256, food.D_FF)
        ids = np.random.default_rng(0).integers(2, len(food.VOCAB), size=256)
        kv = []
        for t in (16, 64, 256):
            cache = None
            for token in ids[: t - 1]:
                _, cache, _ = decoder.kv_cache_step(wide, food.HEADS, token, cache)
            step, _ = best_time(
                functools.partial(decoder.kv_cache_step, wide, food.HEADS, ids[t - 1], cache),
                repeat=30,
            )
            full_pass = functools.partial(decoder.forward, wide, ids[:t], food.HEADS)
            full, _ = best_time(full_pass, repeat=30)
            kv.append({"t": t, "full_ms": full * 1e3, "cached_ms": step * 1e3})
    return {
        "train_s": min(runs),
        "steps": int(run.steps[-1]),
        "held_out": float(run.test_loss[-1]),
        "baselines": food.baselines(train, test),
        "n_params": decoder.n_params(run.params),
        "kv_cache": kv,
    }
