"""Global hooks (public re-export of :mod:`rstreams._internal.plugins`).

Example::

    from rstreams import plugins
    with plugins.collect_errors() as errors:
        ...
    assert not errors
"""

from ._internal.plugins import collect_errors, get_error_handler, on_error, set_error_handler

__all__ = ["on_error", "set_error_handler", "get_error_handler", "collect_errors"]
