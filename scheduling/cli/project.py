"""What one `dq` command knows of its project: the configuration (read once, when first needed,
so `dq init` or `dq --help` read nothing), the run settings built from it, and the checks
discovered in the configured packages."""

from __future__ import annotations

import sys
from functools import cached_property
from typing import TYPE_CHECKING

from scheduling.config import Config

if TYPE_CHECKING:
    from checks.base import QualityCheck
    from checks.registry import Discovery
    from scheduling.settings import Settings


class Project:
    """The configuration and settings of one command, each read at most once."""

    @cached_property
    def config(self) -> Config:
        return Config.from_environment().validated()  # a refused dq.toml: exit 2, never a crash

    @cached_property
    def settings(self) -> Settings:
        from scheduling.settings import Settings

        return Settings.from_environment(config=self.config)

    def close(self) -> None:
        """Close the database connections the command opened: the next command in the same
        process (a test, a notebook) must not inherit a pooled SQLite connection whose file has
        changed under it."""
        if "settings" in self.__dict__:
            self.settings.engine.dispose()

    def discovery(self, *, quiet: bool = False) -> Discovery:
        """Checks and definition problems of the check packages; problems go to stderr."""
        from checks.registry import discover_all
        from checks.validation import problem_lines

        packages = self.config.check_packages()
        packages.make_importable()
        found = discover_all(packages.names)
        if not found.checks and not found.problems and not quiet:
            print(f"dq: {packages.hint()}", file=sys.stderr)
        if found.problems and not quiet:
            print(
                f"dq: {len(found.problems)} check(s) could not be defined "
                "(`dq validate` lists them):",
                file=sys.stderr,
            )
            for line in problem_lines(found.problems):
                print(f"  {line}", file=sys.stderr)
        return found

    def checks(self) -> dict[str, type[QualityCheck]]:
        return dict(self.discovery().checks)
