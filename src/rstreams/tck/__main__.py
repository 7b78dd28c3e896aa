"""``python -m rstreams.tck MODULE:FACTORY --kind ...`` (see :mod:`rstreams.tck._cli`)."""

from ._cli import main

raise SystemExit(main())
