"""Only what pyproject.toml cannot say: the wheel carries the shipped prompts/ and configs/ trees.

They live at the top of the checkout (every game adds its own prompts/<game>/ and configs/<game>*.yaml),
but an installed package has no checkout: the build copies both trees into ``agent/data/``, where
``agent.core.resources`` finds them. An editable install reads them from the checkout instead.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

TREES = ("prompts", "configs")


class BuildWithData(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        root = Path(__file__).resolve().parent
        for tree in TREES:
            if (root / tree).is_dir():
                shutil.copytree(root / tree, Path(self.build_lib) / "agent" / "data" / tree, dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*"))


if __name__ == "__main__":  # how setuptools runs this file; tests import BuildWithData
    setup(cmdclass={"build_py": BuildWithData})
