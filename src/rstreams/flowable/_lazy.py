"""Lazy module-level functions for the Flowable facade.

``lazy_function(module, name, alias, namespace)`` returns a stand-in that, on its first call,
imports ``module`` (relative to ``rstreams.flowable``), stores the real function under ``alias``
in ``namespace`` (the facade module's globals) and calls it. Later calls look up ``alias`` and
reach the real function directly: no import statement per call. Two threads making the first call
at once both import (the import system serialises that) and store the same function: harmless.

Example::

    _i_map_ = lazy_function(".operators._map_filter", "map_", "_i_map_", globals())
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

__all__ = ["lazy_function"]


def lazy_function(module: str, name: str, alias: str, namespace: dict[str, Any]) -> Callable[..., Any]:
    """A stand-in for ``module.name`` that replaces itself in ``namespace[alias]`` on first call."""

    def first_call(*args: Any, **kwargs: Any) -> Any:
        fn = getattr(importlib.import_module(module, "rstreams.flowable"), name)
        namespace[alias] = fn
        return fn(*args, **kwargs)

    first_call.__name__ = alias
    first_call.__qualname__ = alias
    return first_call
