"""The CPU part of feeding one accelerator from several emulator worker processes.

A prototype of the design in docs/harness.md ("Policies on an accelerator"): W worker
processes each hold a vector env of E sub-envs; ONE inference process holds the policy
(on the accelerator) and acts for all of them on one batch of B = W x E observations. Per
batch step, the observations go from the workers to the inference process and the actions
come back. This script measures what that movement costs on the CPU, with the policy
replaced by nothing (``--policy none``: actions are zeros) so that only the transport is
timed, and, beside it, what the policy's own forward pass costs here (a Nature-DQN CNN in
PyTorch on this machine's CPU; on an accelerator that part moves off the CPU).

Transports, each a round trip per batch step (worker: observations out, actions in):

  * ``shm``: one shared-memory block holds the batch, (B, 4, 84, 84) ``uint8``, each worker
    owning E contiguous rows, and one holds the actions (B,) ``int64``. A worker copies its
    observations into its rows and sends one byte on its pipe; the inference process waits
    for every worker's byte, runs the policy on the whole block as one array (no gather,
    no copy: ``torch.from_numpy`` sees the shared pages), writes the actions and sends
    each worker one byte back. The copy into the block is the one copy left (an env that
    wrote its observation into the block directly would save it).
  * ``pipe``: the observations themselves go through each worker's pipe
    (``send_bytes`` / ``recv_bytes_into`` the batch array: two copies through the
    kernel), and the actions come back the same way.
  * ``inline`` (the floor): no workers; the same policy call on a batch already in this
    process.

Workers do no emulation here (their observations are fixed random frames), so the times
are the transport alone, measured as the inference process sees them: wall time per
batch step, and the CPU seconds per batch step of all processes together (this process
plus the workers'). The table also gives the CPU of copying the batch once (``memcpy``)
and the CNN's forward pass on this CPU at one and at all torch threads, for scale beside a
worker's own batch step (emulation, resize, rules: benchmarks/env_throughput.py).
Configurations run in interleaved rounds; medians.

Run ``python benchmarks/accelerator_feed.py`` (``--quick`` for a short run; needs PyTorch
for the CNN column, ``pip install torch``). On a machine with a CUDA GPU, two more
columns: the same CNN's greedy actions for the batch on the GPU, from host memory to
host memory (the copy there from pageable or from pinned memory, the forward pass, the
actions back), in wall ms. It writes ``benchmarks/results/accelerator-feed.json`` for
docs/measurements/eval.md.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import platform
import resource
import statistics
import time
from multiprocessing.connection import Connection
from multiprocessing.shared_memory import SharedMemory
from typing import Any

import numpy as np
from _results import Measurement, add_options

OBSERVATION = (4, 84, 84)  # one SABER observation, uint8
OBSERVATION_BYTES = int(np.prod(OBSERVATION))
NUM_ACTIONS = 18
READY = b"r"  # the one byte a side sends to say its half of the step is in the block


def _worker(
    transport: str,
    index: int,
    envs: int,
    steps: int,
    names: tuple[str, str] | None,
    total: int,
    conn: Connection,
) -> None:
    """One emulator worker's side: ``steps`` batch steps of ``envs`` observations."""
    frames = np.random.default_rng(index).integers(0, 256, (envs, *OBSERVATION), dtype=np.uint8)
    rows = slice(index * envs, (index + 1) * envs)
    blocks: list[SharedMemory] = []
    batch = None
    if transport == "shm":
        assert names is not None
        blocks = [SharedMemory(name=name) for name in names]
        batch = np.ndarray((total, *OBSERVATION), np.uint8, buffer=blocks[0].buf)[rows]
        actions = np.ndarray((total,), np.int64, buffer=blocks[1].buf)[rows]
    else:
        actions = np.zeros(envs, dtype=np.int64)
    # Connection measures a buffer by its first dimension: hand it flat bytes.
    flat_frames, flat_actions = frames.reshape(-1), actions.view(np.uint8)
    cpu = time.process_time()
    for _ in range(steps):
        if transport == "shm":
            np.copyto(batch, frames)  # the env's observation into the worker's rows
            conn.send_bytes(READY)
            conn.recv_bytes()
            taken = actions.copy()  # what the worker would pass to env.step
        else:
            conn.send_bytes(flat_frames)
            conn.recv_bytes_into(flat_actions)
            taken = actions
        del taken
    conn.send(time.process_time() - cpu)
    del batch, actions, flat_actions
    for block in blocks:
        block.close()
    conn.close()


class Feed:
    """The inference process's side of one transport, with its workers started.

    ``step(policy)`` plays one batch step: gathers every worker's observations into
    ``self.batch`` ((B, 4, 84, 84) ``uint8``), calls ``policy(self.batch)`` and hands each
    worker its actions. ``finish()`` returns the workers' CPU seconds.
    """

    def __init__(self, transport: str, workers: int, envs: int, steps: int) -> None:
        self.transport, self.workers, self.envs = transport, workers, envs
        size = workers * envs
        self.blocks: list[SharedMemory] = []
        if transport == "shm":
            self.blocks = [
                SharedMemory(create=True, size=size * OBSERVATION_BYTES),
                SharedMemory(create=True, size=size * 8),
            ]
            self.batch = np.ndarray((size, *OBSERVATION), np.uint8, buffer=self.blocks[0].buf)
            self.actions = np.ndarray((size,), np.int64, buffer=self.blocks[1].buf)
            names: tuple[str, str] | None = (self.blocks[0].name, self.blocks[1].name)
        else:
            self.batch = np.zeros((size, *OBSERVATION), dtype=np.uint8)
            self.actions = np.zeros(size, dtype=np.int64)
            names = None
        context = mp.get_context("spawn")
        self.conns: list[Connection] = []
        self.processes = []
        for index in range(workers):
            here, there = context.Pipe()
            process = context.Process(
                target=_worker,
                args=(transport, index, envs, steps, names, size, there),
                daemon=True,
            )
            process.start()
            there.close()
            self.conns.append(here)
            self.processes.append(process)
        rows = [slice(i * envs, (i + 1) * envs) for i in range(workers)]
        # Connection measures a buffer by its first dimension: hand it flat bytes.
        self.flat_rows = [self.batch[r].reshape(-1) for r in rows]
        self.flat_actions = [self.actions[r].view(np.uint8) for r in rows]

    def step(self, policy: Any) -> None:
        if self.transport == "shm":
            for conn in self.conns:
                conn.recv_bytes()
            self.actions[:] = policy(self.batch)
            for conn in self.conns:
                conn.send_bytes(READY)
        else:
            for conn, rows in zip(self.conns, self.flat_rows, strict=True):
                conn.recv_bytes_into(rows)
            self.actions[:] = policy(self.batch)
            for conn, actions in zip(self.conns, self.flat_actions, strict=True):
                conn.send_bytes(actions)

    def finish(self) -> float:
        """The workers' CPU seconds, once they have played all their steps."""
        return sum(conn.recv() for conn in self.conns)

    def close(self) -> None:
        """Stop the workers (at once if they have not finished) and free the blocks."""
        for process in self.processes:
            process.join(timeout=10)
            if process.is_alive():
                process.terminate()
                process.join()
        for conn in self.conns:
            conn.close()
        # Views of the blocks: released before the blocks are closed.
        del self.batch, self.actions, self.flat_rows, self.flat_actions
        for block in self.blocks:
            block.close()
            block.unlink()


def no_policy(observations: np.ndarray) -> np.ndarray:
    """Actions without looking: isolates the transport."""
    return np.zeros(len(observations), dtype=np.int64)


def measure_transport(
    transport: str, workers: int, batch: int, steps: int, warmup: int = 20
) -> tuple[float, float]:
    """(wall seconds, CPU seconds of all processes) per batch step, the policy doing nothing."""
    if transport == "inline":
        observations = np.zeros((batch, *OBSERVATION), dtype=np.uint8)
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(steps):
            no_policy(observations)
        return (time.perf_counter() - start) / steps, (time.process_time() - cpu) / steps
    feed = Feed(transport, workers, batch // workers, steps + warmup)
    try:
        for _ in range(warmup):  # process start-up, first touches of the pages
            feed.step(no_policy)
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(steps):
            feed.step(no_policy)
        wall, own_cpu = time.perf_counter() - start, time.process_time() - cpu
        worker_cpu = feed.finish()  # includes the warm-up steps: scaled below
    finally:
        feed.close()
    return wall / steps, own_cpu / steps + worker_cpu / (steps + warmup)


def memcpy_seconds(batch: int, repeats: int = 50) -> float:
    """CPU seconds to copy a batch of observations once (the copy into shared memory)."""
    source = np.ones((batch, *OBSERVATION), dtype=np.uint8)
    target = np.empty_like(source)
    np.copyto(target, source)
    start = time.process_time()
    for _ in range(repeats):
        np.copyto(target, source)
    return (time.process_time() - start) / repeats


def nature_cnn() -> Any:
    """A Nature-DQN CNN in PyTorch (weights: the default initialization), in eval mode."""
    from torch import nn

    return nn.Sequential(
        nn.Conv2d(4, 32, 8, stride=4),
        nn.ReLU(),
        nn.Conv2d(32, 64, 4, stride=2),
        nn.ReLU(),
        nn.Conv2d(64, 64, 3, stride=1),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(64 * 7 * 7, 512),
        nn.ReLU(),
        nn.Linear(512, NUM_ACTIONS),
    ).eval()


def cnn_seconds(batch: int, threads: int, repeats: int) -> float | None:
    """Wall seconds of a Nature-DQN CNN's greedy actions for one batch on this CPU."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(threads)
    network = nature_cnn()
    observations = np.random.default_rng(0).integers(0, 256, (batch, *OBSERVATION), dtype=np.uint8)
    with torch.inference_mode():

        def act() -> np.ndarray:
            values = network(torch.from_numpy(observations).float() / 255.0)
            return values.argmax(dim=1).numpy()

        act()
        start = time.perf_counter()
        for _ in range(repeats):
            act()
        return (time.perf_counter() - start) / repeats


def cuda_cnn_seconds(batch: int, pinned: bool, repeats: int) -> float | None:
    """Wall seconds, on the first CUDA GPU, of a Nature-DQN CNN's greedy actions for one
    batch that starts and ends in host memory: the ``uint8`` batch copied to the GPU
    (from pinned memory, the design's registered block, or from ordinary pages), the
    forward pass and the argmax there, the actions copied back (which waits for the GPU).
    None without PyTorch or a CUDA GPU."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    device = torch.device("cuda")
    network = nature_cnn().to(device)
    frames = np.random.default_rng(0).integers(0, 256, (batch, *OBSERVATION), dtype=np.uint8)
    host = torch.from_numpy(frames)
    if pinned:
        host = host.pin_memory()
    with torch.inference_mode():

        def act() -> np.ndarray:
            on_device = host.to(device, non_blocking=pinned)
            values = network(on_device.float() / 255.0)
            return values.argmax(dim=1).cpu().numpy()

        for _ in range(3):  # cuDNN's algorithm choice, the allocator's first blocks
            act()
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(repeats):
            act()
        return (time.perf_counter() - start) / repeats


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer steps and rounds")
    parser.add_argument("--batches", type=int, nargs="+", default=[8, 16, 32, 64, 128, 256])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 5; quick 2)")
    add_options(parser, "accelerator-feed")
    args = parser.parse_args()
    measurement = Measurement(
        args,
        page="eval",
        order=45,
        title="Feeding one policy from several workers: the transport",
        benchmark=__file__,
    )
    rounds = args.rounds or (2 if args.quick else 5)
    steps = 100 if args.quick else 300
    print(
        f"Python {platform.python_version()}, numpy {np.__version__}; "
        f"os.cpu_count() = {os.cpu_count()}; load average before: {os.getloadavg()[0]:.2f}"
    )
    configs = [("inline", 1)] + [
        (transport, workers) for transport in ("shm", "pipe") for workers in args.workers
    ]
    results: dict[tuple[str, int, int], list[tuple[float, float]]] = {}
    for _ in range(rounds):
        for batch in args.batches:
            for transport, workers in configs:
                if batch % workers:
                    continue
                steps_here = max(20, steps * 8 // batch) if transport == "pipe" else steps
                results.setdefault((transport, workers, batch), []).append(
                    measure_transport(transport, workers, batch, steps_here)
                )
    measurement.text(
        f"Per batch step, median of {rounds} rounds ({steps} timed batch steps per "
        "shared-memory run): wall (ms) / CPU of all processes (ms); the policy does nothing. "
        "Beside them, for scale: copying the batch once, and a Nature-DQN CNN's forward pass."
    )
    header = ["batch B", "inline"] + [f"{t} W={w}" for t, w in configs[1:]]
    header += ["memcpy CPU", "CNN 1 thread", f"CNN {os.cpu_count()} threads"]
    gpu = cuda_cnn_seconds(8, pinned=False, repeats=3) is not None
    if gpu:
        header += ["CNN on GPU, pageable", "CNN on GPU, pinned"]
    table = []
    for batch in args.batches:
        cells = [str(batch)]
        for transport, workers in configs:
            values = results.get((transport, workers, batch))
            if not values:
                cells.append("-")
                continue
            wall = statistics.median(v[0] for v in values) * 1e3
            cpu = statistics.median(v[1] for v in values) * 1e3
            cells.append(f"{wall:.3f} / {cpu:.3f}")
        cells.append(f"{memcpy_seconds(batch) * 1e3:.3f}")
        repeats = max(3, 400 // batch)
        for threads in (1, os.cpu_count() or 1):
            seconds = cnn_seconds(batch, threads, repeats)
            cells.append("-" if seconds is None else f"{seconds * 1e3:.2f}")
        for pinned in (False, True) if gpu else ():
            seconds = cuda_cnn_seconds(batch, pinned, repeats=max(20, 2000 // batch))
            cells.append(f"{seconds * 1e3:.3f}" if seconds is not None else "-")
        table.append(cells)
    measurement.table(header, table, align=["right"] * len(header))
    if gpu:
        measurement.title += " (and the CNN on the GPU)"
    measurement.write()
    print(
        f"\nload average after: {os.getloadavg()[0]:.2f}; rounds = {rounds}, "
        f"{steps} timed batch steps per shared-memory run; ru_maxrss of this process "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MiB"
    )


if __name__ == "__main__":
    main()
