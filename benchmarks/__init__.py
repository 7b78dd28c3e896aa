"""rstreams benchmark suite: ``python -m benchmarks [--quick] [--only REGEX] [--json OUT] [--compare OLD]``.

See benchmarks/README.md. Not part of the library; peers come from the ``bench`` extra.
"""
