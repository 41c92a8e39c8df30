r"""The parts of a Transformer layer around attention: layer norm and GELU.

Chapter 11 runs them inside a real pretrained encoder and chapter 12 inside a tiny
decoder it trains; both import them from here, so the course has one copy of each.
"""

from __future__ import annotations

import math

import numpy as np

from .validate import as_float_array


def layer_norm(x, gamma, beta, eps: float = 1e-12) -> np.ndarray:
    r"""Normalise each token's vector to mean 0 and variance 1, then rescale and shift.

    ``x`` (..., d_model); ``gamma``, ``beta`` (d_model,) are the learned scale and shift;
    ``eps`` keeps a constant vector from dividing by zero.

    .. math:: \operatorname{LN}(x) = \gamma \odot \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}}
        + \beta, \qquad \mu, \sigma^2 = \text{mean and variance of } x\text{'s entries}
    """
    x = as_float_array(x, "x", min_ndim=1)
    mu = x.mean(axis=-1, keepdims=True)  # (..., 1): one mean per token
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)  # (..., 1), the population variance
    return (x - mu) / np.sqrt(var + eps) * gamma + beta


_erf = np.vectorize(math.erf, otypes=[np.float64])  # NumPy has no erf; this one is exact


def gelu(x) -> np.ndarray:
    r"""BERT's activation, the Gaussian error linear unit, in its exact ``erf`` form.

    .. math:: \operatorname{GELU}(x) = \frac{x}{2}\left(1 + \operatorname{erf}
        \frac{x}{\sqrt 2}\right)
    """
    x = as_float_array(x, "x")
    return (0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))).astype(x.dtype)
