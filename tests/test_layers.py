"""The layers of saber (docs/architecture.md): what each may import, light imports, old paths.

Every ``import`` in saber/ (at module level or inside a function) is checked against
:data:`MAY_IMPORT`; the table is a DAG, so no import cycle runs between layers.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

SABER = Path(__file__).parents[1] / "saber"
EXAMPLE_SCORES = Path(__file__).parent / "reports" / "data" / "example_scores.csv"

# Layer -> the layers it may import (besides itself). The one home of this table is
# docs/architecture.md; keep the two in step.
MAY_IMPORT: dict[str, set[str]] = {
    "errors": set(),
    "version": set(),
    # Ctrl-C and SIGTERM as a clean stop, for every command and evaluate().
    "stop_signals": set(),
    "protocol": {"errors", "version"},
    # The run directory (saber eval --out): its files, their one reader and one writer.
    "rundir": {"errors", "version", "protocol"},
    "games": {"errors"},
    "registration": {"games"},
    "envs": {"errors", "protocol", "games", "registration"},
    # agents: the shipped agents' training provenance (ScoreTable.trained_outside_saber).
    "scoring": {"errors", "protocol", "rundir", "games", "agents"},
    "reports": {"errors", "version", "protocol", "rundir", "games", "scoring"},
    # Re-simulating recorded episodes: verify, films, datasets (saber verify, saber replay).
    "replay": {"errors", "version", "protocol", "rundir", "games", "envs"},
    "training": {"errors", "protocol", "rundir", "games", "envs", "scoring", "reports", "replay"},
    # The behavioural probe of any env (saber check); the harness runs its quick part first.
    "check": {"errors", "version", "protocol", "rundir", "games", "envs"},
    # Built-in agents: the shipped trained policy (numpy inference) and per-episode generators.
    "agents": {"errors", "protocol", "rundir"},
    "harness": {
        *("errors", "version", "protocol", "rundir", "games", "envs", "agents"),
        *("scoring", "reports", "training", "check", "replay", "stop_signals"),
    },
    # envpool's Python API over the vector env (``from saber import envpool``).
    "envpool": {"errors", "protocol", "games", "envs"},
    # The JAX envs (the ``jax`` extra) and their policy adapter for the harness.
    "jax": {"errors", "protocol", "rundir", "games", "envs", "agents", "harness"},
    # The static results site (saber board): entries verified by replay, ranked like for like.
    "board": {
        *("errors", "version", "protocol", "rundir", "games", "scoring", "reports", "replay"),
        "agents",
        "check",  # the cache's folder, saber check's
    },
    "cli": {
        *("errors", "protocol", "rundir", "games", "scoring", "reports", "harness", "check"),
        *("replay", "training", "board", "stop_signals"),
    },
    "saber": {"errors", "version", "registration"},  # the rest lazily, by name (importlib)
}


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "saber"


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return {name for name in names if name == "saber" or name.startswith("saber.")}


def test_no_module_imports_up_the_layers() -> None:
    wrong = []
    for path in sorted(SABER.rglob("*.py")):
        module = ".".join(path.relative_to(SABER.parent).with_suffix("").parts)
        module = module.removesuffix(".__init__")
        layer = _layer(module)
        for imported in sorted(_imports(path)):
            target = _layer(imported)
            if target != layer and target not in MAY_IMPORT[layer]:
                wrong.append(f"{module} ({layer}) imports {imported} ({target})")
    assert wrong == []


def test_the_layers_form_no_cycle() -> None:
    order: list[str] = []
    while len(order) < len(MAY_IMPORT):
        ready = [
            layer
            for layer, needs in MAY_IMPORT.items()
            if layer not in order and needs <= set(order)
        ]
        assert ready, f"a cycle among {sorted(set(MAY_IMPORT) - set(order))}"
        order += sorted(ready)


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(SABER.parent).with_suffix("").parts).removesuffix(".__init__")


def _module_graph() -> dict[str, set[str]]:
    """Module -> the saber modules it imports anywhere (module level or in a function).

    ``from saber.x import y`` is an edge to ``saber.x.y`` when that is a module, else to
    ``saber.x`` (its ``__init__``). A package's implicit import of its ``__init__`` on the
    way to a submodule is not an edge: it would make every re-exporting package a circle.
    """
    modules = {_module_name(path): path for path in SABER.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    submodule = f"{node.module}.{alias.name}"
                    targets.add(submodule if submodule in modules else node.module)
        graph[module] = {target for target in targets if target in modules and target != module}
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return circles


def test_no_import_circle_between_modules() -> None:
    """Layers form a DAG (above); inside a layer, modules must too: a circle (a module that
    imports back, even inside a function) means two modules that are one job or share a
    piece that wants its own module."""
    assert _circles(_module_graph()) == []


def test_the_circle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [["a", "b", "c"]]


def _run(code: str, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *options, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=SABER.parent,
    )


def test_scoring_reports_and_saber_report_load_no_emulator() -> None:
    code = f"""
import sys
import saber, saber.scoring, saber.reports, saber.protocol
from click.testing import CliRunner
from saber.cli import main
result = CliRunner().invoke(main, ["report", {str(EXAMPLE_SCORES)!r}, "--resamples", "50"])
assert result.exit_code == 0, result.output
print(sorted(name for name in ("gymnasium", "ale_py", "cv2") if name in sys.modules))
"""
    process = _run(code)
    assert process.returncode == 0, process.stderr
    assert process.stdout.splitlines()[-1] == "[]"


def test_saber_eval_loads_no_emulator_in_its_main_process(tmp_path) -> None:
    """The workers play; the main process plans, stores and reports. With the quick
    probe's pass on disk (the first process keeps it), the main process of an evaluation
    with worker processes imports neither the envs nor what they run on."""
    first = "from saber.check.gate import require_saber_env; require_saber_env()"
    code = f"""
import sys
from saber.harness import Processes, evaluate
result = evaluate("random", "pong", 2, out={str(tmp_path / "run")!r}, backend=Processes(1))
assert len(result.records) == 2, result.records
names = ("gymnasium", "ale_py", "cv2", "saber.envs", "saber.harness.runner")
print(sorted(name for name in names if name in sys.modules))
"""
    environment = {**os.environ, "SABER_CACHE_DIR": str(tmp_path / "cache")}
    for step in (first, code):
        process = subprocess.run(
            [sys.executable, "-c", step],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=SABER.parent,
            env=environment,
        )
        assert process.returncode == 0, process.stderr
    assert process.stdout.splitlines()[-1] == "[]"


@pytest.mark.parametrize(
    "code",
    [
        "import saber, gymnasium; gymnasium.make('SABER/Pong').close()",  # registered on load
        "import gymnasium, saber; gymnasium.make('SABER/Pong').close()",  # registered at once
        "import gymnasium; gymnasium.make('saber:SABER/Pong').close()",
        "import saber; assert saber.make_env is saber.envs.make_env; saber.evaluate",
    ],
)
def test_import_saber_still_registers_the_envs(code: str) -> None:
    process = _run(code)
    assert process.returncode == 0, process.stderr


# The homes saber 0.3 deprecated, removed in 0.4 (the CHANGELOG's migration table says
# where each name lives now).
REMOVED_HOMES = [
    ("saber.harness.training", "saber.training"),
    ("saber.harness.video", "saber.training.video"),
    ("saber.harness.sb3", "saber.training.sb3"),
    ("saber.envs.protocol", "saber.protocol.settings"),
    ("saber.envs.records", "saber.protocol.limits"),
    ("saber.envs.registration", "saber.registration"),
]


@pytest.mark.parametrize(("old", "new"), REMOVED_HOMES, ids=[old for old, _ in REMOVED_HOMES])
def test_the_homes_deprecated_in_0_3_are_gone(old: str, new: str) -> None:
    import importlib
    import importlib.util

    assert importlib.util.find_spec(old) is None, f"{old} is still there"
    importlib.import_module(new)


def test_the_names_deprecated_in_0_3_are_gone() -> None:
    import saber.envs
    import saber.scoring

    for module, name in ((saber.scoring, "TIME_LIMITS"), (saber.envs, "TIME_LIMITS"),
                         (saber.envs, "CHECKPOINT_FRAMES")):  # fmt: skip
        assert not hasattr(module, name), f"{module.__name__}.{name}"


def test_supported_rom_list_is_ale_pys() -> None:
    from ale_py import roms

    from saber.games import supported_rom_ids

    multiplayer_only = {"combat", "joust", "maze_craze", "warlords"}  # ale-py registers none
    assert supported_rom_ids() == tuple(sorted(set(roms.get_all_rom_ids()) - multiplayer_only))
