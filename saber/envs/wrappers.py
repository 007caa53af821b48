"""One small Gymnasium wrapper per SABER rule (protocol sections 1, 2 and 4).

Each needs only ``info["episode_frame_number"]``, so it also works on a plain ale-py env
(docs/environments.md); rules act at the end of each agent step, where every SABER limit
falls with the 4-frame repeat.
"""

from __future__ import annotations

import time
from typing import Any, SupportsFloat

import gymnasium as gym
from gymnasium.error import ResetNeeded

from saber.envs import rules
from saber.envs.rules import episode_record
from saber.protocol.limits import checkpoint_frames as resolve_checkpoints
from saber.protocol.settings import ROLLOVER_MODES, SABER_CAP_FRAMES

StepResult = tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]

# The info key of each step's raw reward (rollovers corrected, unclipped) under
# clip_rewards=True, in every SABER env: single, make_vec (a float64 (n,) array) and
# saber.jax. Not envpool's info["reward"]: "raw_reward" says which reward it is, beside a
# clipped one (an envpool-style API over make_vec can copy it to its own key).
#: The ``info`` key of each step's unclipped reward, beside a clipped one.
RAW_REWARD = "raw_reward"


class RolloverCorrection(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Treat a reward at or below ``threshold`` as a rollover of the score counter.

    Some games keep the score in a fixed number of digits; passing the top wraps it and
    the ALE reports one huge negative reward (-999,950 for a true +50). No legitimate
    single reward of the 61 games comes near -100,000 (the most negative seen: Skiing's
    -10,000), so those are left intact. A step with a rollover has ``info["rollover"]``.

    Args:
        env: the env whose rewards to correct.
        threshold: rewards at or below this (points, negative) are rollovers.
        mode: ``"correct"`` (restore the gain: ``r + 10**ceil(log10(-r))``), ``"ignore"``
            (reward 0), or ``"off"`` (no change; rollovers are still flagged).

    Example:
        A true +50 that wrapped a six-digit counter, as the ALE reports it and as the
        wrapper returns it:

        >>> from saber.envs import SaberAtariEnv, rules
        >>> env = RolloverCorrection(SaberAtariEnv("pong"))
        >>> rules.is_rollover(-999_950.0, env.threshold), rules.correct_rollover(-999_950.0, env.mode)
        (True, 50.0)
    """

    def __init__(self, env: gym.Env, threshold: float = -100_000.0, mode: str = "correct") -> None:
        gym.utils.RecordConstructorArgs.__init__(self, threshold=threshold, mode=mode)
        gym.Wrapper.__init__(self, env)
        if mode not in ROLLOVER_MODES:
            raise ValueError(
                f"Expect `mode` to be one of {', '.join(ROLLOVER_MODES)}, actually: {mode!r}"
            )
        if not threshold < 0:
            raise ValueError(f"Expect `threshold` to be negative, actually: {threshold!r}")
        self.threshold = threshold
        self.mode = mode

    def step(self, action: Any) -> StepResult:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if rules.is_rollover(reward, self.threshold):
            info["rollover"] = True
            reward = rules.correct_rollover(float(reward), self.mode)
        return obs, reward, terminated, truncated, info


class HideLives(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Give the agent no life information: ``info`` never has ``lives``.

    SABER ends an episode only at game over; ale-py never ends one at a life loss unless
    asked to, and this wrapper removes the remaining channel, the ``lives`` count.

    Example:
        >>> import ale_py, gymnasium as gym
        >>> gym.register_envs(ale_py)
        >>> env = HideLives(gym.make("ALE/Breakout-v5"))
        >>> _, info = env.reset(seed=0)
        >>> "lives" in info, "lives" in env.step(0)[4]
        (False, False)
    """

    def __init__(self, env: gym.Env) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        info.pop("lives", None)
        return obs, info

    def step(self, action: Any) -> StepResult:
        obs, reward, terminated, truncated, info = self.env.step(action)
        info.pop("lives", None)
        return obs, reward, terminated, truncated, info


class NoRewardTimeout(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Truncate an episode stuck for ``max_frames`` emulator frames without a non-zero reward.

    Some games never end (BattleZone and Yars' Revenge were seen stuck for 20 hours of
    random play). Any non-zero reward, positive or negative, restarts the count. The
    truncating step has ``info["stuck_timeout"]``.

    Args:
        env: an env with ``info["episode_frame_number"]``.
        max_frames: frames without reward before truncation (18,000 = 5 minutes).

    Example:
        Breakout never launches its ball without FIRE: no reward, so the episode is
        truncated at ``max_frames`` (here 400 frames, 100 steps of 4 frames):

        >>> from saber.envs import SaberAtariEnv
        >>> env = NoRewardTimeout(SaberAtariEnv("breakout"), max_frames=400)
        >>> _ = env.reset(seed=0)
        >>> terminated = truncated = False
        >>> while not (terminated or truncated):
        ...     _, _, terminated, truncated, info = env.step(0)
        >>> terminated, truncated, info["stuck_timeout"], info["episode_frame_number"]
        (False, True, True, 400)
    """

    def __init__(self, env: gym.Env, max_frames: int = 18_000) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, max_frames=max_frames)
        gym.Wrapper.__init__(self, env)
        if not isinstance(max_frames, int) or max_frames <= 0:
            raise ValueError(f"Expect `max_frames` to be positive, actually: {max_frames!r}")
        self.max_frames = max_frames
        self._last_reward_frame = 0

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._last_reward_frame = 0
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> StepResult:
        obs, reward, terminated, truncated, info = self.env.step(action)
        frame = info["episode_frame_number"]
        if rules.stuck_timeout(
            reward=reward,
            game_over=terminated,
            frame=frame,
            last_reward_frame=self._last_reward_frame,
            max_frames=self.max_frames,
        ):
            truncated = True
            info["stuck_timeout"] = True
        if reward != 0:
            self._last_reward_frame = frame
        return obs, reward, terminated, truncated, info


class FrameLimit(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Truncate an episode at ``max_frames`` emulator frames (Gymnasium's TimeLimit counts steps).

    The truncating step has ``info["time_cap"]``.

    Args:
        env: an env with ``info["episode_frame_number"]``.
        max_frames: the cap (21,600,000 = 100 hours of play).

    Example:
        >>> from saber.envs import SaberAtariEnv
        >>> env = FrameLimit(SaberAtariEnv("pong"), max_frames=400)
        >>> _ = env.reset(seed=0)
        >>> terminated = truncated = False
        >>> while not (terminated or truncated):
        ...     _, _, terminated, truncated, info = env.step(0)
        >>> terminated, truncated, info["time_cap"], info["episode_frame_number"]
        (False, True, True, 400)
    """

    def __init__(self, env: gym.Env, max_frames: int = SABER_CAP_FRAMES) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, max_frames=max_frames)
        gym.Wrapper.__init__(self, env)
        if not isinstance(max_frames, int) or max_frames <= 0:
            raise ValueError(f"Expect `max_frames` to be positive, actually: {max_frames!r}")
        self.max_frames = max_frames

    def step(self, action: Any) -> StepResult:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if rules.frame_cap(
            game_over=terminated, frame=info["episode_frame_number"], max_frames=self.max_frames
        ):
            truncated = True
            info["time_cap"] = True
        return obs, reward, terminated, truncated, info


class SaberEpisodeStatistics(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Record each episode's SABER statistics in ``info["saber"]`` when it ends.

    ``info["saber"]`` is the :meth:`EpisodeRecord.to_dict` of the episode (``info["episode"]``
    is left to Gymnasium's ``RecordEpisodeStatistics`` and SB3's ``Monitor``). Put it above the rule wrappers (it reads
    their flags) and below any reward clipping (scores are raw). Stepping after the end
    of an episode raises Gymnasium's ``ResetNeeded``: an ended episode has no more steps.

    Args:
        env: an env with ``info["episode_frame_number"]``.
        checkpoint_frames: ``{name: emulator frame}`` at which to also record the score
            (default: the registry's, :func:`saber.protocol.checkpoint_frames`).

    Example:
        >>> from saber.envs import NoRewardTimeout, SaberAtariEnv
        >>> env = SaberEpisodeStatistics(NoRewardTimeout(SaberAtariEnv("breakout"), 400))
        >>> _ = env.reset(seed=0)
        >>> terminated = truncated = False
        >>> while not (terminated or truncated):
        ...     _, _, terminated, truncated, info = env.step(0)
        >>> {key: info["saber"][key] for key in ("score", "frames", "steps", "end")}
        {'score': 0.0, 'frames': 400, 'steps': 100, 'end': 'stuck_timeout'}
    """

    def __init__(self, env: gym.Env, checkpoint_frames: dict[str, int] | None = None) -> None:
        checkpoints = resolve_checkpoints(checkpoint_frames)
        gym.utils.RecordConstructorArgs.__init__(self, checkpoint_frames=checkpoints)
        gym.Wrapper.__init__(self, env)
        self.checkpoint_frames = checkpoints
        self._ended = True  # until the first reset
        self._start_episode()

    def _start_episode(self) -> None:
        self._score = 0.0
        self._steps = 0
        self._rollovers = 0
        self._checkpoint_scores = dict.fromkeys(self.checkpoint_frames, 0.0)
        self._start_time = time.perf_counter()

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self._start_episode()
        self._ended = False
        return obs, info

    def step(self, action: Any) -> StepResult:
        if self._ended:
            raise ResetNeeded(
                "Cannot call env.step() after the episode ended (terminated or truncated): "
                "call env.reset() first."
            )
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._score += float(reward)
        self._steps += 1
        frame = info["episode_frame_number"]
        for name, checkpoint in self.checkpoint_frames.items():
            if rules.checkpoint_open(frame, checkpoint):
                self._checkpoint_scores[name] = self._score
        if "rollover" in info:
            self._rollovers += 1
        if terminated or truncated:
            self._ended = True
            end = rules.end_reason(
                game_over=terminated,
                stuck="stuck_timeout" in info,
                capped="time_cap" in info,
            )
            info["saber"] = episode_record(
                score=self._score,
                frames=frame,
                steps=self._steps,
                checkpoint_scores=self._checkpoint_scores,
                end=end,
                rollovers=self._rollovers,
                seconds=time.perf_counter() - self._start_time,
            ).to_dict()
        return obs, reward, terminated, truncated, info


class ClipRewardKeepRaw(gym.wrappers.ClipReward):
    """Gymnasium's ``ClipReward`` that also puts the raw reward in ``info["raw_reward"]``.

    The agent learns from the clipped reward; a logging wrapper above (SB3's ``Monitor``,
    Gymnasium's ``RecordEpisodeStatistics`` fed from the info) can still sum SABER's
    score. The single env's ``clip_rewards=True`` ends with it; SB3's envs put it above
    ``Monitor`` (:func:`saber.training.sb3.make_sb3_vec_env`), so that ``Monitor`` sums the raw
    rewards below it.

    Args:
        env: any env (a SABER env, or one wrapped in ``Monitor``).
        min_reward, max_reward: the clipping bounds (the DQN convention: -1 and 1).

    Example:
        >>> import gymnasium as gym
        >>> env = gym.make("SABER/SpaceInvaders", clip_rewards=True)  # ends with this wrapper
        >>> _ = env.reset(seed=0)
        >>> reward = 0.0
        >>> while reward == 0:  # FIRE until an alien is hit: 5 points
        ...     _, reward, _, _, info = env.step(1)
        >>> float(reward), info["raw_reward"]
        (1.0, 5.0)
    """

    def __init__(self, env: gym.Env, min_reward: float = -1.0, max_reward: float = 1.0) -> None:
        super().__init__(env, min_reward, max_reward)

    def step(self, action: Any) -> StepResult:
        obs, reward, terminated, truncated, info = self.env.step(action)
        info[RAW_REWARD] = reward
        return obs, self.func(reward), terminated, truncated, info
