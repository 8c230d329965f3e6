"""pytest runs the examples of every page here (``--doctest-glob=docs/*.md``); the Python
files beside them are not test modules: the tutorials' programs are run by
``tests/test_docs.py``, the site's hooks by MkDocs."""

collect_ignore_glob = ["*.py"]
