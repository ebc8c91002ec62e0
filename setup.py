"""Packaging glue: a wheel carries queries/, shapes/ and fixtures/catalogue/ inside the package.

The checkout keeps them at the top level (the design card's layout); an installed wheel has
them under ``yupana/_data/`` and ``yupana.state.paths.source_root()`` finds either.

The ``yupana`` command is bin/yupana, installed as a script rather than generated from an
entry point: the entry-point script older pips generate (23.2, the one Python 3.11 ships) imports ``re``,
which costs every hook process several milliseconds of its budget.
"""

import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

DATA_DIRS = ("queries", "shapes", os.path.join("fixtures", "catalogue"))


class BuildPyWithData(build_py):
    def run(self) -> None:
        super().run()
        here = os.path.dirname(os.path.abspath(__file__))
        for rel in DATA_DIRS:
            target = os.path.join(self.build_lib, "yupana", "_data", rel)
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(os.path.join(here, rel), target)


setup(cmdclass={"build_py": BuildPyWithData}, scripts=["bin/yupana"])
