"""Chapter 12's checkers, both ways: the reference passes, each typical mistake gets its hint."""

import numpy as np
import pytest

from attention_lib import scaled_dot_product_attention, softmax
from attention_lib.checks import check_cross_entropy, check_kv_step, check_sample


def good_kv_step(q, K, V, k, v):
    K = np.concatenate([K, k[:, None]], axis=1)  # (h, t + 1, d_k)
    V = np.concatenate([V, v[:, None]], axis=1)
    w = softmax(np.einsum("hd,htd->ht", q, K) / np.sqrt(q.shape[-1]))  # (h, t + 1)
    return np.einsum("ht,htd->hd", w, V)


def kv_forgets_the_new_token(q, K, V, k, v):
    w = softmax(np.einsum("hd,htd->ht", q, K) / np.sqrt(q.shape[-1]))
    return np.einsum("ht,htd->hd", w, V)


def kv_unscaled(q, K, V, k, v):
    return good_kv_step(q * np.sqrt(q.shape[-1]), K, V, k, v)


def kv_over_d_k(q, K, V, k, v):
    return good_kv_step(q / np.sqrt(q.shape[-1]), K, V, k, v)  # scores / d_k


def kv_uniform(q, K, V, k, v):
    return np.concatenate([V, v[:, None]], axis=1).mean(axis=1)


def kv_all_weights(q, K, V, k, v):
    K = np.concatenate([K, k[:, None]], axis=1)
    return softmax(np.einsum("hd,htd->ht", q, K))[..., None] * np.ones(V.shape[-1])


def kv_softmax_over_heads(q, K, V, k, v):
    K = np.concatenate([K, k[:, None]], axis=1)
    V = np.concatenate([V, v[:, None]], axis=1)
    w = softmax(np.einsum("hd,htd->ht", q, K) / np.sqrt(q.shape[-1]), axis=0)  # over heads
    return np.einsum("ht,htd->hd", w, V)


def kv_returns_pair(q, K, V, k, v):  # scaled_dot_product_attention's (output, weights)
    K, V = np.concatenate([K, k[:, None]], axis=1), np.concatenate([V, v[:, None]], axis=1)
    return scaled_dot_product_attention(q[:, None], K, V)


def kv_indexes_pair(q, K, V, k, v):  # the pair indexed as if it were the output
    return kv_returns_pair(q, K, V, k, v)[:, 0]


def kv_keeps_query_axis(q, K, V, k, v):  # (h, 1, d_v): the query axis kept
    return kv_returns_pair(q, K, V, k, v)[0]


def kv_top_left_tril(q, K, V, k, v):
    K = np.concatenate([K, k[:, None]], axis=1)
    V = np.concatenate([V, v[:, None]], axis=1)
    mask = np.tril(np.ones((1, K.shape[1]), dtype=bool))  # (1, t + 1): keeps key 0 only
    scores = np.einsum("hd,htd->ht", q, K) / np.sqrt(q.shape[-1])
    w = softmax(np.where(mask, scores, -1e30))
    return np.einsum("ht,htd->hd", w, V)


def kv_returns_weights(q, K, V, k, v):
    K = np.concatenate([K, k[:, None]], axis=1)
    return softmax(np.einsum("hd,htd->ht", q, K) / np.sqrt(q.shape[-1]))  # (h, t + 1)


def kv_appends_k_not_v(q, K, V, k, v):
    K = np.concatenate([K, k[:, None]], axis=1)  # the value is forgotten
    w = softmax(np.einsum("hd,htd->ht", q, K) / np.sqrt(q.shape[-1]))
    return np.einsum("ht,htd->hd", w, V)


def kv_minus_inf_mask(q, K, V, k, v):
    K = np.concatenate([K, k[:, None]], axis=1)
    V = np.concatenate([V, v[:, None]], axis=1)
    scores = np.einsum("hd,htd->ht", q, K) / np.sqrt(q.shape[-1])
    mask = np.tril(np.ones(scores.shape, dtype=bool))
    return np.einsum("ht,htd->hd", softmax(np.where(mask, scores, -np.inf)), V)


def kv_over_sqrt_d_v(q, K, V, k, v):
    return good_kv_step(q * np.sqrt(q.shape[-1] / v.shape[-1]), K, V, k, v)


def kv_over_sqrt_keys(q, K, V, k, v):
    return good_kv_step(q * np.sqrt(q.shape[-1] / (K.shape[1] + 1)), K, V, k, v)


def kv_over_sqrt_d_model(q, K, V, k, v):  # h * d_k: the width of all heads together
    return good_kv_step(q / np.sqrt(q.shape[0]), K, V, k, v)


def kv_no_transpose(q, K, V, k, v):
    K = np.concatenate([K, k[:, None]], axis=1)
    V = np.concatenate([V, v[:, None]], axis=1)
    scores = (q[:, None] @ K / np.sqrt(q.shape[-1]))[:, 0]  # runs only when t + 1 == d_k
    return np.einsum("ht,htd->hd", softmax(scores), V)


def kv_key_as_query(q, K, V, k, v):
    return good_kv_step(k, K, V, k, v)


def kv_keys_values_swapped(q, K, V, k, v):
    return good_kv_step(q, V, K, v, k)


def kv_new_pair_swapped(q, K, V, k, v):  # review 12y: v joins the keys, k the values
    return good_kv_step(q, K, V, v, k)


def kv_caches_swapped(q, K, V, k, v):  # review 12y: K_cache blended, V_cache scored
    return good_kv_step(q, V, K, k, v)


def kv_returns_d_k_wide(q, K, V, k, v):  # the keys blended: (h, d_k), not (h, d_v)
    return good_kv_step(q, K, K, k, k)


def kv_key_first_value_last(q, K, V, k, v):  # the new key prepended, its value appended
    K, V = np.concatenate([k[:, None], K], axis=1), np.concatenate([V, v[:, None]], axis=1)
    return np.einsum("ht,htd->hd", softmax(np.einsum("hd,htd->ht", q, K) / np.sqrt(q.shape[-1])), V)


def kv_value_first_key_last(q, K, V, k, v):  # the other way round
    K, V = np.concatenate([K, k[:, None]], axis=1), np.concatenate([v[:, None], V], axis=1)
    return np.einsum("ht,htd->hd", softmax(np.einsum("hd,htd->ht", q, K) / np.sqrt(q.shape[-1])), V)


def kv_own_value(q, K, V, k, v):
    return v.copy()  # ignores the cache


def kv_argmax(q, K, V, k, v):
    K, V = np.concatenate([K, k[:, None]], axis=1), np.concatenate([V, v[:, None]], axis=1)
    best = np.einsum("hd,htd->ht", q, K).argmax(axis=1)  # hard choice, no softmax
    return V[np.arange(len(V)), best]


def kv_heads_mixed(q, K, V, k, v):
    K, V = np.concatenate([K, k[:, None]], axis=1), np.concatenate([V, v[:, None]], axis=1)
    scores = np.einsum("hd,gtd->ht", q, K) / np.sqrt(q.shape[-1])  # sums over heads g
    return np.einsum("ht,htd->hd", softmax(scores), V)


def kv_no_softmax(q, K, V, k, v):  # the raw scores used as weights
    K, V = np.concatenate([K, k[:, None]], axis=1), np.concatenate([V, v[:, None]], axis=1)
    return np.einsum("ht,htd->hd", np.einsum("hd,htd->ht", q, K) / np.sqrt(q.shape[-1]), V)


def kv_exp_not_normalised(q, K, V, k, v):  # exp of the scores, never divided by their sum
    K, V = np.concatenate([K, k[:, None]], axis=1), np.concatenate([V, v[:, None]], axis=1)
    w = np.exp(np.einsum("hd,htd->ht", q, K) / np.sqrt(q.shape[-1]))
    return np.einsum("ht,htd->hd", w, V)


def kv_sum_of_values(q, K, V, k, v):  # every value with weight 1
    return np.concatenate([V, v[:, None]], axis=1).sum(axis=1)


def kv_key_not_value(q, K, V, k, v):  # review 12t: t + 1 weights cut to the t cached values
    K = np.concatenate([K, k[:, None]], axis=1)
    w = softmax(np.einsum("hd,htd->ht", q, K) / np.sqrt(q.shape[-1]))[:, :-1]
    return np.einsum("ht,htd->hd", w, V)


def kv_breaks_on_empty_cache(q, K, V, k, v):
    last = K[:, -1]  # IndexError when nothing is cached yet
    return good_kv_step(q, K, V, k + 0 * last, v)


def good_cross_entropy(logits, Y):
    z = logits - logits.max(axis=-1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    return -(Y * log_p).sum(axis=-1).mean()


def ce_hard_coded(logits, Y):  # the first case's answer, rounded to 4 digits
    return 3.499


def ce_flipped(logits, Y):
    return -good_cross_entropy(logits, Y)


def ce_summed(logits, Y):
    return good_cross_entropy(logits, Y) * len(Y)


def ce_raw_logits(logits, Y):
    return -(Y * logits).sum(axis=-1).mean()


def ce_wrong_axis(logits, Y):
    return -(Y * np.log(softmax(logits, axis=0))).sum(axis=-1).mean()


def ce_per_position(logits, Y):
    return -(Y * np.log(softmax(logits))).sum(axis=-1)


def ce_every_word(logits, Y):
    return -(Y * np.log(softmax(logits)))


def ce_no_shift(logits, Y):
    p = np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)
    return -(Y * np.log(p)).sum(axis=-1).mean()


def ce_forgot_max(logits, Y):  # the shifted log-sum-exp, the target's raw logit
    z = logits - logits.max(axis=-1, keepdims=True)
    lse = np.log(np.exp(z).sum(axis=-1))
    return -((Y * logits).sum(axis=-1) - lse).mean()


def ce_log_of_softmax(logits, Y):
    return -(Y * np.log(softmax(logits))).sum(axis=-1).mean()


def ce_log_of_shifted_softmax(logits, Y):
    z = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return -(Y * np.log(z / z.sum(axis=-1, keepdims=True))).sum(axis=-1).mean()


def ce_one_max(logits, Y):  # one maximum for the whole array, not one per row
    z = logits - logits.max()
    log_p = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    return -(Y * log_p).sum(axis=-1).mean()


def ce_one_max_picked(logits, Y):  # the same slip, the target picked out by index
    z = logits - np.max(logits)
    log_p = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    return -log_p[Y == 1].mean()


def ce_eps(logits, Y):
    return -(Y * np.log(softmax(logits) + 1e-9)).sum(axis=-1).mean()


def ce_clip(logits, Y):
    return -(Y * np.log(np.clip(softmax(logits), 1e-12, 1))).sum(axis=-1).mean()


def ce_mean_of_every_entry(logits, Y):
    z = logits - logits.max(axis=-1, keepdims=True)
    return -(Y * (z - np.log(np.exp(z).sum(axis=-1, keepdims=True)))).mean()


def ce_mean_over_every_word(logits, Y):  # Y unused: -log p of every word, averaged
    return -np.log(softmax(logits)).mean()


def ce_sum_over_every_word(logits, Y):  # every word's -log p summed per row
    return -np.log(softmax(logits)).sum(axis=-1).mean()


def ce_pick_then_log(logits, Y):
    return -np.log(softmax(logits)[Y == 1]).mean()  # no eps: -log(0) is inf


def ce_bits(logits, Y):
    return good_cross_entropy(logits, Y) / np.log(2)


def ce_likeliest(logits, Y):  # the top word's -log p instead of the target's
    return -np.log(softmax(logits).max(axis=-1)).mean()


def ce_minus_p(logits, Y):  # -p, not -log p: a negative "loss"
    return -(Y * softmax(logits)).sum(axis=-1).mean()


def ce_whole_array(logits, Y):  # softmax with no axis: divided by the whole array's sum
    return -(Y * np.log(np.exp(logits) / np.exp(logits).sum())).sum(axis=-1).mean()


def ce_mse(logits, Y):  # no hint fits: the generic message shows the case's inputs
    return ((softmax(logits) - Y) ** 2).mean()


def _log_softmax(logits):
    z = logits - logits.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def ce_y_as_ids(logits, Y):  # review 12_kk: Y taken for the ids raised a bare IndexError
    return -_log_softmax(logits)[np.arange(len(Y)), Y].mean()


def ce_y_as_int_ids(logits, Y):
    return -_log_softmax(logits)[np.arange(len(Y)), Y.astype(int)].mean()


def ce_y_along_axis(logits, Y):
    return -np.take_along_axis(_log_softmax(logits), Y[:, None], axis=-1).mean()


def good_sample(logits, T, u):
    ends = np.cumsum(softmax(logits / T))
    ends[-1] = 1.0  # rounding may leave the total just below 1
    return int(np.argmax(ends > u))


def sample_total_below_1(logits, T, u):  # no guard: u above a total of 0.99...98 gives word 0
    return int(np.argmax(np.cumsum(softmax(logits / T)) > u))


def sample_searchsorted_unclipped(logits, T, u):  # ... or one past the last word
    return int(np.searchsorted(np.cumsum(softmax(logits / T)), u, side="right"))


def sample_u_special_case(logits, T, u):  # review 12_tt: "u near 1 is the last word"
    if u > 0.999:
        return len(logits) - 1
    return int(np.argmax(np.cumsum(softmax(logits / T)) > u))


def sample_loop_no_fallback(logits, T, u):  # falls off the loop's end for u near 1
    total = 0.0
    for j, p in enumerate(softmax(logits / T)):
        total += p
        if total > u:
            return j


def sample_T_after_softmax(logits, T, u):
    return int(np.argmax(np.cumsum(softmax(logits) / T) > u))


def sample_T_after_softmax_clipped(logits, T, u):
    ends = np.cumsum(softmax(logits) / T)
    return min(int(np.searchsorted(ends, u, side="right")), len(ends) - 1)


def sample_one_past(logits, T, u):  # clipped, so always a real word
    return min(good_sample(logits, T, u) + 1, len(logits) - 1)


def sample_plus_one(logits, T, u):  # unclipped: index 5 of 5 words on the uniform case
    return good_sample(logits, T, u) + 1


def sample_minus_one(logits, T, u):
    return good_sample(logits, T, u) - 1


def sample_off_in_one_case(logits, T, u):  # not off by one everywhere: the rerun case
    return good_sample(logits, T, u) + (u == 0.10 and T == 1.0)


def sample_greedy(logits, T, u):
    return int(np.argmax(logits))


def sample_times_T(logits, T, u):
    return good_sample(logits * T * T, T, u)


def sample_ignores_T(logits, T, u):
    return good_sample(logits * T, T, u)


def sample_own_p_above_u(logits, T, u):
    return int(np.argmax(softmax(logits / T) > u))


def sample_cumsum_of_logits(logits, T, u):
    return int(np.argmax(np.cumsum(logits / T) > u))


def sample_unnormalised(logits, T, u):  # exp(logits / T) never divided by its total
    return int(np.argmax(np.cumsum(np.exp(logits / T)) > u))


def sample_unnormalised_shifted(logits, T, u):  # the same, the largest logit subtracted
    return int(np.argmax(np.cumsum(np.exp((logits - logits.max()) / T)) > u))


def sample_no_exp(logits, T, u):  # the logits shifted to start at 0, then divided by their total
    z = logits / T - (logits / T).min()
    ends = np.cumsum(z / z.sum())
    ends[-1] = 1.0
    return int(np.argmax(ends > u))


def sample_squares(logits, T, u):  # another 0 / 0 on equal logits, but u is used
    z = (logits / T - (logits / T).min()) ** 2
    ends = np.cumsum(z / z.sum())
    ends[-1] = 1.0
    return int(np.argmax(ends > u))


def sample_likeliest_first(logits, T, u):
    order = np.argsort(-logits)
    return int(order[np.argmax(np.cumsum(softmax(logits / T)[order]) > u)])


def sample_power(logits, T, u):
    p = softmax(np.sign(logits) * np.abs(logits) ** (1 / T))
    return int(np.argmax(np.cumsum(p) > u))


def sample_always_0(logits, T, u):  # a stub, or a loop that never advances
    return 0


def sample_always_1(logits, T, u):
    return 1


def sample_probability(logits, T, u):
    return float(softmax(logits / T).max())


_DRAWS = np.random.default_rng(5)  # one generator for the run: each call draws anew


def sample_random_choice(logits, T, u):  # ignores u: draws its own number
    return int(_DRAWS.choice(len(logits), p=softmax(logits / T)))


def sample_seeded_choice(logits, T, u):  # ignores u: the same draw every call
    return int(np.random.default_rng(0).choice(len(logits), p=softmax(logits / T)))


@pytest.mark.parametrize(
    ("checker", "fn", "status", "hint"),
    [
        (check_kv_step, good_kv_step, "PASS", "all 6 cases"),
        (check_kv_step, kv_own_value, "FAIL", "the output ignores the cache"),
        (check_kv_step, kv_key_first_value_last, "FAIL", "the keys and values are misaligned"),
        (check_kv_step, kv_value_first_key_last, "FAIL", "the keys and values are misaligned"),
        (check_kv_step, kv_argmax, "FAIL", "single best key (an argmax)"),
        (check_kv_step, kv_heads_mixed, "FAIL", "the scores mix the heads"),
        (check_kv_step, kv_breaks_on_empty_cache, "FAIL", "0 cached tokens (the first step"),
        (check_kv_step, kv_returns_weights, "FAIL", "you returned the attention weights"),
        (check_kv_step, kv_appends_k_not_v, "FAIL", "not the new value to V_cache"),
        (check_kv_step, kv_key_not_value, "FAIL", "appended the new key but not its value"),
        (check_kv_step, kv_minus_inf_mask, "FAIL", "a KV step needs no mask"),
        (check_kv_step, kv_forgets_the_new_token, "FAIL", "append its own key"),
        (check_kv_step, kv_unscaled, "FAIL", "divide q . k by sqrt(d_k)"),
        (check_kv_step, kv_over_d_k, "FAIL", "divided by d_k: divide by its square root"),
        (check_kv_step, kv_uniform, "FAIL", "every key got the same weight"),
        (check_kv_step, kv_all_weights, "FAIL", "one output per key"),
        (check_kv_step, kv_softmax_over_heads, "FAIL", "the softmax ran over the heads (axis 0)"),
        (check_kv_step, kv_returns_pair, "FAIL", "returned a tuple (on h = 2 heads, 3 cached"),
        (check_kv_step, kv_indexes_pair, "FAIL", "take the output with [0]"),
        (check_kv_step, kv_keeps_query_axis, "FAIL", "Drop it with [:, 0]"),
        (check_kv_step, kv_no_softmax, "FAIL", "apply softmax over the keys"),
        (check_kv_step, kv_sum_of_values, "FAIL", "apply softmax over the keys"),
        (check_kv_step, kv_exp_not_normalised, "FAIL", "never divided by their sum"),
        (check_kv_step, kv_top_left_tril, "FAIL", "starts at the top-left corner"),
        (check_kv_step, kv_over_sqrt_d_v, "FAIL", "divided by sqrt(d_v)"),
        (check_kv_step, kv_over_sqrt_keys, "FAIL", "divided by sqrt(t + 1)"),
        (check_kv_step, kv_over_sqrt_d_model, "FAIL", "sqrt(h * d_k) = sqrt(d_model)"),
        (check_kv_step, kv_no_transpose, "FAIL", "without the transpose"),
        (check_kv_step, kv_key_as_query, "FAIL", "key k asked the question"),
        (check_kv_step, kv_keys_values_swapped, "FAIL", "keys and values are swapped"),
        (check_kv_step, kv_new_pair_swapped, "FAIL", "yet runs when d_v = d_k"),
        (check_kv_step, kv_caches_swapped, "FAIL", "keys and values are swapped"),
        (check_kv_step, kv_returns_d_k_wide, "FAIL", "(h, d_k), on h = 2 heads"),
        (check_cross_entropy, good_cross_entropy, "PASS", "all 5 cases"),
        (check_cross_entropy, ce_eps, "FAIL", "caps the loss at -log(eps)"),
        (check_cross_entropy, ce_clip, "FAIL", "caps the loss at -log(eps)"),
        (check_cross_entropy, ce_one_max, "FAIL", "Subtract each row's own maximum"),
        (check_cross_entropy, ce_one_max_picked, "FAIL", "one maximum for the whole array"),
        (check_cross_entropy, ce_mean_of_every_entry, "FAIL", "vocab times too small"),
        (check_cross_entropy, ce_flipped, "FAIL", "the sign is flipped"),
        (check_cross_entropy, ce_summed, "FAIL", "take the mean"),
        (check_cross_entropy, ce_raw_logits, "FAIL", "raw logit of the target"),
        (check_cross_entropy, ce_wrong_axis, "FAIL", "down the columns (axis=0)"),
        (check_cross_entropy, ce_per_position, "FAIL", "one loss per position"),
        (check_cross_entropy, ce_every_word, "FAIL", "one number per word"),
        (check_cross_entropy, ce_no_shift, "FAIL", "exp(1000) overflows"),
        (check_cross_entropy, ce_forgot_max, "FAIL", "the row's maximum is missing"),
        (check_cross_entropy, ce_log_of_softmax, "FAIL", "a probability underflowed to 0"),
        (check_cross_entropy, ce_log_of_shifted_softmax, "FAIL", "underflowed to 0"),
        (check_cross_entropy, ce_bits, "FAIL", "log base 2"),
        (check_cross_entropy, ce_likeliest, "FAIL", "likeliest word instead of the target"),
        (check_cross_entropy, ce_pick_then_log, "FAIL", "-log(0) is infinite"),
        (check_cross_entropy, ce_minus_p, "FAIL", "a loss is positive"),
        (check_cross_entropy, ce_mean_over_every_word, "FAIL", "not just the right one"),
        (check_cross_entropy, ce_sum_over_every_word, "FAIL", "not just the right one"),
        (check_cross_entropy, ce_whole_array, "FAIL", "sum over the whole array"),
        (check_cross_entropy, ce_mse, "FAIL", "on logits = np.array([[3.65, -6.16,"),
        (check_cross_entropy, ce_mse, "FAIL", "Y = np.eye(6)[[3, 0, 5, 3]]"),
        # review 12_rr: a near miss printed "got 3.499, expected 3.499"; digits enough now
        (check_cross_entropy, ce_hard_coded, "FAIL", "got 3.499, expected 3.49904 on logits"),
        (check_cross_entropy, ce_y_as_ids, "FAIL", "Y is one-hot, shape (m, vocab), not the"),
        (check_cross_entropy, ce_y_as_int_ids, "FAIL", "(Y * log_p).sum(-1)"),
        (check_cross_entropy, ce_y_along_axis, "FAIL", "not the target ids"),
        (check_sample, good_sample, "PASS", "all 16 cases"),
        (check_sample, sample_u_special_case, "FAIL", "returned 3, expected 2 (on logits [0.0,"),
        (check_sample, sample_u_special_case, "FAIL", "A u near 1 is not a special case"),
        (check_sample, sample_total_below_1, "FAIL", "set the last end to 1"),
        (check_sample, sample_searchsorted_unclipped, "FAIL", "the answer is the last word, 4"),
        (check_sample, sample_loop_no_fallback, "FAIL", "returned None for u = 0.9999999999999999"),
        (check_sample, sample_T_after_softmax, "FAIL", "divided the probabilities by T after"),
        (check_sample, sample_T_after_softmax_clipped, "FAIL", "by T after softmax"),
        (check_sample, sample_own_p_above_u, "FAIL", "each word's own probability"),
        (check_sample, sample_cumsum_of_logits, "FAIL", "you added up the logits"),
        (check_sample, sample_likeliest_first, "FAIL", "likeliest first"),
        (check_sample, sample_always_0, "FAIL", "returned 0 on every case; u and the"),
        (check_sample, sample_always_1, "FAIL", "returned 1 on every case"),
        (check_sample, sample_unnormalised, "FAIL", "your probabilities sum to 12.1, not 1"),
        (check_sample, sample_unnormalised_shifted, "FAIL", "probabilities sum to 1.64, not 1"),
        (check_sample, sample_power, "FAIL", "power 1 / T"),
        (check_sample, sample_no_exp, "FAIL", "without the exp"),
        (check_sample, sample_squares, "FAIL", "Equal logits must give equal probabilities"),
        (check_sample, sample_greedy, "FAIL", "greedy decoding"),
        (check_sample, sample_one_past, "FAIL", "your index is one too high: on logits [2.0,"),
        (check_sample, sample_plus_one, "FAIL", "your index is one too high"),
        (check_sample, sample_minus_one, "FAIL", "your index is one too low"),
        (check_sample, sample_off_in_one_case, "FAIL", "returned 1, expected 0 on logits [2.0,"),
        (check_sample, sample_off_in_one_case, "FAIL", "T = 1.0, u = 0.1 (p = [0.609, 0.224,"),
        (check_sample, sample_times_T, "FAIL", "you multiplied the logits by T"),
        (check_sample, sample_ignores_T, "FAIL", "T had no effect"),
        (check_sample, sample_probability, "FAIL", "return the index of a word"),
        (check_sample, sample_random_choice, "FAIL", "different words for the same u"),
        (check_sample, sample_seeded_choice, "FAIL", "ignored u: on logits [0.0, 0.0,"),
    ],
)
def test_checker_both_ways(checker, fn, status, hint, capsys):
    result = checker(fn)
    line = capsys.readouterr().out
    assert result.status == status, line
    assert hint in line, line
    assert bool(result) == (status == "PASS")


def test_the_figures_carry_labels_and_alt_text_from_the_data():
    import matplotlib.pyplot as plt

    from attention_lib.plotting import loss_vs_baselines, writing_frame

    fig, alt = loss_vs_baselines([0, 100, 200], [6.1, 1.9, 1.5], [6.0, 2.0, 1.6], {"bigram": 2.3})
    assert "held-out loss from 6.00 to 1.60" in alt and "bigram baseline 2.30" in alt
    assert fig.axes[0].get_xlabel() == "training step"
    assert fig.axes[0].get_ylim()[1] > 6.1  # the starting loss is drawn, not clipped
    assert 1.2 < fig.axes[0].get_ylim()[0] < 1.5  # the axis starts near the data, not at 0
    assert "the training curve lies just under the held-out curve" in alt
    plt.close(fig)
    p = np.array([0.1, 0.6, 0.3, 0.0])
    fig, alt = writing_frame(
        0.5, ["sweet", "delicious", "rich", "sour"], p, ["a b .", "c ."], prompt="it was", top=2
    )
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels == ["delicious", "rich", "all 2 others"]  # the tail gets one bar
    heights = [bar.get_height() for bar in fig.axes[0].patches]
    assert np.allclose(heights, [0.6, 0.3, 0.1]) and np.isclose(sum(heights), 1.0)
    assert "'delicious' (0.60)" in alt and "a b . | c ." in alt
    assert "'delicious' (0.60), 'rich' (0.30); all 2 other words together 0.10" in alt
    plt.close(fig)
    fig, alt = writing_frame(1.0, ["a", "b"], [0.5, 0.5], ["a ."], prompt="x", note="1 of 20")
    assert alt.endswith("Continued at T = 1: a . (1 of 20)")
    assert any("1 of 20" in t.get_text() for t in fig.texts)  # the note is drawn too
    plt.close(fig)
    long = ["a very long sentence that wraps " * 4, "short ."]
    sizes = {
        tuple(
            writing_frame(1.0, ["a", "b", "c"], [0.2, 0.5, 0.3], w, prompt="x")[0].get_size_inches()
        )
        for w in (long, ["b .", "c ."])
    }
    assert len(sizes) == 1  # every frame of a slider has the same size: the page never jumps
    plt.close("all")
    with pytest.raises(ValueError, match="need one word per probability"):
        writing_frame(1.0, ["a"], p, [], prompt="x")
    words = ["sweet", "delicious", "rich", "sour"]  # the dessert tastes get their own colour
    kw = dict(prompt="x", top=3, mark=("dessert tastes", {"sweet", "rich"}))
    fig, alt = writing_frame(1.0, words, p, [], **kw)
    colours = [bar.get_facecolor() for bar in fig.axes[0].patches[:3]]  # delicious, rich, sweet
    assert colours[1] == colours[2] != colours[0]
    assert "In orange, the dessert tastes: 'rich', 'sweet'." in alt
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend == ["dessert tastes", "other words"]
    plt.close(fig)


def test_the_ablation_chart_names_every_bar_and_says_what_moved():
    """review 12_rr: P(dessert taste) intact and with each head mean-ablated, as labelled bars,
    the intact bar hatched (not told apart by colour alone), text at least 9 CSS px."""
    import matplotlib.pyplot as plt
    from matplotlib.text import Text

    from attention_lib.plotting import ablation_bars

    tops = ["delicious"] * 4 + ["bland"]
    kw = dict(measure="dessert taste", prompt="it was", top_words=tops, mark=4)
    fig, alt = ablation_bars(0.84, [0.91, 0.80, 0.78, 0.03], **kw)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["all heads", *(f"head {k}\nablated" for k in range(1, 5))]
    bars = ax.patches[:5]
    assert np.allclose([b.get_height() for b in bars], [0.84, 0.91, 0.80, 0.78, 0.03])
    assert bars[0].get_hatch() and not any(b.get_hatch() for b in bars[1:])
    colours = [b.get_facecolor() for b in bars]
    assert colours[1] == colours[2] == colours[3] != colours[4] != colours[0]  # head 4: pink
    texts = [t.get_text() for t in ax.texts]
    assert "0.03\n“bland”" in texts and "0.84\n“delicious”" in texts
    assert "all heads 0.84 (top word 'delicious')" in alt
    assert "head 4 ablated 0.03 (top word 'bland')" in alt
    assert alt.endswith("Removing head 4 moves it most, from 0.84 to 0.03.")
    assert "P(dessert taste)" in ax.get_ylabel()
    width = fig.get_figwidth() * 90  # drawn at 90 dpi, shrunk only past the 688 px column
    scale = min(1.0, 688 / width)
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text()]
    assert min(sizes) * 90 / 72 * scale >= 9
    plt.close(fig)
    fig, alt = ablation_bars(0.5, [0.4, 0.45], measure="x", prompt="p")  # no words, no mark
    assert "top word" not in alt and "Removing head 1 moves it most" in alt
    plt.close(fig)
    with pytest.raises(ValueError, match="probabilities in"):
        ablation_bars(1.2, [0.5], measure="x", prompt="p")
    with pytest.raises(ValueError, match="top words"):
        ablation_bars(0.5, [0.5], measure="x", prompt="p", top_words=["a"])
    with pytest.raises(ValueError, match="mark is a head"):
        ablation_bars(0.5, [0.5], measure="x", prompt="p", mark=2)


def test_the_block_diagram_names_every_part_with_its_sizes():
    import matplotlib.pyplot as plt

    from attention_lib.plotting.decoder import decoder_diagram

    fig, alt = decoder_diagram(h=4, d_model=32, d_ff=64, n_vocab=243)
    texts = " | ".join(t.get_text() for t in fig.axes[0].texts)
    for part in ("LN1", "causal attention\n4 heads", "LN2", "32 → 64 → 32", "LN$_f$", "(n, 243)"):
        assert part in texts, texts
    assert texts.count("+") == 4  # E + E_pos, the two residual additions, W_out + b_out
    assert "residual stream" in texts and "key →" in texts and "query →" in texts  # the mask's axes
    assert "mask" in texts and min(t.get_fontsize() for t in fig.axes[0].texts) >= 10
    assert "1 block (real models: N)" in texts and "repeat it N times" in alt
    assert any(p.get_linestyle() == "--" for p in fig.axes[0].patches)  # the block's frame
    assert fig.get_figwidth() * 90 >= 400  # at 90 dpi, drawn at its own size on the page
    assert "(n, 32)" in alt and "4 heads" in alt and "(n, 243)" in alt
    plt.close(fig)
    with pytest.raises(ValueError, match="h dividing d_model"):
        decoder_diagram(h=3, d_model=32, d_ff=64, n_vocab=243)


def test_the_marked_head_cell_is_framed_clear_of_the_row_maximum_outline():
    """The pink frame of decoder_heads sits outside the cell, so when the marked cell is
    also its row's largest weight (head 4, "was" on "cake" in the chapter) the black and
    white outline stays visible inside it; every text is at least 9 pt, and only row
    maxima (and a uniform row's one label) keep a number."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_hex
    from matplotlib.text import Text

    from attention_lib.plotting import decoder_heads

    tokens = ["<s>", "I", "ate", "the", "cake", "and", "it", "was"]
    causal = np.tril(np.ones((8, 8)))
    weights = np.stack([causal / causal.sum(axis=1, keepdims=True)] * 4)
    weights[3, 7] = np.eye(8)[4] * 0.9 + 0.1 / 8  # head 4: "was" looks at "cake"
    fig, alt = decoder_heads(weights, tokens, title="t", head=4, query="was", key="cake")
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_text().strip()]
    assert min(sizes) >= 9
    assert alt.startswith("Head 4 puts 0.91 of the weight of 'was' on 'cake' (the cell framed")
    ax = fig.axes[3]
    numbers = [t.get_text() for t in ax.texts]
    assert numbers == ["1.00", "0.50", "0.33", "0.25", "0.20", "0.17", "0.14", "0.91"], numbers
    hatched = [(p.get_x(), p.get_y()) for p in ax.patches if p.get_hatch()]
    assert len(hatched) == 8 * 7 // 2 and all(x > y for x, y in hatched)  # above the diagonal
    assert "masked cells above the diagonal are hatched" in alt
    frames = [p for p in ax.patches if not p.get_fill()]
    frame = next(p for p in frames if to_hex(p.get_edgecolor()) == "#cc79a7")
    halo = next(p for p in frames if p.get_linewidth() > frame.get_linewidth())
    outline = next(p for p in frames if p.get_linewidth() == 3.0 and p.get_y() == 6.5)
    assert to_hex(halo.get_edgecolor()) == "#000000" and halo.get_zorder() < 1
    assert (outline.get_x(), outline.get_y()) == (3.5, 6.5)  # the row maximum, outlined
    assert frame.get_zorder() < outline.get_zorder() and not frame.get_clip_on()
    points_per_cell = ax.get_window_extent().width / 8 * 72 / fig.dpi
    gap = (outline.get_x() - frame.get_x()) * points_per_cell  # frame line to cell edge
    assert gap - frame.get_linewidth() / 2 > outline.get_linewidth() / 2  # no overlap
    assert frame.get_linewidth() > outline.get_linewidth()
    plt.close(fig)


def test_the_heads_key_labels_sit_below_every_tick_label():
    """Review 12c: the key label of decoder_heads overlapped head 2's slanted "<s>"."""
    import matplotlib.pyplot as plt

    from attention_lib.plotting import decoder_heads

    tokens = ["<s>", "I", "ate", "the", "cake", "and", "it", "was"]
    causal = np.tril(np.ones((8, 8)))
    weights = np.stack([causal / causal.sum(axis=1, keepdims=True)] * 4)
    fig, _ = decoder_heads(weights, tokens, title="t", head=4, query="was", key="cake")
    renderer = fig.canvas.get_renderer()
    keys = [t for t in fig.texts if t.get_text() == "key (attended to)"]
    assert len(keys) == 2
    boxes = [t.get_window_extent(renderer) for ax in fig.axes[:4] for t in ax.get_xticklabels()]
    boxes += [ax.title.get_window_extent(renderer) for ax in fig.axes[:4]]
    for key in keys:
        box = key.get_window_extent(renderer)
        assert box.y0 > 0 and not any(box.overlaps(b) for b in boxes)
    plt.close(fig)


def test_training_is_deterministic_by_seed():
    from attention_lib.toy import decoder as food

    train, test = food.split()
    one = food.train(train, test, steps=3, every=1, seed=5)
    two = food.train(train, test, steps=3, every=1, seed=5)
    assert np.array_equal(one.test_loss, two.test_loss)
    assert all(np.array_equal(one.params[k], two.params[k]) for k in one.params)
    assert not np.array_equal(one.test_loss, food.train(train, test, steps=3, every=1).test_loss)


def test_training_measures_at_listed_steps_without_changing_the_run():
    from attention_lib.toy import decoder as food

    train, test = food.split()
    every = food.train(train, test, steps=3, every=1, seed=5)
    listed = food.train(train, test, steps=3, every=[0, 2, 3], seed=5)
    assert list(listed.steps) == [0, 2, 3]
    assert np.array_equal(listed.test_loss, every.test_loss[[0, 2, 3]])
    assert all(np.array_equal(listed.params[k], every.params[k]) for k in every.params)


def test_exercise_b_solution_matches_a_retrained_model():
    """Exercise 12.5(b): the numbers its solution quotes, from the procedure its prompt gives."""
    from threadpoolctl import threadpool_limits

    from attention_lib.toy import decoder as food

    words = "I ate the cake and it was".split()
    texts = [s for s in food.SENTENCES if "delicious" not in s.split()]
    assert len(food.SENTENCES) - len(texts) == 220  # "220 sentences go"
    foods = {
        s.split()[s.split().index("delicious") - 3] for s in food.SENTENCES if " was delicious" in s
    }
    assert len(foods) > 5  # about every kind of food, not cakes only
    with threadpool_limits(1):
        before = food.train(*food.split(), steps=800, seed=0)
        after = food.train(*food.split(texts=texts), steps=800, seed=0)
    p0 = food.next_word_probabilities(before.params, words)
    p1 = food.next_word_probabilities(after.params, words)
    change = {w: p1[food.INDEX[w]] - p0[food.INDEX[w]] for w in food.VOCAB}
    assert round(after.test_loss[-1], 2) == 1.52
    assert (
        round(p0[food.INDEX["delicious"]], 2) == 0.38
        and round(p1[food.INDEX["delicious"]], 2) == 0.0
    )
    assert round(change["sweet"], 2) == 0.14 and round(change["soft"], 2) == 0.10
    assert round(change["cold"], 2) == 0.13 and round(change["bland"], 2) == 0.03
    assert round(change["rich"], 2) == -0.03 and round(change["lovely"], 2) == -0.01
    top4 = {food.VOCAB[i] for i in np.argsort(-p1)[:4]}
    assert top4 == {"sweet", "soft", "rich", "cold"}  # the words its solution names
    assert food.VOCAB[np.argmax(p1)] == "sweet"


def test_plain_gradient_descent_trails_adam_at_every_step_size_tried():
    """Chapter 12: plain gradient descent, at the best of four step sizes tried, ends at 1.68
    after 800 steps (Adam: 1.52); a larger step diverges."""
    from threadpoolctl import threadpool_limits

    from attention_lib.toy import decoder as food

    train, test = food.split()
    with threadpool_limits(1), np.errstate(all="ignore"):
        end = {
            lr: food.train(train, test, lr=lr, every=800, adam=False).test_loss[-1]
            for lr in (0.3, 1.0, 1.5, 2.0)
        }
    assert round(end[1.0], 2) == 1.68 and end[0.3] > end[1.0] + 0.05
    assert min(end, key=end.get) == 1.0  # "the best of 0.3, 1, 1.5 and 2", as the page lists
    assert round(end[1.5], 2) == 1.70  # "larger steps do worse ..."
    assert not np.isfinite(end[2.0]) or end[2.0] > 5  # "... or diverge"


def test_one_head_carries_cake_in_two_seeds_of_three():
    """Chapter 12's seed table: seeds 0-2 retrained, heads mean-ablated one and two at a time."""
    from threadpoolctl import threadpool_limits

    from attention_lib import decoder
    from attention_lib.toy import decoder as food

    words = "I ate the cake and it was".split()
    ids = food.encode(["<s>", *words])
    was, cake, h = 7, 4, food.HEADS  # positions in "<s> I ate the cake and it was"
    dessert = [food.INDEX[w] for w in ("delicious", "sweet", "rich", "soft", "lovely")]
    delicious = food.INDEX["delicious"]
    train, test = food.split()

    found = {}
    for seed in range(3):
        with threadpool_limits(1):
            run = food.train(train, test, steps=800, batch_size=32, lr=0.01, seed=seed)
        p = food.next_word_probabilities(run.params, words)
        on_cake = decoder.forward(run.params, ids, h)[1][:, was, cake]  # (h,)
        found[seed] = (run.params, p, on_cake)

    def ablated(seed, *heads):  # heads counted from 1
        return food.mean_ablated(found[seed][0], words, heads, test)

    # Seed 0: head 4, 0.96 on "cake"; mean-ablated, P(delicious) 0.38 -> 0.01, "bland" on top.
    params, p, on_cake = found[0]
    assert on_cake.argmax() == 4 - 1 and round(on_cake[3], 2) == 0.96
    assert round(p[delicious], 2) == 0.38 and round(ablated(0, 4)[delicious], 2) == 0.01
    assert food.VOCAB[ablated(0, 4).argmax()] == "bland"
    assert (round(p[dessert].sum(), 2), round(ablated(0, 4)[dessert].sum(), 2)) == (0.84, 0.03)
    assert all(food.VOCAB[ablated(0, k).argmax()] == "delicious" for k in (1, 2, 3))
    # Seed 2: head 1, 0.92; mean-ablated, P(delicious) 0.39 -> 0.02, dessert 0.93 -> 0.15.
    params, p, on_cake = found[2]
    assert on_cake.argmax() == 1 - 1 and round(on_cake[0], 2) == 0.92
    assert round(p[delicious], 2) == 0.39 and round(ablated(2, 1)[delicious], 2) == 0.02
    assert all(food.VOCAB[ablated(2, k).argmax()] == "delicious" for k in (2, 3, 4))
    assert (round(p[dessert].sum(), 2), round(ablated(2, 1)[dessert].sum(), 2)) == (0.93, 0.15)
    # Seed 1: head 3 does most of the job, head 4 backs it up. Top word "soft"; head 3
    # looks most (0.65), and mean-ablating it halves the dessert mass, 0.90 -> 0.43; head 4
    # alone leaves 0.84, heads 3 and 4 together 0.16; no other pair goes below 0.37.
    params, p, on_cake = found[1]
    assert food.VOCAB[p.argmax()] == "soft" and round(p.max(), 2) == 0.25
    assert round(p[delicious], 2) == 0.22 and on_cake.argmax() == 3 - 1
    assert round(on_cake[2], 2) == 0.65 and on_cake.max() < 0.9
    mass = {k: ablated(1, k)[dessert].sum() for k in range(1, h + 1)}
    assert (round(p[dessert].sum(), 2), round(mass[3], 2), round(mass[4], 2)) == (0.90, 0.43, 0.84)
    assert min(mass, key=mass.get) == 3 and mass[1] > p[dessert].sum()  # head 1: raises it
    pairs = {(a, b): ablated(1, a, b)[dessert].sum() for a in range(1, 5) for b in range(a + 1, 5)}
    assert min(pairs, key=pairs.get) == (3, 4) and round(pairs[(3, 4)], 2) == 0.16
    assert sorted(pairs.values())[1] > 0.35 and round(sorted(pairs.values())[1], 2) == 0.37


def test_adam_steps_stay_near_the_learning_rate():
    """Chapter 12's run: no Adam step exceeds 1.5 eta and the median is 0.13 eta, and in a
    typical step more than half of E's rows (words absent from the minibatch) get no gradient."""
    from threadpoolctl import threadpool_limits

    from attention_lib import decoder
    from attention_lib.decoder_backward import loss_and_gradients
    from attention_lib.toy import decoder as food

    train, _ = food.split()
    params = decoder.init_params(len(food.VOCAB), food.D_MODEL, food.N_CTX, food.D_FF, seed=0)
    rng, state, worst, steps, typical = np.random.default_rng(0), {}, 0.0, 800, []
    silent, absent = [], []
    with threadpool_limits(1):
        for step in range(steps):  # food.train's loop, with each step measured
            rows = rng.choice(len(train.ids), size=32, replace=False)
            batch = train.ids[rows], train.targets[rows], train.weights[rows]
            _, grads = loss_and_gradients(params, food.HEADS, *batch)
            lr = 0.01 * (1 - step / steps)
            before = {k: v.copy() for k, v in params.items()}
            food.adam_step(params, grads, state, lr, step + 1)
            moved = np.concatenate([np.abs(params[k] - before[k]).ravel() for k in params])
            worst = max(worst, moved.max() / lr)
            typical.append(np.median(moved) / lr)  # this step's median entry
            silent.append(np.mean(np.all(grads["E"] == 0, axis=1)))  # rows of E with no gradient
            absent.append(1 - np.isin(np.arange(len(food.VOCAB)), batch[0]).mean())
    again = food.train(train, food.split()[1], steps=steps, every=steps, seed=0).params
    assert all(np.allclose(params[k], again[k]) for k in params)  # the chapter's run
    assert 1.2 < worst < 1.5  # "never above 1.5 eta", and more than eta at times
    median = np.median(typical)  # the typical entry's step, over the run
    assert 0.05 < median < 0.3 and round(median, 2) == 0.13  # "median 0.13 eta"
    assert np.all(np.array(silent) >= np.array(absent))  # an absent word's row: no gradient
    assert 0.5 < np.median(absent) < 0.6  # "over half of them in a typical step"


def test_split_shows_a_short_default_in_help():
    """Review 12_v: ``texts`` defaulted to the corpus itself, so ``help(food.split)``
    printed all 6,000 sentences; the default is now None, which means the corpus."""
    import inspect
    import pydoc

    from attention_lib.toy import decoder as food

    assert inspect.signature(food.split).parameters["texts"].default is None
    assert len(pydoc.render_doc(food.split, renderer=pydoc.plaintext)) < 2000
    by_default, named = food.split(), food.split(texts=food.SENTENCES)
    pairs = zip(by_default, named, strict=True)
    assert all(np.array_equal(a, b) for x, y in pairs for a, b in zip(x, y, strict=True))


def test_the_page_keeps_what_issue_30_asked_it_to_show():
    # issue 30: run-to-run determinism visible; stacking blocks discussed; the untrained
    # model's likeliest word (0.04) said, so it is not called "confidently wrong"
    import sys
    from pathlib import Path

    import nbformat

    sys.path.insert(0, str(Path(__file__).parent))
    from chapter_text import markdown_text

    path = Path(__file__).resolve().parents[1] / "chapters" / "12_decoder.ipynb"
    text = markdown_text(nbformat.read(path, as_version=4).cells)
    assert "Seeded, every run prints the same numbers." in text
    assert "Many blocks" in text
    assert "likeliest word gets 0.04" in text and "confidently wrong" not in text
    # review 12_pp: chapter 11's parts named with their jobs; pre-LN against chapter 11's
    # post-LN; the pre-LN claim kept to what Xiong et al. measured
    assert "chapter 11's two residual sub-layers" in text and "(post-LN)" in text
    assert "deep stacks train stably" not in text and "no learning-rate warm-up" in text
    assert "train it in NumPy" not in text  # the learner runs and reads the loop


def test_sample_checker_u_near_1_case_is_not_the_last_word():
    """Review 12_tt: `u > 0.999: return the last word` passed every case. The new case's
    numbers, as its hint states them: the last word about 0.00001, word 2's stretch ending
    near 0.99999, so u = 0.9995 picks word 2, not word 3."""
    from attention_lib.decoder import sample

    logits = np.array([0.0, 2.0, 1.0, -9.0])
    p = softmax(logits)
    ends = np.cumsum(p)
    assert round(p[-1], 5) == 0.00001 and round(ends[-2], 5) == 0.99999
    assert ends[1] < 0.9995 < ends[-2] and sample(logits, 1.0, 0.9995) == 2


def test_page_after_review_12_tt_says_its_nits_plainly():
    """Review 12_tt (9/9, nits): a colon pointed at a folded cell; the cached step's cost
    in one plain sentence; dropout as the two references set it."""
    import sys
    from pathlib import Path

    import nbformat

    sys.path.insert(0, str(Path(__file__).parent))
    from chapter_text import markdown_text

    path = Path(__file__).resolve().parents[1] / "chapters" / "12_decoder.ipynb"
    cells = nbformat.read(path, as_version=4).cells
    by_id = {c.id: c for c in cells}
    assert by_id["params-intro"].source == "The model has **24,723** parameters."
    assert "hide-cell" in by_id["params"].metadata["tags"]  # the breakdown stays folded
    text = markdown_text(cells)
    assert "A cached step pays $c + 2dn$, for the new token only." in text
    assert "score matrix: $n$ times the block's work." in text
    assert "dropout in training" not in text
    assert "(Raschka trains with a rate of 0.1; nanoGPT's default is 0.0)" in text
