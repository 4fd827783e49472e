"""``python -m salsox``: the command line (see :mod:`salsox.cli`)."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
