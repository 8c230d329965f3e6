"""Where many sessions live: SQLite, PostgreSQL and a directory of Pi files, behind one
protocol.

Reserved for issue #15.  Imports: the core and :mod:`ptree.pi`; a database driver only
as an optional extra, imported when a store of that kind is opened.
"""

__all__: list[str] = []
