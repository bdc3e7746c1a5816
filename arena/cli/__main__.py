"""``python -m arena.cli``: the same as the ``arena`` command."""

from arena.cli import main

raise SystemExit(main())
