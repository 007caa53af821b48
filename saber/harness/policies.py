"""What the harness evaluates: the policy protocol, built-in baselines, and agent specs.

A policy maps observations ``uint8`` (n, 4, 84, 84) to actions (n,) in 0..17, and may
define ``start_episodes(rows, seeds)``; docs/harness.md ("Agents and policies") gives the
protocol and every ``saber eval --agent`` spec.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import inspect
import re
import sysconfig
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from saber.agents.convnet import ConvActorPolicy
from saber.agents.generators import PerEpisodeGenerators
from saber.agents.pretrained import PRETRAINED, pretrained_policy
from saber.errors import (
    PolicyCallError,
    PolicyError,
    PolicyFileError,
    SaberError,
    counted,
    with_article,
)
from saber.protocol.settings import NUM_ACTIONS

# Agent specs ``saber eval --agent`` takes, with what each plays (``saber list`` prints them).
BUILTIN_AGENTS = {
    "random": "uniform over the 18 actions (SABER's random baseline)",
    "noop": "always action 0",
    "constant:K": "always action K (the ALE paper's constant baseline)",
    "epsilon-constant:K[:EPS]": "action K, a uniformly random action with probability EPS "
    "(default 0.05; the ALE paper's perturbed baseline)",
    **{name: agent.description for name, agent in PRETRAINED.items()},
    "conv-actor:PATH": "a policy file written by examples/ppo_saber.py (numpy inference)",
    "module:attr": "your policy, imported: a class (built without arguments), a factory "
    "(called once per worker) or the policy itself",
}
BUILTIN_SPECS = tuple(BUILTIN_AGENTS)
_BUILTIN_KINDS = frozenset(
    {"random", "noop", "constant", "epsilon-constant", "conv-actor", *PRETRAINED}
)  # see _builtin
DEFAULT_EPSILON = 0.05  # the ALE paper's perturbed constant agent


@runtime_checkable
class Policy(Protocol):
    """Maps observations ``uint8`` (n, 4, 84, 84) to actions, integers (n,) in 0..17.

    ``start_episodes(rows, seeds)`` is optional (docs/harness.md).
    """

    def __call__(self, observations: np.ndarray) -> np.ndarray: ...


class RandomPolicy(PerEpisodeGenerators):
    """Uniformly random actions over all 18, from a generator per episode."""

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        return self._uniform_actions(len(observations))

    def __repr__(self) -> str:
        return "RandomPolicy()"


class ConstantPolicy:
    """Always the same action (``ConstantPolicy(0)`` is ``noop``)."""

    def __init__(self, action: int) -> None:
        self.action = _check_action_index(action)

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        return np.full(len(observations), self.action, dtype=np.int64)

    def __repr__(self) -> str:
        return f"ConstantPolicy({self.action})"


class EpsilonConstantPolicy(PerEpisodeGenerators):
    """Action ``action``, replaced by a uniformly random one with probability ``epsilon``."""

    def __init__(self, action: int, epsilon: float = DEFAULT_EPSILON) -> None:
        super().__init__()
        self.action = _check_action_index(action)
        if not 0.0 <= epsilon <= 1.0:
            raise PolicyError(f"Expect epsilon in [0, 1], actually: {epsilon!r}")
        self.epsilon = float(epsilon)

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        return self.explore(np.full(len(observations), self.action, dtype=np.int64), self.epsilon)

    def __repr__(self) -> str:
        return f"EpsilonConstantPolicy({self.action}, epsilon={self.epsilon})"


def _check_action_index(action: Any) -> int:
    if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
        raise PolicyError(f"Expect an action in 0..{NUM_ACTIONS - 1}, actually: {action!r}")
    if not 0 <= action < NUM_ACTIONS:
        raise PolicyError(f"Expect an action in 0..{NUM_ACTIONS - 1}, actually: {action}")
    return int(action)


def _parse_action(text: str, spec: str) -> int:
    if not re.fullmatch(r"\d+", text):
        raise PolicyError(
            f"Agent spec {spec!r}: expect an action index 0..{NUM_ACTIONS - 1}, actually: {text!r}"
        )
    return _check_action_index(int(text))


def is_builtin_spec(spec: str) -> bool:
    """Whether ``spec`` names a built-in agent (its arguments are not checked here)."""
    return spec.strip().partition(":")[0] in _BUILTIN_KINDS


def _builtin(spec: str) -> Callable[[], Policy] | None:
    """A factory for a built-in spec, None when ``spec`` is not built-in (checked up front)."""
    kind, _, argument = spec.partition(":")
    if kind == "random" and not argument:
        return RandomPolicy
    if kind == "noop" and not argument:
        return lambda: ConstantPolicy(0)
    if kind == "constant":
        action = _parse_action(argument, spec)
        return lambda: ConstantPolicy(action)
    if kind == "epsilon-constant":
        action_text, _, epsilon_text = argument.partition(":")
        action = _parse_action(action_text, spec)
        try:
            epsilon = float(epsilon_text) if epsilon_text else DEFAULT_EPSILON
        except ValueError:
            raise PolicyError(
                f"Agent spec {spec!r}: expect epsilon as a number, actually: {epsilon_text!r}"
            ) from None
        EpsilonConstantPolicy(action, epsilon)  # validate here, not in the workers
        return lambda: EpsilonConstantPolicy(action, epsilon)
    if kind == "conv-actor" and not argument:
        raise PolicyError(f"Agent spec {spec!r}: expect conv-actor:PATH (a policy file)")
    if (kind in PRETRAINED and not argument) or kind == "conv-actor":
        policy = _read_policy_file(kind, argument, spec, _file_stamp(argument))
        return lambda: policy
    return None


def _file_stamp(path: str) -> tuple[int, int] | None:
    """A policy file's size and modification time (None: no such file): a file written
    again is read again."""
    try:
        status = Path(path).stat() if path else None
    except OSError:
        return None
    return None if status is None else (status.st_size, status.st_mtime_ns)


@functools.lru_cache(maxsize=4)
def _read_policy_file(kind: str, path: str, spec: str, stamp: tuple[int, int] | None) -> Policy:
    """A shipped agent's or a ``conv-actor:PATH`` file's policy, read once per process
    (the check in the main process and the build are one read), so that a bad file fails
    before any worker starts."""
    try:
        return ConvActorPolicy(path) if kind == "conv-actor" else pretrained_policy(kind)
    except PolicyFileError as error:
        raise PolicyError(f"Agent spec {spec!r}: {error}") from None


def _import_attribute(spec: str) -> Any:
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise PolicyError(f"Unknown agent spec {spec!r}; expect one of: {', '.join(BUILTIN_SPECS)}")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name is None or not f"{module_name}.".startswith(f"{error.name}."):
            raise PolicyError(  # the module is there; something it imports is not
                f"Agent spec {spec!r}: cannot import module {module_name!r}: "
                f"{describe_error(error)}"
            ) from error
        raise PolicyError(
            f"Agent spec {spec!r}: no module named {error.name!r}: run from the directory "
            "that holds it, or install it"
        ) from None
    except Exception as error:  # any import-time failure of user code is a spec error
        raise PolicyError(
            f"Agent spec {spec!r}: cannot import module {module_name!r}: {describe_error(error)}"
        ) from error
    target: Any = module
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            near = difflib.get_close_matches(part, [n for n in dir(target) if n[:1] != "_"], 1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise PolicyError(
                f"Agent spec {spec!r}: module {module_name!r} has no attribute {attribute!r}" + hint
            ) from None
    if not callable(target):
        raise PolicyError(
            f"Agent spec {spec!r}: {attribute!r} is {with_article(type(target).__name__)}, not a "
            "policy, a policy class or a factory"
        )
    return target


def check_agent_module(spec: str) -> None:
    """Check that the module of a ``module:attr`` spec can be found, without importing
    it (nor PyTorch, say, which it imports): the main process of ``saber eval`` checks
    this before any worker starts, and the workers import it. Where the finders cannot
    tell without running a package's code (a module inside a package whose ``__init__``
    changes its path), the module is imported here, as :func:`resolve_spec` would.

    Raises:
        PolicyError: a spec that is not ``module:attr``, or a module that is not there,
            as :func:`resolve_spec` says it.
    """
    spec = spec.strip()
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise PolicyError(f"Unknown agent spec {spec!r}; expect one of: {', '.join(BUILTIN_SPECS)}")
    if _module_found(module_name):
        return
    _import_attribute(spec)  # not found by the finders: the import says why


def _module_found(name: str) -> bool:
    """Whether the finders locate module ``name`` without executing any code of it: the
    top-level package through every finder, its submodules by path (``PathFinder``)."""
    import importlib.machinery
    import importlib.util

    parts = name.split(".")
    try:
        found = importlib.util.find_spec(parts[0])
    except (ImportError, ValueError):
        return False
    for depth in range(1, len(parts)):
        if found is None or found.submodule_search_locations is None:
            return False
        found = importlib.machinery.PathFinder.find_spec(
            ".".join(parts[: depth + 1]), list(found.submodule_search_locations)
        )
    return found is not None


def _binds(signature: inspect.Signature, count: int) -> bool:
    try:
        signature.bind(*[None] * count)
    except TypeError:
        return False
    return True


def callable_form(target: Any, what: str) -> Literal["factory", "policy"]:
    """Whether a callable is a factory of policies or the policy itself, by its signature.

    A policy is called with one argument (the observations), a factory with none: a class,
    or a callable with no required parameter, is a factory; a callable with one required
    positional parameter, or whose signature says nothing (only ``*args, **kwargs``, as a
    PyTorch module's ``__call__``; none readable, as a builtin's), is a policy.

    Raises:
        PolicyError: a class that cannot be built without arguments, or a callable that
            needs two arguments or more (or a keyword): neither form.
    """
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):  # no signature to read (a builtin, an extension type)
        return "factory" if inspect.isclass(target) else "policy"
    if inspect.isclass(target):
        if _binds(signature, 0):
            return "factory"
        raise PolicyError(
            f"{what}: the class takes {signature} to build; a policy class must build "
            "without arguments: give a factory (a callable without arguments) instead"
        )
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    parameters = signature.parameters.values()
    if parameters and all(parameter.kind in variadic for parameter in parameters):
        return "policy"
    if _binds(signature, 0):
        return "factory"
    if _binds(signature, 1):
        return "policy"
    raise PolicyError(
        f"{what} takes {signature}: expect a policy, called with the observations (one "
        "argument), or a factory of one, called without arguments"
    )


@dataclass(frozen=True, eq=False)
class PolicyFactory:
    """A factory of policies (a class, or a callable without arguments) passed as an
    object: built once per process where the policy acts (:func:`policy_of`)."""

    factory: Callable[[], Any]
    what: str  # how messages name it: "mymodule:make_policy"


def resolve_spec(spec: str) -> Callable[[], Policy]:
    """Check an agent spec and return a factory of its policy, without building it.

    Imports ``module:attr`` specs (so an unknown module fails here, in the main process)
    but calls no factory: a model is built only where it runs, in each worker.

    Raises:
        PolicyError: unknown spec, bad arguments, import failure, missing attribute.
    """
    spec = spec.strip()
    builtin = _builtin(spec)
    if builtin is not None:
        return builtin
    target = _import_attribute(spec)
    if callable_form(target, f"Agent spec {spec!r}") == "factory":
        return target  # type: ignore[no-any-return]
    return lambda: target  # type: ignore[no-any-return]


def load_policy(spec: str) -> Policy:
    """The policy named by an agent spec (docs/harness.md), built.

    Raises:
        PolicyError: the spec cannot be resolved, or its factory fails or returns
            something that is not callable.
    """
    return build_policy(resolve_spec(spec), f"Agent spec {spec!r}")


_SABER_DIR = Path(__file__).resolve().parents[1]
_LIBRARY_DIRS = tuple(
    Path(path).resolve()
    for name in ("stdlib", "platstdlib", "purelib", "platlib")
    if (path := sysconfig.get_paths().get(name))
)


def _is_under(filename: str, directories: tuple[Path, ...]) -> bool:
    try:
        path = Path(filename).resolve()
    except (OSError, ValueError):
        return False
    return any(path.is_relative_to(directory) for directory in directories)


def user_frame(error: BaseException) -> traceback.FrameSummary | None:
    """Where in the user's code ``error`` arose: the innermost frame of its traceback
    outside saber and outside installed libraries (the line of the agent's factory or
    policy), else the innermost frame outside saber, else the innermost one."""
    frames = traceback.extract_tb(error.__traceback__)
    outside = [f for f in frames if not _is_under(f.filename, (_SABER_DIR,))]
    own = [f for f in outside if not _is_under(f.filename, _LIBRARY_DIRS)]
    chosen = own or outside or frames
    return chosen[-1] if chosen else None


def describe_error(error: BaseException) -> str:
    """``RuntimeError: boom (at agent.py:12)``: the message and the user's line that
    raised it (:func:`user_frame`); a saber error's own message only (it says where)."""
    if isinstance(error, PolicyCallError):
        return str(error)  # described where it was raised
    text = "".join(traceback.format_exception_only(type(error), error)).strip()
    if isinstance(error, SaberError):
        return text
    frame = user_frame(error)
    return f"{text} (at {frame.filename}:{frame.lineno})" if frame else text


def build_policy(factory: Callable[[], Any], what: str) -> Policy:
    """Call a policy factory (a policy class, or a callable without required parameters)
    and check that it returned a policy.

    Args:
        factory: called with no arguments.
        what: how messages name it (``"Agent spec 'mod:Agent'"``, ``"Policy class 'Agent'"``).

    Raises:
        PolicyError: the factory fails or returns something that is not callable.
    """
    try:
        policy = factory()
    except PolicyError:
        raise
    except Exception as error:
        raise PolicyError(f"{what}: building the policy failed: {describe_error(error)}") from error
    if not callable(policy):
        raise PolicyError(
            f"{what}: the factory returned {with_article(type(policy).__name__)}, not a policy "
            "(a callable mapping observations (n, 4, 84, 84) to n actions)"
        )
    return policy  # type: ignore[no-any-return]


def check_actions(actions: Any, count: int) -> np.ndarray:
    """The policy's output as ``int64`` (count,), or a :class:`PolicyError` saying what is wrong.

    Accepts any integer array-like of the right shape (a list, a torch tensor on the CPU),
    and floats that are whole numbers (some frameworks return those).
    """
    expected = (
        f"Expect the policy to return {counted(count, 'integer action')} (shape ({count},)) "
        f"in 0..{NUM_ACTIONS - 1}"
    )
    try:
        array = np.asarray(actions)
    except Exception as error:
        raise PolicyError(f"{expected}, actually: {type(actions).__name__} ({error})") from None
    if array.shape != (count,):
        raise PolicyError(f"{expected}, actually: shape {array.shape}, dtype {array.dtype}")
    if array.dtype.kind == "f" and np.all(np.isfinite(array)) and np.all(array == np.round(array)):
        array = array.astype(np.int64)
    if array.dtype.kind not in "iu":
        raise PolicyError(f"{expected}, actually: dtype {array.dtype}: {array.tolist()[:8]}")
    if count and (array.min() < 0 or array.max() >= NUM_ACTIONS):
        bad = sorted({int(a) for a in array.tolist() if not 0 <= a < NUM_ACTIONS})
        raise PolicyError(f"{expected}, actually: out-of-range actions {bad}")
    return array.astype(np.int64, copy=False)


@functools.lru_cache(maxsize=4)
def _cached_policy(spec: str) -> Policy:
    # A process builds a spec's policy once (a model load), then reuses it for every unit.
    return load_policy(spec)


@functools.lru_cache(maxsize=4)
def _cached_build(factory: Callable[[], Any], what: str) -> Policy:
    # A factory or a class is built like a spec's: once per process, without arguments.
    return build_policy(factory, what)


def _built(factory: Callable[[], Any], what: str) -> Policy:
    try:
        return _cached_build(factory, what)
    except TypeError as error:  # an unhashable factory: built for each unit
        if "unhashable" not in str(error):
            raise
        return build_policy(factory, what)


def policy_of(policy: Any) -> Policy:
    """The policy a job names, built once per process: a spec (``"random"``,
    ``"module:attr"``, a file) is loaded, a factory or a class built, a policy object used
    as is.

    The one place where a worker and the policy process (``--policy-process``) turn what
    the user passed into the object that acts.
    """
    if isinstance(policy, str):
        return _cached_policy(policy)
    if isinstance(policy, PolicyFactory):
        return _built(policy.factory, policy.what)
    if inspect.isclass(policy):
        return _built(policy, f"Policy class {policy.__qualname__!r}")
    return policy  # type: ignore[no-any-return]
