"""attention_lib: the small NumPy library behind *Attention, Step by Step*.

The math lives in :mod:`attention_lib.core` and :mod:`attention_lib.heads` and is
re-exported here. The running
example is :mod:`attention_lib.toy`, figures are in :mod:`attention_lib.plotting`,
static-friendly sliders in :mod:`attention_lib.widgets` and exercise checkers in
:mod:`attention_lib.checks`. Import those submodules by name: plotting and widgets
pull in Matplotlib and ipywidgets, which the math does not need.
"""

from .chunked import attention_by_rows, attention_loop, attention_matrix, chunked_attention
from .core import (
    attention_scores,
    causal_mask,
    positional_encoding,
    scaled_dot_product_attention,
    softmax,
)
from .heads import merge_heads, multi_head_attention, split_heads
from .masks import pad_batch, padding_mask

__all__ = [
    "attention_by_rows",
    "attention_loop",
    "attention_matrix",
    "attention_scores",
    "causal_mask",
    "chunked_attention",
    "merge_heads",
    "multi_head_attention",
    "pad_batch",
    "padding_mask",
    "positional_encoding",
    "scaled_dot_product_attention",
    "softmax",
    "split_heads",
]

__version__ = "0.1.0"
