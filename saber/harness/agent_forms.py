"""The agent a run is asked for, in any of its forms, resolved once: :func:`resolve_agent`.

``saber eval --agent SPEC`` and ``saber.evaluate(agent, ...)`` both go through it, so one
input means one thing in both, and everything that can refuse the agent is checked before
any worker starts. docs/harness.md ("Agents and policies") gives the forms and why a
callable's signature tells a factory from a policy.
"""

from __future__ import annotations

import ast
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from saber.errors import PolicyError
from saber.harness.policies import (
    PolicyFactory,
    callable_form,
    check_agent_module,
    is_builtin_spec,
    resolve_spec,
)

Form = Literal["builtin", "module:attr", "factory", "policy"]


@dataclass(frozen=True)
class ResolvedAgent:
    """An agent as checked: the name its records carry, and what each worker turns into
    the policy that acts (:func:`saber.harness.policies.policy_of`)."""

    name: str  # written in every record and in run.json
    policy: Any  # an agent spec (str), a PolicyFactory, or the policy object itself
    form: Form


def resolve_agent(
    agent: Any, name: str | None = None, *, import_module: bool = True
) -> ResolvedAgent:
    """Tell an agent's form apart (docs/harness.md, "Agents and policies") and check it, without
    building its policy (a model is built only where it acts).

    Args:
        agent: an agent spec string, a policy class, a factory or a policy.
        name: the name written in the records; default: the spec, or ``module:qualname``.
        import_module: whether this process may import a ``module:attr`` spec's module
            when its source shows the attribute (False where workers import it).

    Raises:
        PolicyError: one line saying what is wrong and what to give instead.
    """
    if isinstance(agent, str):
        spec = agent.strip()
        if is_builtin_spec(spec):
            resolve_spec(spec)  # its arguments, its policy file
            return ResolvedAgent(name or spec, spec, "builtin")
        check_agent_module(spec)
        if import_module or not _shown_in_source(spec):
            resolve_spec(spec)  # imports: the exact answer
        return ResolvedAgent(name or spec, spec, "module:attr")
    if not callable(agent):
        raise PolicyError(
            "Expect a policy (a callable mapping observations (n, 4, 84, 84) to n actions), "
            "a policy class, a factory (a callable without arguments returning a policy) or "
            f"an agent spec string, actually: {type(agent).__name__}"
        )
    qualname = getattr(agent, "__qualname__", None) or type(agent).__qualname__
    module = getattr(agent, "__module__", None) or type(agent).__module__
    what = f"{module}:{qualname}"
    if callable_form(agent, what) == "factory":
        return ResolvedAgent(name or what, PolicyFactory(agent, what), "factory")
    return ResolvedAgent(name or what, agent, "policy")


def _shown_in_source(spec: str) -> bool:
    """Whether the source of a ``module:attr`` spec's module binds the attribute's first
    name at its top level, with a usable signature where it is a ``def`` (False: look by
    importing). Reading the source runs none of its code."""
    module_name, _, attribute = spec.partition(":")
    try:
        found = importlib.util.find_spec(module_name)
    except (ImportError, ValueError):
        return False
    if found is None or not found.origin or not found.origin.endswith(".py"):
        return False
    try:
        tree = ast.parse(Path(found.origin).read_bytes(), filename=found.origin)
    except (OSError, SyntaxError, ValueError):
        return False  # the import says what is wrong
    first, _, rest = attribute.partition(".")
    bound = _top_level_bindings(tree.body)
    node = bound.get(first)
    if node is None:
        return False
    if isinstance(node, (ast.Assign, ast.AnnAssign)) and _never_callable(node.value):
        return False  # nor is an attribute of it, most likely: the import tells
    if rest:
        return True
    if isinstance(node, ast.ClassDef):  # built without arguments: its own __init__ says so
        inits = [
            item
            for item in node.body
            if isinstance(item, ast.FunctionDef) and item.name == "__init__"
        ]
        return not inits or _required(inits[-1]) == (1, 0)  # self alone
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        required, keywords = _required(node)
        return required <= 1 and not keywords
    return True


def _never_callable(value: ast.expr | None) -> bool:
    """Whether an assigned value can be no policy: a literal (``x = 42``, ``[1]``,
    ``"text"``), an f-string, a comprehension, or no value at all (``x: int``). Such an
    attribute is refused here, by importing, not by the workers after they start."""
    if value is None or isinstance(
        value, (ast.JoinedStr, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
    ):
        return True
    try:
        ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _top_level_bindings(body: list[ast.stmt]) -> dict[str, ast.AST]:
    """The names a module's top level binds (inside ``if``/``try``/``with`` blocks too)."""
    bound: dict[str, ast.AST] = {}
    for statement in body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound[statement.name] = statement
        elif isinstance(statement, (ast.Import, ast.ImportFrom)):
            for alias in statement.names:
                bound[(alias.asname or alias.name).split(".")[0]] = statement
        elif isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                for node in ast.walk(target):
                    if isinstance(node, ast.Name):
                        bound[node.id] = statement
        elif isinstance(statement, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
            for block in ("body", "orelse", "finalbody"):
                bound.update(_top_level_bindings(getattr(statement, block, [])))
            for handler in getattr(statement, "handlers", []):
                bound.update(_top_level_bindings(handler.body))
    return bound


def _required(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int]:
    """A ``def``'s required positional parameters and required keywords: a factory has
    none, a policy one positional (:func:`callable_form` reads a signature so)."""
    arguments = node.args
    positional = len(arguments.posonlyargs) + len(arguments.args) - len(arguments.defaults)
    return positional, sum(default is None for default in arguments.kw_defaults)
