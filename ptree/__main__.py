"""``python -m ptree``: the same as the ``ptree`` command."""

from ._cli import main

if __name__ == "__main__":
    raise SystemExit(main())
