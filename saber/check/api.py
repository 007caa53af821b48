"""``saber.check(env_or_factory)``: probe an env rule by rule against the SABER protocol."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import Any

from saber.check.probes import FOLLOWED, FOLLOWED_QUICK, FULL, QUICK, RAM_FOLLOWED, RULES
from saber.check.probes.base import SABER
from saber.check.result import CheckResult, RuleResult, Status
from saber.check.subject import ChainedSubject, Subject, resolve_target, subject_of
from saber.errors import ProbeError, SaberError


def check(
    env: Any,
    *,
    quick: bool = False,
    target: str | None = None,
) -> CheckResult:
    """Probe an env's behaviour against every SABER rule.

    Example:
        >>> import gymnasium as gym
        >>> import saber
        >>> result = saber.check(lambda: gym.make("SABER/Pong"), quick=True)
        >>> result.probed_passed, result.passed, int(result.exit_code)
        (True, False, 4)
        >>> result.not_probed()  # a quick check never calls an env SABER
        ['sticky_actions', 'action_set', 'stuck_timeout']

    Args:
        env: a factory of fresh envs (a callable without arguments returning a Gymnasium
            env or vector env; preferred: each probe gets a fresh env), an env, a vector
            env, or a :class:`~saber.check.subject.Subject` adapter.
        quick: only the cheap probes (what ``saber eval`` runs first); the other rules
            are reported as not probed, so a quick check never passes (exit code 4 at
            best): ``.probed_passed`` says whether every rule probed passed.
        target: the name shown for the env (default: its spec id, or its type).

    Returns:
        A :class:`CheckResult` with every rule of the protocol; ``.passed`` only when
        every rule passed (unknown, or not probed, is not a pass).
    """
    started = time.perf_counter()
    factory: Callable[[], Any] = env if _is_factory(env) else (lambda: env)
    first = _first_env(factory, target)
    # An env whose emulators are out of reach but can be followed (saber's JAX envs, a
    # SaberVectorEnv under any vector interface).
    seen = _subject(first, target)
    followed = bool(getattr(seen, "followable", False))
    # An env whose RAM is reported (envpool): followed by its RAM, quick or not.
    by_ram = bool(getattr(seen, "ram_followable", False))
    probes = {
        (False, False): FULL,
        (False, True): QUICK,
        (True, False): FOLLOWED,
        (True, True): FOLLOWED_QUICK,
    }[followed, quick]
    if by_ram:
        probes, followed = RAM_FOLLOWED, True
    if quick:  # one env for every probe: a new env or a reset loads a ROM
        shared = first
        # One episode shared by the probes too, but a follower starts from a real reset.
        one = shared if followed else ChainedSubject(subject_of(shared))
        factory = lambda: one  # noqa: E731
        first = one
    results: dict[str, RuleResult] = {}
    name = target or _name(shared if quick else first)
    with warnings.catch_warnings():
        # Probes load games and jump counters under the stack; wrappers may warn about it.
        warnings.simplefilter("ignore")
        for probe, rules in probes:
            made, first = (first if first is not None else factory()), None
            subject = subject_of(made)
            try:
                for result in probe(subject):
                    results[result.rule] = result
            except ProbeError as error:
                for rule in rules:
                    results[rule] = RuleResult(rule, SABER[rule], None, Status.UNKNOWN, str(error))
            finally:
                if made is not env and not quick:
                    subject.close()
        if quick and shared is not env:
            shared.close()
    left_out = Status.NOT_PROBED if quick else Status.UNKNOWN
    reason = "not probed: --quick leaves this rule out" if quick else "no probe reported it"
    ordered = tuple(
        results.get(rule) or RuleResult(rule, SABER[rule], None, left_out, reason) for rule in RULES
    )
    return CheckResult(name or "env", ordered, time.perf_counter() - started)


def check_target(target: str, game: str | None = None, *, quick: bool = False) -> CheckResult:
    """:func:`check` of a ``saber check`` target (an env id or ``module:factory``)."""
    factory = resolve_target(target, game)
    result = check(factory, quick=quick, target=target)
    return CheckResult(result.target, result.rules, result.seconds, game)


NEEDS = (
    "saber check needs a factory that takes no argument (with --game, the game alone) and "
    "returns a Gymnasium env or vector env, a Stable-Baselines3 VecEnv or an envpool env"
)


def _first_env(factory: Callable[[], Any], target: str | None) -> Any:
    """The factory's first env; a factory that raises is named in one line (SaberError)."""
    try:
        return factory()
    except SaberError:
        raise
    except Exception as error:  # the user's code: any failure is reported, not traced
        name = target or getattr(factory, "__qualname__", repr(factory))
        raise SaberError(f"{name} raised {type(error).__name__}: {error}; {NEEDS}") from error


def _subject(env: Any, target: str | None) -> Subject:
    """:func:`subject_of`, its refusal naming the target and what is needed."""
    try:
        return subject_of(env)
    except SaberError as error:
        if target is None:
            raise
        raise SaberError(
            f"{target} returned an object of type {type(env).__name__}, not an env; {NEEDS}"
        ) from error


def _is_factory(env: Any) -> bool:
    import gymnasium as gym

    return callable(env) and not isinstance(env, (gym.Env, gym.vector.VectorEnv, Subject))


def _name(env: Any) -> str:
    spec = getattr(env, "spec", None)
    return getattr(spec, "id", None) or type(env).__name__
