"""The ``ptree`` command: subcommands (:mod:`~ptree.cli.main`), terminal drawings and
exports (:mod:`~ptree.cli.render`, :mod:`~ptree.cli.text`), the store commands
(:mod:`~ptree.cli.store_commands`), the progress bar
(:mod:`~ptree.cli.progress`) and the demo (:mod:`~ptree.cli.demo`).

Imports: anything in ptree (it is the outermost layer); nothing imports it.
"""

from .main import COMMANDS, main

__all__ = ["COMMANDS", "main"]
