"""Which packages hold a project's checks: `DQ_CHECKS` (comma-separated), else the top-level
`checks = [...]` of `dq.toml` (`DQ_CONFIG`), else `checks`. The shipped examples
(`checks.examples`) belong to none of them unless a package names them."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from checkers.dq_toml import DqTomlError, read_document

CHECKS_ENV = "DQ_CHECKS"
CONFIG_ENV = "DQ_CONFIG"
DEFAULT_CONFIG = "dq.toml"
CONFIG_KEY = "checks"
DEFAULT_PACKAGE = "checks"
#: Shipped with dq-checkers but never a project's checks unless named: the demo's checks, and the
#: pytest plugin (pytest is a test dependency).
APART = ("checks.examples", "checks.pytest_plugin")


@dataclass(frozen=True)
class CheckPackages:
    """The packages to import checks from, where that list came from (for messages), and the
    directory their modules may live in when nothing installed provides them."""

    names: tuple[str, ...]
    source: str
    home: Path

    def make_importable(self) -> None:
        """Put `home` on the import path when a package lives there and is not importable
        otherwise: the `dq` script, unlike `python -m`, does not import from the working
        directory, and dq.toml's packages live beside it."""
        for name in self.names:
            top = name.split(".")[0]
            local = (self.home / top).is_dir() or (self.home / f"{top}.py").is_file()
            if local and importlib.util.find_spec(top) is None:
                sys.path.insert(0, str(self.home))
                importlib.invalidate_caches()
                return

    def hint(self) -> str:
        """What to do when these packages hold no check."""
        return (
            f"no checks found in {', '.join(self.names)} ({self.source}). Point dq at your "
            f'package with {CHECKS_ENV}=teamchecks or `{CONFIG_KEY} = ["teamchecks"]` in '
            f"{DEFAULT_CONFIG}; `dq init teamchecks` scaffolds one (the shipped examples run "
            f"with {CHECKS_ENV}=checks.examples)"
        )


def configured_packages(environ: Mapping[str, str] | None = None) -> CheckPackages:
    """The check packages of this process's environment (see the module docstring). `dq` reads
    them once with the rest of its configuration (scheduling.config); this reads them for callers
    that hold none: the pytest plugin, and shipping the packages to executors during a run."""
    env = os.environ if environ is None else environ
    path = Path(env.get(CONFIG_ENV) or DEFAULT_CONFIG)
    return packages_from(_split(env.get(CHECKS_ENV, "")), path, read_document(path))


def packages_from(
    named: Sequence[str], config_path: Path, document: Mapping[str, object]
) -> CheckPackages:
    """The check packages: `named` (DQ_CHECKS), else the `checks` of the dq.toml at
    `config_path` (parsed as `document`), else `checks`."""
    if named:
        return CheckPackages(tuple(named), CHECKS_ENV, Path.cwd())
    listed = _listed(config_path, document.get(CONFIG_KEY))
    if listed:
        return CheckPackages(listed, str(config_path), config_path.resolve().parent)
    return CheckPackages((DEFAULT_PACKAGE,), "the default", Path.cwd())


def checks_packages(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The configured check packages, made importable (`CheckPackages.make_importable`)."""
    found = configured_packages(environ)
    found.make_importable()
    return found.names


def _split(text: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in text.split(",") if p.strip())


def _listed(path: Path, value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise DqTomlError(
            f"`{CONFIG_KEY}` must be a list of package names, e.g. "
            f'{CONFIG_KEY} = ["teamchecks"], got {value!r:.60}',
            key=(CONFIG_KEY,),
        ).located(path)
    return tuple(v.strip() for v in value)


def apart(module: str, roots: Sequence[str]) -> bool:
    """Whether `module` is one of the shipped modules kept apart (`APART`), or under one, and
    inside no root that names it or something under it."""
    return any(
        _within(module, kept)
        and not any(_within(root, kept) and _within(module, root) for root in roots)
        for kept in APART
    )


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(f"{package}.")
