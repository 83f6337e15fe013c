"""A tiny TensorFlow/Keras training run whose failures TensorFlow itself prints: ``python fit.py SCENARIO``
(CPU). Each scenario writes one uncaught error to stderr, after TensorFlow's own C++ log lines (oneDNN,
cpu_feature_guard: ``yyyy-mm-dd hh:mm:ss.uuuuuu: I tensorflow/...] ...``, absl's ``W0000 00:00:...``)
and Keras' progress lines:

- ``fit_gather``: an out-of-range token id through ``Model.fit``: ``InvalidArgumentError: Graph
  execution error:``, a blank line, ``Detected at node ... defined at (most recent call last):`` and
  the frames where the op was built, then the op's message, ``[[{{node ...}}]]`` and ``[Op:__inference_...]``.
- ``check_numerics``: a NaN caught by ``tf.debugging.check_numerics`` in a ``tf.function``.
- ``eager``: an op's error in eager mode (``{{function_node __wrapped__Reshape_...}} ... [Op:Reshape]``).
- ``build``: a layer called on inputs of the wrong shape: Keras' ``ValueError: Exception encountered
  when calling ...`` with its blank lines and ``Arguments received by ...`` bullets.
"""

import sys

import numpy as np
import tensorflow as tf


def model(vocab=10):
    m = tf.keras.Sequential([tf.keras.Input(shape=(4,), dtype="int32"), tf.keras.layers.Embedding(vocab, 8),
                             tf.keras.layers.GlobalAveragePooling1D(), tf.keras.layers.Dense(1)])
    m.compile(optimizer="adam", loss="mse")
    return m


def s_fit_gather():
    m = model()
    x = np.random.randint(0, 10, size=(32, 4)).astype("int32")
    y = np.random.rand(32, 1).astype("float32")
    m.fit(x, y, batch_size=8, epochs=2, verbose=1)  # no terminal: each epoch's bar once, when it ends
    m.fit(x, y, batch_size=8, epochs=1, verbose=2)
    x[5, 2] = 50  # a token id past the vocabulary
    m.fit(x, y, batch_size=8, epochs=1, verbose=2)


def s_check_numerics():
    @tf.function
    def step(w):
        loss = tf.math.log(w - 1.0)
        return tf.debugging.check_numerics(loss, "loss is not finite")

    step(tf.zeros(2))


def s_eager():
    tf.reshape(tf.range(6), [4])


def s_build():
    dense = tf.keras.layers.Dense(4)
    dense(tf.ones((2, 3)))
    dense(tf.ones((2, 5)))


if __name__ == "__main__":
    globals()["s_" + sys.argv[1]]()
