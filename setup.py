"""Builds ptree's three C extensions: the Pi reader's line scanner (ptree/pi/_scan.c),
freeze's and append's common cases (ptree/_cfrozen.c) and the LibreChat reader's
(ptree/formats/_librechat.c).

Everything else is in pyproject.toml.  Both are optional: where no C compiler is found
the build goes on without them and ptree uses its Python paths (the same results,
slower; ``ptree.pi.fast.SCANNER``, ``ptree.frozen.COMPILED`` and
``ptree.formats.librechat.COMPILED`` say which run).  Each includes
ptree/_frozen_types.h: the frozen types the C code builds values of.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "ptree._cfrozen",
            ["ptree/_cfrozen.c"],
            depends=["ptree/_frozen_types.h"],
            optional=True,
            extra_compile_args=["-O2"],
        ),
        Extension(
            "ptree.pi._scan",
            ["ptree/pi/_scan.c"],
            depends=["ptree/_frozen_types.h"],
            optional=True,
            extra_compile_args=["-O2"],
        ),
        Extension(
            "ptree.formats._librechat",
            ["ptree/formats/_librechat.c"],
            depends=["ptree/_frozen_types.h"],
            optional=True,
            extra_compile_args=["-O2"],
        ),
    ]
)
