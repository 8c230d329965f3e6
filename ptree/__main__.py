"""``python -m ptree``: the same as the ``ptree`` command."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
