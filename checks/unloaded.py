"""The checks a module would have defined after the point where its import failed: read from its
source (without running it), so each gets its own ERROR outcome instead of vanishing."""

from __future__ import annotations

import ast
import importlib.util
import traceback

from checks.problems import DefinitionProblem, exception_line, snake, valid_name

#: A class body that sets one of these is taken for a check (a helper class sets none of them).
CHECK_ATTRIBUTES = {"checker", "parser", "clock", "name", "tolerance", "alert_level"}


def failed_at(module: str, exc: BaseException) -> int | None:
    """The line of `module`'s own code where its import stopped (a class statement whose body
    raised, or a module-level statement)."""
    line = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if frame.f_globals.get("__name__") == module and frame.f_code.co_name == "<module>":
            line = lineno
    return line


def unloaded_checks(module: str, exc: BaseException) -> list[DefinitionProblem]:
    """A problem for each check class defined after the line where `module` stopped importing."""
    line = failed_at(module, exc)
    tree = _source_tree(module)
    if line is None or tree is None:
        return []
    problems = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.lineno > line and _looks_like_check(node):
            problems.append(
                DefinitionProblem(
                    name=_name(node),
                    module=module,
                    qualname=node.name,
                    reason=f"not loaded (line {node.lineno}): the module stopped importing at "
                    f"line {line}: {exception_line(exc)}",
                    owner=_literal(node, "owner") or "",
                    import_failed=True,
                )
            )
    return problems


def _source_tree(module: str) -> ast.Module | None:
    try:
        spec = importlib.util.find_spec(module)
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            return None
        with open(spec.origin, encoding="utf-8") as handle:
            return ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError, ImportError):
        return None


def _assigned(node: ast.ClassDef) -> dict[str, ast.expr | None]:
    found: dict[str, ast.expr | None] = {}
    for statement in node.body:
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = statement.value
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            found[statement.target.id] = statement.value
        elif isinstance(statement, ast.FunctionDef):
            found[statement.name] = None
    return found


def _looks_like_check(node: ast.ClassDef) -> bool:
    return bool(node.bases) and bool(CHECK_ATTRIBUTES & set(_assigned(node)))


def _literal(node: ast.ClassDef, attribute: str) -> str | None:
    value = _assigned(node).get(attribute)
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return value.value
    return None


def _name(node: ast.ClassDef) -> str:
    name = _literal(node, "name")
    return name if valid_name(name) else snake(node.name)  # type: ignore[return-value]
