"""A tiny JAX training step whose failures JAX itself prints: ``python step.py SCENARIO`` (CPU).

Each scenario writes one event to stderr: the uncaught exception through jit as CPython's traceback
prints it after JAX's traceback filtering (jax/_src/traceback_util.py: "The stack trace below excludes
JAX-internal frames." and a rule of dashes, then the chain to the unfiltered exception), with
JAX_TRACEBACK_FILTERING=off, a shape error, and jax_debug_nans' FloatingPointError.
"""

import sys

import jax
import jax.numpy as jnp


@jax.jit
def loss_fn(w, x):
    return jnp.dot(x, w).sum()


def s_shape():
    w = jnp.ones((4, 3))
    x = jnp.ones((2, 5))
    loss_fn(w, x)


@jax.jit
def bad_index(x):
    if x.sum() > 0:  # a traced value in Python control flow
        return x
    return -x


def s_concrete():
    bad_index(jnp.ones(3))


def s_nans():
    jax.config.update("jax_debug_nans", True)

    @jax.jit
    def logloss(p):
        return jnp.log(p - 1.0)

    logloss(jnp.zeros(2))


if __name__ == "__main__":
    globals()["s_" + sys.argv[1]]()
