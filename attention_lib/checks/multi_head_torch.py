"""Chapter 7 checker, review 07_rr: the PyTorch habit, ``X @ W.T``, in the multi-head loop
(``multi_head_slips.review_slips`` adds these to its list; ``W_o.T`` alone is named in
``multi_head_mistakes.py``)."""

from __future__ import annotations

from ..heads import multi_head_attention

#: What the hint says about the convention, whichever matrices were transposed.
_CONVENTION = (
    "PyTorch's nn.Linear stores its weight as W.T and computes X @ weight.T, but here "
    "W_q, W_k, W_v and W_o are (d_model, d_model) matrices used as they are: "
    "Q_i = X @ W_q[:, cols], with no transpose"
)


def torch_layout_slips(X, W_q, W_k, W_v, W_o, h: int) -> list[tuple]:
    """X @ W.T for W_q, W_k and W_v (W_o as it is), and for all four matrices."""
    W_qkv_t = (W_q.T, W_k.T, W_v.T)
    return [
        (
            multi_head_attention(X, *W_qkv_t, W_o, h=h)[0],
            f"your projections look like X @ W_q.T (and W_k.T, W_v.T). {_CONVENTION}.",
        ),
        (
            multi_head_attention(X, *W_qkv_t, W_o.T, h=h)[0],
            "every matrix was transposed: X @ W_q.T, X @ W_k.T, X @ W_v.T and the "
            f"concatenation @ W_o.T. {_CONVENTION}, and the concatenation @ W_o.",
        ),
    ]
