"""One copy of the policy for every local worker: the policy process (``--policy-process``).

It builds the policy once and acts, in lockstep over shared memory, for the emulator
workers; the results are those of one copy per worker. docs/harness.md ("Policies on an
accelerator") gives the design, its transport and its failures.
"""

from __future__ import annotations

import contextlib
import mmap
import multiprocessing.connection
import os
import queue
import secrets
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from saber.errors import PolicyCallError, PolicyError, counted
from saber.harness.child import become_child_process
from saber.harness.policies import check_actions, describe_error, policy_of
from saber.protocol.settings import SaberSettings

_HELLO, _ACT, _START, _REST = "hello", "act", "start", "rest"
_RAISED, _BROKE_PROTOCOL = "raised", "broke the protocol"  # the answers of a failed call
CONNECT_SECONDS = 120.0  # a worker's wait for the policy process to listen
# Folder names: <prefix><pid of the main process that made it>-<random>. A main process
# killed outright (kill -9) cannot remove its folders; the next run removes those whose
# process is gone (remove_orphaned_blocks).
BLOCKS_PREFIX = "saber-policy-"
SOCKET_PREFIX = "saber-socket-"
ENDED = "the policy process ended (--policy-process): its error, if it printed one, is above"


@dataclass(frozen=True)
class PolicyLink:
    """What a worker needs to reach the policy process (picklable).

    Attributes:
        address: the policy process's Unix socket.
        authkey: the connection's key (random per run).
        observations: path of the observations block.
        actions: path of the actions block.
        workers: W, the worker slots.
        rows: E, the rows of each slot.
        observation_shape: one observation's shape, (stack, size, size).
    """

    address: str
    authkey: bytes
    observations: str
    actions: str
    workers: int
    rows: int
    observation_shape: tuple[int, int, int]

    @property
    def total_rows(self) -> int:
        return self.workers * self.rows


def _block(path: str, dtype: Any, shape: tuple[int, ...]) -> np.ndarray:
    """A plain ``ndarray`` over a shared file (the mapping lives as long as the array)."""
    size = int(np.prod(shape)) * np.dtype(dtype).itemsize
    with open(path, "r+b") as handle:
        mapped = mmap.mmap(handle.fileno(), size)
    return np.frombuffer(mapped, dtype=dtype).reshape(shape)


def _blocks(link: PolicyLink) -> tuple[np.ndarray, np.ndarray]:
    observations = _block(link.observations, np.uint8, (link.total_rows, *link.observation_shape))
    return observations, _block(link.actions, np.int64, (link.total_rows,))


def _connect(link: PolicyLink) -> Any:
    """A connection to the policy process, once its socket is listening (it may start
    after this worker: a worker waits up to :data:`CONNECT_SECONDS`)."""
    deadline = time.monotonic() + CONNECT_SECONDS
    while True:
        try:
            return multiprocessing.connection.Client(
                link.address, family="AF_UNIX", authkey=link.authkey
            )
        except (FileNotFoundError, ConnectionRefusedError):
            if time.monotonic() > deadline:
                raise PolicyError(
                    f"the policy process (--policy-process) did not listen within "
                    f"{CONNECT_SECONDS:g} s: its error, if it printed one, is above"
                ) from None
            time.sleep(0.02)


class RemotePolicy:
    """A worker's policy under ``--policy-process``: its rows of the shared block.

    Args:
        link: the policy process.
        slot: this worker's slot, 0..W-1 (a worker that replaces another takes its slot).

    Attributes:
        error: why the policy could not be built (None: it was), as the policy process
            said when this worker connected.
    """

    def __init__(self, link: PolicyLink, slot: int) -> None:
        self._connection = _connect(link)
        self._connection.send((_HELLO, slot))
        self.error: str | None = self._receive()[1]
        observations, actions = _blocks(link)
        rows = slice(slot * link.rows, (slot + 1) * link.rows)
        self._observations, self._actions = observations[rows], actions[rows]
        self._offset = slot * link.rows

    def _receive(self) -> tuple[str, Any]:
        try:
            return self._connection.recv()  # type: ignore[no-any-return]
        except (EOFError, OSError):
            raise PolicyError(ENDED) from None

    def _send(self, message: tuple[str, Any]) -> None:
        try:
            self._connection.send(message)
        except OSError:
            raise PolicyError(ENDED) from None

    def start_episodes(self, rows: np.ndarray, seeds: np.ndarray) -> None:
        """Tell the policy of the episodes starting at these rows (of this worker)."""
        rows = np.asarray(rows, dtype=np.int64) + self._offset
        self._send((_START, (rows, np.asarray(seeds, dtype=np.int64))))

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        count = len(observations)
        if count > len(self._observations):
            raise PolicyError(f"{count} observations for {counted(len(self._observations), 'row')}")
        self._observations[:count] = observations
        self._send((_ACT, count))
        kind, message = self._receive()
        if kind == _BROKE_PROTOCOL:
            raise PolicyError(message)
        if kind == _RAISED:
            raise PolicyCallError(message)
        return self._actions[:count].copy()

    def rest(self) -> None:
        """This worker's vector env is done: the policy no longer waits for it."""
        with contextlib.suppress(OSError):
            self._connection.send((_REST, None))


class _Unreachable:
    """A worker's policy when the policy process cannot be reached: every use says why."""

    def __init__(self, message: str) -> None:
        self.message = message

    def start_episodes(self, rows: np.ndarray, seeds: np.ndarray) -> None:
        raise PolicyError(self.message)

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        raise PolicyError(self.message)

    def rest(self) -> None:
        pass


def remote_policy(link: PolicyLink, slot: int) -> tuple[RemotePolicy | _Unreachable, str | None]:
    """A worker's policy under ``--policy-process``, and why it cannot act (None: it can):
    the policy's build failed, or its process cannot be reached."""
    try:
        remote = RemotePolicy(link, slot)
    except PolicyError as error:
        return _Unreachable(str(error)), str(error)
    return remote, remote.error


def _serve(link: PolicyLink, policy_spec: Any) -> None:
    """The policy process: build the policy once, then act for the workers, in lockstep."""
    become_child_process()  # the main process decides how to stop
    # Listening first: workers that connect while the policy builds wait in the backlog.
    listener = multiprocessing.connection.Listener(
        link.address, family="AF_UNIX", authkey=link.authkey
    )
    arrived: queue.Queue[Any] = queue.Queue()
    wake_reader, wake_writer = multiprocessing.Pipe(duplex=False)

    def accept() -> None:  # connections of new and replacing workers, at any time
        while True:
            try:
                arrived.put(listener.accept())
            except (OSError, multiprocessing.AuthenticationError):
                continue
            wake_writer.send_bytes(b"")

    threading.Thread(target=accept, name="saber-policy-accept", daemon=True).start()
    policy: Any = None
    error: str | None = None  # why the policy could not be built: every call fails so
    raised: str | None = None  # what its start_episodes raised: the next calls fail so
    try:
        policy = policy_of(policy_spec)
        starter = getattr(policy, "start_episodes", None)
        if starter is not None:  # every row started: a policy never sees a row unknown to it
            rows = np.arange(link.total_rows, dtype=np.int64)
            starter(rows, np.zeros(link.total_rows, dtype=np.int64))
    except Exception as failure:
        error = str(failure) if isinstance(failure, PolicyError) else describe_error(failure)
    observations, actions = _blocks(link)
    slots: dict[Any, int] = {}  # connection -> slot
    playing: set[int] = set()
    asking: dict[int, Any] = {}  # slot -> its connection, waiting for actions

    def drop(connection: Any) -> None:
        """A worker gone: it rests for good (unless a replacement took its slot already)."""
        slot = slots.pop(connection)
        if asking.get(slot) is connection:
            del asking[slot]
        if slot not in slots.values():
            playing.discard(slot)
        connection.close()

    while True:
        for ready in multiprocessing.connection.wait([wake_reader, *slots]):
            if ready is wake_reader:
                wake_reader.recv_bytes()
                connection = arrived.get()
                try:
                    kind, slot = connection.recv()
                except (EOFError, OSError):
                    connection.close()
                    continue
                slots[connection] = int(slot)
                connection.send((_HELLO, error))
                continue
            try:
                kind, body = ready.recv()
            except (EOFError, OSError):
                drop(ready)
                continue
            slot = slots[ready]
            if kind == _START:
                playing.add(slot)
                if policy is not None and hasattr(policy, "start_episodes"):
                    try:
                        policy.start_episodes(*body)
                    except Exception as failure:  # reported at the next call
                        raised = describe_error(failure)
            elif kind == _ACT:
                playing.add(slot)
                asking[slot] = ready
            elif kind == _REST:
                playing.discard(slot)
        if asking and playing <= set(asking):
            _act(policy, error, raised, observations, actions, asking)
            asking.clear()
            raised = None


def _act(
    policy: Any,
    error: str | None,
    raised: str | None,
    observations: np.ndarray,
    actions: np.ndarray,
    asking: dict[int, Any],
) -> None:
    """One call on the whole block; the actions, or the failure, to every worker asking."""
    answer: tuple[str, str | None] = (_ACT, None)
    if error is not None:
        answer = (_BROKE_PROTOCOL, error)
    elif raised is not None:
        answer = (_RAISED, raised)
    else:
        try:
            actions[:] = check_actions(policy(observations), len(observations))
        except PolicyError as failure:  # wrong shape, type or range: as in a worker
            answer = (_BROKE_PROTOCOL, str(failure))
        except Exception as failure:
            answer = (_RAISED, describe_error(failure))
    for connection in asking.values():
        with contextlib.suppress(OSError):
            connection.send(answer)


class PolicyProcess:
    """The policy process of a :class:`~saber.harness.backends.LocalExecutor`: its shared
    blocks and socket (in a folder of their own, removed by :meth:`close`) and its process.

    Args:
        context: the multiprocessing context (``spawn``).
        policy: the job's policy (a spec, a class or a picklable object).
        settings: the env's overrides (the observation's shape follows them).
        workers: W, the worker slots.
        rows: E, sub-envs per worker.
    """

    def __init__(
        self, context: Any, policy: Any, settings: dict[str, Any], workers: int, rows: int
    ) -> None:
        saber_settings = SaberSettings.from_overrides(**settings)
        size = saber_settings.screen_size
        shape = (saber_settings.stack_size, size, size)
        owner = f"{os.getpid()}-"
        self.folder = Path(tempfile.mkdtemp(prefix=BLOCKS_PREFIX + owner, dir=_shared_memory()))
        total = workers * rows
        paths = {"observations": total * int(np.prod(shape)), "actions": total * 8}
        for name, size_bytes in paths.items():
            with open(self.folder / name, "wb") as handle:
                handle.truncate(size_bytes)
        # A Unix socket's path is limited to about 100 bytes: a short folder of its own.
        self._socket_folder = Path(tempfile.mkdtemp(prefix=SOCKET_PREFIX + owner))
        self.link = PolicyLink(
            address=str(self._socket_folder / "policy"),
            authkey=secrets.token_bytes(16),
            observations=str(self.folder / "observations"),
            actions=str(self.folder / "actions"),
            workers=workers,
            rows=rows,
            observation_shape=shape,
        )
        self.process = context.Process(
            target=_serve, args=(self.link, policy), name="saber-policy", daemon=True
        )
        self.process.start()

    def close(self) -> None:
        """Stop the process; remove the blocks and the socket."""
        if self.process.is_alive():
            self.process.kill()
        self.process.join(timeout=10)
        shutil.rmtree(self.folder, ignore_errors=True)
        shutil.rmtree(self._socket_folder, ignore_errors=True)


def _shared_memory() -> str | None:
    """Where the blocks live: ``/dev/shm`` (memory, not disk) where there is one."""
    return "/dev/shm" if os.path.isdir("/dev/shm") else None


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists (another user's process, which may not be signalled,
    exists too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists
        return True
    return True


def remove_orphaned_blocks() -> list[Path]:
    """Remove the folders (shared blocks, sockets) of policy processes whose main process
    is gone, killed outright (``kill -9``) before it could remove them; return them.

    ``saber eval`` calls this at every start, so a killed run's 448 kB (2 workers x 8
    envs) of ``/dev/shm`` outlive it until the next run at the latest. A folder is its
    owner's while a process of that pid exists (a pid used again by another process
    keeps the folder until that one ends too: never a live run's folder removed).
    """
    removed = []
    for where, prefix in ((_shared_memory(), BLOCKS_PREFIX), (None, SOCKET_PREFIX)):
        base = Path(where or tempfile.gettempdir())
        try:
            candidates = list(base.glob(prefix + "*-*"))
        except OSError:
            continue
        for folder in candidates:
            pid = folder.name[len(prefix) :].partition("-")[0]
            if pid.isdigit() and not _alive(int(pid)) and folder.is_dir():
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
    return removed
