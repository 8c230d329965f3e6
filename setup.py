"""Builds ptree's one C extension, the Pi reader's line scanner (ptree/pi/_scan.c).

Everything else is in pyproject.toml.  The extension is optional: where no C compiler
is found the build goes on without it and the reader uses its Python path (the same
results, slower; ``ptree.pi.fast.SCANNER`` says which one runs).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "ptree.pi._scan",
            ["ptree/pi/_scan.c"],
            optional=True,
            extra_compile_args=["-O2"],
        )
    ]
)
