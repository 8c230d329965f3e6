"""The ``ptree`` command: subcommands (:mod:`~ptree.cli.main`), terminal drawings and
exports (:mod:`~ptree.cli.render`, :mod:`~ptree.cli.text`), the store commands
(:mod:`~ptree.cli.store_commands`), the progress bar
(:mod:`~ptree.cli.progress`), the demo (:mod:`~ptree.cli.demo`) and the registry they
all join (:mod:`~ptree.cli.commands`).

Imports: anything in ptree (it is the outermost layer); nothing imports it.
"""

from .main import COMMANDS, main

# After main: the store commands join the registry after main's, in --help's order.
from .store_commands import load_ref, store_ref

__all__ = ["COMMANDS", "load_ref", "main", "store_ref"]
