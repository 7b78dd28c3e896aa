"""The ``rstreams`` command.

* ``rstreams demo [--rows N | --input PATH] [--master URL] [--pipeline executors|driver] [--streaming]
  [--batch-rows N] [--out DIR] [--quiet]``: the main job, on Spark.
* ``rstreams tck MODULE:FACTORY --kind publisher|whitebox|blackbox|processor``: run the TCK.
"""

from __future__ import annotations

import sys

USAGE = (
    "usage: rstreams {demo,tck} ...\n\n"
    "  demo   run the main job on Spark: the same pipeline per partition on the executors\n"
    "         (rstreams demo --help for its options)\n"
    "  tck    verify a Publisher/Subscriber/Processor with the Reactive Streams TCK\n"
)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``rstreams`` console script."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        # asked for: stdout and success; no command at all is a usage error (stderr, status 2)
        print(USAGE, file=sys.stdout if args else sys.stderr)
        return 0 if args else 2
    cmd, rest = args[0], args[1:]
    if cmd == "tck":
        from .tck._cli import main as tck_main

        return tck_main(rest)
    if cmd == "demo":
        from .demo import main as demo_main

        return demo_main(rest)
    print(f"rstreams: unknown command {cmd!r} (expected demo or tck)", file=sys.stderr)
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
