"""Imports a package that is not installed: the module fails to import."""

from __future__ import annotations

import dq_not_installed_anywhere  # noqa: F401
