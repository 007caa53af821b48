"""PQN on SABER's JAX envs: env steps, acting and learning compiled together.

PQN (Gallici et al. 2024, "Simplifying Deep Temporal Difference Learning") is Q-learning
without a replay buffer or a target network: many envs act epsilon-greedily for a few
steps, the Q-network (LayerNorm after every layer) then regresses on Q(lambda) returns of
those steps for a few epochs. The hyperparameters are those of the authors' Atari code
(purejaxql, Apache-2.0, github.com/mttga/purejaxql: ``pqn_atari.py``), written anew here
for SABER's envs. What SABER changes:

* SABER envs play all 18 actions with sticky actions (0.25) and no life signal: an
  episode is a whole game, ``terminated`` is the game over.
* Truncations (the 5-minute stuck timeout, the 100-hour cap) are not terminal: the return
  bootstraps from the last observation and the Q(lambda) trace is cut there.
* The envs reset on the step after an episode ends (Gymnasium's NEXT_STEP autoreset): that
  step's transition (last frame -> first frame of a new game) never happened, so the loss
  leaves it out.
* ``clip_rewards=True``: the network learns from rewards clipped to [-1, 1] while the
  episode records, and so the training log, keep raw scores.

The whole update (32 env steps on every env, the returns, 2 epochs of minibatches) is one
function, and ``--chunk-updates`` updates run in one compiled ``jax.lax.scan``. Between
chunks the host writes the finished episodes to ``OUT/training.jsonl`` (the form
``saber training`` reads: cumulative training frames at each episode's end) and saves the
parameters to ``OUT/params.npz``. Run:

    pip install "saber-ale[jax-train]"     # on a GPU: jax[cuda12] first, see docs/jax.md
    python examples/pqn_jax.py --game Pong --frames 10M --seed 0 --out runs/pqn/pong-0
    saber training runs/pqn/pong-0/training.jsonl --at 10M
    SABER_JAX_PARAMS=runs/pqn/pong-0/params.npz \\
        saber eval --agent saber.jax.policy:load_policy --games pong --out runs/pqn/pong-0/eval

``OUT/summary.json`` keeps the arguments, the frames played, the wall time, the compile
time and the frames per second.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import operator
import time
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from saber.games import get_game
from saber.jax import make, records
from saber.jax.qnetwork import init_params, q_values, save_params
from saber.protocol import NUM_ACTIONS, SaberSettings
from saber.protocol.training import parse_frames
from saber.training import (
    TrainingLog,
    format_training_scores,
    training_scores,
)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add = parser.add_argument
    add("--game", default="Pong", help="SABER game (any spelling)")
    add(
        "--frames",
        default="10M",
        type=parse_frames,
        help="training emulator frames (10M, 2e5): training stops at the first update that "
        "reaches them, so at most one update's frames (4 x num-envs x num-steps) more",
    )
    add("--num-envs", type=int, default=128, help="envs stepped together")
    add("--seed", type=int, default=0, help="env seeds seed..seed+num_envs-1, network, exploration")
    add("--out", type=Path, default=Path("runs/pqn"), help="output directory (must be new)")
    add("--num-steps", type=int, default=32, help="env steps per update")
    add("--epochs", type=int, default=2, help="passes over each update's transitions")
    add("--minibatches", type=int, default=32, help="minibatches per epoch")
    add("--lr", type=float, default=2.5e-4, help="RAdam learning rate")
    add("--max-grad-norm", type=float, default=10.0)
    add("--gamma", type=float, default=0.99)
    add("--lambda", dest="lam", type=float, default=0.65, help="Q(lambda) trace decay")
    add("--eps-start", type=float, default=1.0)
    add("--eps-finish", type=float, default=0.001)
    add("--eps-decay", type=float, default=0.1, help="share of the training to anneal over")
    add("--chunk-updates", type=int, default=50, help="updates per compiled chunk")
    add(
        "--unroll",
        choices=("auto", "yes", "no"),
        default="auto",
        help="unroll the gradient steps, one update per compiled call (auto: on CPU only)",
    )
    add(
        "--env-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a SaberSettings override (JSON value), e.g. max_episode_frames=2000 for a "
        "smoke test; anything but clip_rewards makes the training non-SABER",
    )
    args = parser.parse_args(argv)
    if (args.num_envs * args.num_steps) % args.minibatches:
        parser.error("--minibatches must divide --num-envs x --num-steps")
    overrides = {}
    for option in args.env_option:
        key, sep, value = option.partition("=")
        if not sep:
            parser.error(f"--env-option: expect KEY=VALUE, actually: {option!r}")
        try:
            overrides[key.strip()] = json.loads(value)
        except json.JSONDecodeError:  # a bare word: rollover_mode=ignore
            overrides[key.strip()] = value
    args.overrides = overrides
    return args


class Transition(NamedTuple):
    """One env step of every env (leading axis: envs; stacked over steps by the scan)."""

    obs: jax.Array  # uint8 (n, 4, 84, 84): what the action was chosen on
    action: jax.Array  # int32 (n,)
    reward: jax.Array  # float32 (n,), clipped
    terminated: jax.Array  # bool (n,): game over
    truncated: jax.Array  # bool (n,): stuck timeout or cap
    valid: jax.Array  # bool (n,): False on the reset step after an end (never happened)
    max_q: jax.Array  # float32 (n,): max Q of ``obs``, the bootstrap of the step before


class Runner(NamedTuple):
    """Everything the compiled loop carries from one update to the next."""

    params: Any
    opt_state: Any
    env_state: Any
    obs: jax.Array
    after_end: jax.Array  # bool (n,): the last step ended an episode (next one resets)
    last_frames: jax.Array  # int (n,): episode_frame_number after the last step
    update: jax.Array  # int32: updates done
    key: jax.Array


def q_lambda_returns(
    transitions: Transition, last_max_q: jax.Array, gamma: float, lam: float
) -> jax.Array:
    """Q(lambda) targets (steps, n), from the last step backwards.

    G_t = r_t + gamma (1 - term_t) [(1 - l_t) max Q(s_t+1) + l_t G_t+1], with
    l_t = lambda, or 0 where step t was truncated or is the chunk's last (bootstrap only).
    """
    next_max_q = jnp.concatenate([transitions.max_q[1:], last_max_q[None]])

    def backwards(following: jax.Array, step: tuple[jax.Array, ...]) -> tuple[jax.Array, jax.Array]:
        reward, terminated, truncated, bootstrap = step
        trace = jnp.where(truncated, 0.0, lam)
        target = reward + gamma * (1.0 - terminated) * (
            (1.0 - trace) * bootstrap + trace * following
        )
        return target, target

    # The last step has no following return: start from its own bootstrap (trace ignored).
    _, targets = jax.lax.scan(
        backwards,
        next_max_q[-1],
        (
            transitions.reward,
            transitions.terminated.astype(jnp.float32),
            transitions.truncated,
            next_max_q,
        ),
        reverse=True,
    )
    return targets


def unrolled_scan(body: Any, carry: Any, xs: Any, length: int | None = None) -> tuple[Any, Any]:
    """``jax.lax.scan`` as a Python loop: the body traced once per step, no while loop."""
    length = length if xs is None else len(jax.tree_util.tree_leaves(xs)[0])
    outputs = []
    for index in range(length):
        carry, output = body(
            carry, None if xs is None else jax.tree_util.tree_map(operator.itemgetter(index), xs)
        )
        outputs.append(output)
    return carry, jax.tree_util.tree_map(lambda *parts: jnp.stack(parts), *outputs)


def make_chunk(env: Any, args: argparse.Namespace, total_updates: int) -> Any:
    """The compiled function ``chunk(runner) -> (runner, episodes)``, the optimizer, and
    the updates a call runs (``args.chunk_updates``, or 1 when unrolled); ``episodes``
    holds, per env step, the records and their mask (updates, num_steps, n) and the frames
    played by all envs."""
    optimizer = optax.chain(optax.clip_by_global_norm(args.max_grad_norm), optax.radam(args.lr))
    epsilon = optax.linear_schedule(
        args.eps_start, args.eps_finish, max(1, int(args.eps_decay * total_updates))
    )
    batch = args.num_envs * args.num_steps
    # XLA's CPU backend runs the gradients of convolutions 10-40x slower inside a while loop
    # (lax.scan) than unrolled (benchmarks/jax_speed.py pqn), so on CPU the epochs and
    # minibatches are unrolled and each compiled call is one update; GPUs keep the scans.
    unroll = args.unroll == "yes" or (args.unroll == "auto" and jax.default_backend() == "cpu")
    scan = unrolled_scan if unroll else jax.lax.scan

    def env_step(carry: tuple, _: None) -> tuple[tuple, tuple]:
        params, env_state, obs, after_end, last_frames, key, eps = carry
        key, explore_key, action_key = jax.random.split(key, 3)
        q = q_values(params, obs)
        random_actions = jax.random.randint(action_key, (args.num_envs,), 0, NUM_ACTIONS)
        explore = jax.random.uniform(explore_key, (args.num_envs,)) < eps
        action = jnp.where(explore, random_actions, q.argmax(axis=-1)).astype(jnp.int32)
        env_state, next_obs, reward, terminated, truncated, info = env.step(env_state, action)
        frames = info["episode_frame_number"]
        # A frame number below the last one is a new episode (as saber's FrameCounter).
        played = jnp.where(frames >= last_frames, frames - last_frames, frames).sum()
        transition = Transition(
            obs,
            action,
            reward.astype(jnp.float32),
            terminated,
            truncated,
            ~after_end,
            q.max(axis=-1),
        )
        episodes = (info["saber"], info["_saber"], played)
        carry = (params, env_state, next_obs, terminated | truncated, frames, key, eps)
        return carry, (transition, episodes)

    def loss(params: Any, minibatch: Transition, targets: jax.Array) -> jax.Array:
        q = q_values(params, minibatch.obs)
        chosen = jnp.take_along_axis(q, minibatch.action[:, None], axis=-1)[:, 0]
        weight = minibatch.valid.astype(jnp.float32)
        return 0.5 * jnp.sum(weight * jnp.square(chosen - targets)) / jnp.maximum(weight.sum(), 1)

    def learn(carry: tuple, shuffle_key: jax.Array) -> tuple[tuple, jax.Array]:
        params, opt_state, transitions, targets = carry
        order = jax.random.permutation(shuffle_key, batch)

        def minibatches(x: jax.Array) -> jax.Array:
            x = x.reshape(batch, *x.shape[2:])[order]
            return x.reshape(args.minibatches, -1, *x.shape[1:])

        def gradient_step(state: tuple, data: tuple) -> tuple[tuple, jax.Array]:
            params, opt_state = state
            value, grads = jax.value_and_grad(loss)(params, *data)
            updates, opt_state = optimizer.update(grads, opt_state, params)
            return (optax.apply_updates(params, updates), opt_state), value

        data = jax.tree_util.tree_map(minibatches, (transitions, targets))
        (params, opt_state), losses = scan(gradient_step, (params, opt_state), data)
        return (params, opt_state, transitions, targets), losses

    def update(runner: Runner, _: None) -> tuple[Runner, tuple]:
        key, act_key, learn_key = jax.random.split(runner.key, 3)
        carry = (
            runner.params,
            runner.env_state,
            runner.obs,
            runner.after_end,
            runner.last_frames,
            act_key,
            epsilon(runner.update),
        )
        carry, (transitions, episodes) = jax.lax.scan(env_step, carry, None, args.num_steps)
        _, env_state, obs, after_end, last_frames, _, _ = carry
        last_max_q = q_values(runner.params, obs).max(axis=-1)
        targets = q_lambda_returns(transitions, last_max_q, args.gamma, args.lam)
        (params, opt_state, _, _), _ = scan(
            learn,
            (runner.params, runner.opt_state, transitions, targets),
            jax.random.split(learn_key, args.epochs),
        )
        runner = Runner(
            params, opt_state, env_state, obs, after_end, last_frames, runner.update + 1, key
        )
        return runner, episodes

    updates_per_call = 1 if unroll else args.chunk_updates

    # No buffer donation: the env's state and the observation may share buffers, and the
    # runner is a few MB (parameters, optimizer moments, one observation per env).
    # `updates` is static: a call of fewer updates (the last ones, so that training stops
    # at the frames asked) compiles once more.
    @functools.partial(jax.jit, static_argnames="updates")
    def chunk(runner: Runner, updates: int = updates_per_call) -> tuple[Runner, tuple]:
        return scan(update, runner, None, updates)

    return chunk, optimizer, updates_per_call


def start(env: Any, optimizer: Any, seed: int) -> Runner:
    """The runner before the first update: fresh parameters, the envs reset with ``seed``."""
    key, init_key = jax.random.split(jax.random.PRNGKey(seed))
    params = init_params(init_key)
    env_state, obs, info = env.reset(seed=seed)
    return Runner(
        params,
        optimizer.init(params),
        env_state,
        obs,
        jnp.zeros(env.num_envs, dtype=bool),
        jnp.asarray(info["episode_frame_number"]),
        jnp.zeros((), jnp.int32),
        key,
    )


def write_episodes(log: TrainingLog, episodes: tuple) -> None:
    """Log a chunk's finished episodes in the order they ended, each at the cumulative
    training frames of its step (as VectorTrainingRecorder does on make_vec)."""
    arrays, mask, played = jax.device_get(episodes)
    num_envs = mask.shape[-1]
    mask = mask.reshape(-1, num_envs)
    arrays = {name: np.asarray(value).reshape(-1, num_envs) for name, value in arrays.items()}
    played = np.asarray(played).reshape(-1)
    start = 0
    for step in np.flatnonzero(mask.any(axis=1)).tolist():
        log.advance(int(played[start : step + 1].sum()))
        start = step + 1
        step_info = {"saber": {name: value[step] for name, value in arrays.items()}}
        step_info["_saber"] = mask[step]
        rows = np.flatnonzero(mask[step]).tolist()
        for row, record in zip(rows, records(step_info), strict=True):
            log.write(record, row=row)
    log.advance(int(played[start:].sum()))


def train(args: argparse.Namespace) -> dict[str, Any]:
    """Train; returns the summary also written to ``OUT/summary.json``."""
    out: Path = args.out
    log_path = out / "training.jsonl"
    if log_path.exists():
        raise SystemExit(f"{log_path} exists: this example does not resume; choose a new --out")
    settings = SaberSettings.from_overrides(**args.overrides)  # a bad option fails here
    env = make(args.game, num_envs=args.num_envs, clip_rewards=True, **args.overrides)
    frames_per_update = settings.frame_skip * args.num_envs * args.num_steps
    total_updates = math.ceil(args.frames / frames_per_update)
    args.chunk_updates = max(1, min(args.chunk_updates, total_updates))
    chunk, optimizer, updates_per_call = make_chunk(env, args, total_updates)

    runner = start(env, optimizer, args.seed)
    log = TrainingLog(log_path, get_game(args.game).ale_id)
    started = time.perf_counter()
    compile_seconds = None
    try:
        # Until the log has the frames asked for, checked after every call: reset steps
        # play no frame, so the count of updates is a floor. Where fewer updates than a
        # call's could reach the frames, calls of one update each take over.
        while log.frames < args.frames:
            chunk_start = time.perf_counter()
            for _ in range(args.chunk_updates // updates_per_call):
                updates_left = math.ceil((args.frames - log.frames) / frames_per_update)
                updates = updates_per_call if updates_left >= updates_per_call else 1
                runner, episodes = chunk(runner, updates=updates)
                write_episodes(log, episodes)  # waits for the call: device_get
                if compile_seconds is None:
                    compile_seconds = time.perf_counter() - chunk_start
                if log.frames >= args.frames:
                    break
            save_params(
                out / "params.npz",
                jax.device_get(runner.params),
                game=log.game,
                frames=log.frames,
                seed=args.seed,
            )
            metrics = log.metrics.as_dict()
            seconds = time.perf_counter() - started
            mean = metrics.get("saber/mean_score", math.nan)
            print(
                f"{log.frames:,} frames  {log.episodes} episodes  last-100 mean {mean:.1f}  "
                f"{log.frames / seconds:,.0f} frames/s",
                flush=True,
            )
    finally:
        log.close()
    seconds = time.perf_counter() - started
    summary = {
        "game": log.game,
        "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "frames": log.frames,
        "episodes": log.episodes,
        "updates": int(runner.update),
        "wall_seconds": round(seconds, 1),
        "first_call_seconds": round(compile_seconds or 0.0, 1),  # compile + first call
        "frames_per_second": round(log.frames / seconds, 1),
        "device": str(jax.devices()[0]),
        "jax": jax.__version__,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    summary = train(args)
    print(json.dumps({k: v for k, v in summary.items() if k != "args"}))
    log = args.out / "training.jsonl"
    frames = summary["frames"]  # the training's frames: it went on past its last logged episode
    print(format_training_scores(training_scores(log, [args.frames], trained_frames=frames)))


if __name__ == "__main__":
    main()
