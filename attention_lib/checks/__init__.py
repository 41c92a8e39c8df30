"""Exercise checkers: run a learner's function on fixed cases and say what went wrong.

A checker never raises. It prints exactly one line that starts with a stable tag, so a
grader can read it and a learner can act on it::

    [softmax] PASS: all 15 cases match the reference.
    [softmax] FAIL: got nan or inf for scores near 1000: exp(1000) overflows. Subtract ...
    [softmax] TODO: your function returned None: write its body, ending with return; run again.

and returns a :class:`CheckResult`, which is truthy exactly when the exercise passed.
The hints come from recognising the usual mistakes, not from generic "wrong answer"s.

:mod:`.base` holds the shared machinery; each chapter's checkers live in a module of
their own and are re-exported here, so ``from attention_lib.checks import
check_softmax`` works whichever module a checker is in.
"""

from .all_at_once import check_attention_rows, check_score_memory
from .attention import check_attention
from .attention_params import check_attention_params
from .backward_pass import check_attention_backward
from .base import CheckResult
from .batch_mask import check_batch_mask
from .blend_loop import check_blend
from .blending import check_output_change
from .block import check_decoder_block
from .cls_share import check_cls_share
from .decoder import check_cross_entropy, check_kv_step
from .embeddings import check_cosine_similarity
from .encoder_attention import check_attention_with_biases
from .entropy import check_entropy
from .gradients import check_numerical_gradient
from .hull_escape import check_hull_escape
from .learning import check_grad_V, check_initial_loss, check_softmax_backward
from .masked_softmax import check_masked_softmax
from .masking import check_causal_count, check_causal_mask
from .merge import check_merge
from .multi_head import check_multi_head
from .one_score import check_one_score
from .param_count import check_param_count
from .positions import check_pe_length, check_pe_offset, check_positional_encoding
from .projections import check_projection_element, check_self_matches
from .real_model import check_layer_norm, check_mean_pool
from .reordering import check_reordering
from .sampling import check_sample
from .scaling import check_scaled_scores
from .score_gradients import check_grad_QK
from .scores import check_scores
from .scores_change import check_scores_that_change
from .softmax import check_softmax
from .split_heads import check_split_heads
from .top_weight import check_mean_top_weight
from .variance import check_dot_variance

__all__ = [
    "CheckResult",
    "check_attention",
    "check_attention_backward",
    "check_attention_params",
    "check_attention_rows",
    "check_attention_with_biases",
    "check_batch_mask",
    "check_blend",
    "check_causal_count",
    "check_causal_mask",
    "check_cls_share",
    "check_cosine_similarity",
    "check_cross_entropy",
    "check_decoder_block",
    "check_dot_variance",
    "check_mean_top_weight",
    "check_entropy",
    "check_grad_QK",
    "check_grad_V",
    "check_hull_escape",
    "check_initial_loss",
    "check_kv_step",
    "check_layer_norm",
    "check_masked_softmax",
    "check_mean_pool",
    "check_merge",
    "check_multi_head",
    "check_numerical_gradient",
    "check_one_score",
    "check_output_change",
    "check_param_count",
    "check_pe_length",
    "check_pe_offset",
    "check_positional_encoding",
    "check_projection_element",
    "check_reordering",
    "check_sample",
    "check_scaled_scores",
    "check_score_memory",
    "check_scores",
    "check_scores_that_change",
    "check_self_matches",
    "check_softmax",
    "check_softmax_backward",
    "check_split_heads",
]
