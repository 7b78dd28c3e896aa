# pyright: strict
"""Expectations only pyright meets (``test_typing.py`` runs pyright --strict over this file, not mypy).

mypy infers ``Any`` for the result of a lambda combiner whose body uses an operator or an attribute
of its parameters when the static factory is called on the bare generic class (``Flowable.zip``):
the class's own type variable stays unsolved there, and mypy then falls back to an inference that
drops the lambda's context (``Flowable[int].zip(...)`` or a ``def`` combiner infers fine). It also
cannot chain ``using``'s lambdas (the resource type from the first feeds the second). pyright infers
all of these, and editors built on it (Pylance) show them.
"""

from __future__ import annotations

from typing import assert_type

from rstreams import Flowable

ints = Flowable.just(1, 2, 3)
strs = Flowable.from_iterable(["a", "b"])
floats = Flowable.just(1.5)

assert_type(Flowable.zip(ints, strs, lambda i, s: s * i), Flowable[str])
assert_type(Flowable.zip(ints, strs, lambda i, s: s.upper()), Flowable[str])
assert_type(Flowable.zip(ints, strs, floats, lambda i, s, f: i + f), Flowable[float])
assert_type(Flowable.combine_latest(ints, strs, lambda i, s: s * i), Flowable[str])
assert_type(Flowable.combine_latest(ints, floats, lambda i, f: i * f), Flowable[float])
assert_type(Flowable.combine_latest(ints, strs, floats, ints, lambda i, s, f, j: i + j), Flowable[int])
assert_type(
    Flowable.using(lambda: [1, 2], lambda xs: Flowable.from_iterable(xs), lambda xs: xs.clear()),
    Flowable[int],
)
