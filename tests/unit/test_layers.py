"""The layers of the code (docs/architecture.md, "The tree and its seams"):
no import runs back up, no two modules import each other, in Python or in
the engine. ``pytest tests/unit/test_layers.py`` shows the structure with
the project's own command; a new import that breaks it fails here."""

from __future__ import annotations

import ast
import re
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"

#: Each package (or top-level module) of src/v6bench and its layer: a part
#: may import only parts of lower layers (and itself).
LAYERS = {
    "core": 0, "stopping": 0,
    "engine": 1, "store": 1, "methods": 1, "fib": 1,
    "lab": 2, "report": 2,
    "trial": 3,
    "host": 4, "selftest": 4,
    "campaign": 5,
    "cli": 6,
}


def python_imports() -> dict[str, set[str]]:
    """Module → the v6bench modules it imports, read from its syntax tree (``from X import name`` counts X.name
    when that is a module; ``import v6bench.X`` counts too, and imports inside functions)."""
    modules = {".".join(p.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__") for p in SRC.rglob("*.py")}
    out: dict[str, set[str]] = {}
    for p in SRC.rglob("*.py"):
        mod = ".".join(p.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
        package = mod.split(".") if p.name == "__init__.py" else mod.split(".")[:-1]
        for n in ast.walk(ast.parse(p.read_text())):
            if isinstance(n, ast.Import):
                out.setdefault(mod, set()).update(a.name for a in n.names if a.name in modules and a.name != mod)
                continue
            if not isinstance(n, ast.ImportFrom):
                continue
            base = package[: len(package) - (n.level - 1)] if n.level else []
            target = ".".join(base + ([n.module] if n.module else []))
            for name in [target] + [f"{target}.{a.name}" for a in n.names]:
                if name in modules and name != mod:
                    out.setdefault(mod, set()).add(name)
    return out


def part(module: str) -> str:
    return module.split(".")[1] if "." in module else module


def test_no_python_import_runs_back_up():
    wrong = [f"{a} -> {b}" for a, bs in python_imports().items() for b in bs
             if part(a) != part(b) and part(b) != "v6bench" and LAYERS[part(b)] >= LAYERS[part(a)]]
    assert not wrong, wrong
    parts = {part(".".join(p.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")) for p in SRC.rglob("*.py")} - {"v6bench"}
    assert set(LAYERS) == parts, "every part has a layer"


def test_no_python_module_imports_itself_back():
    # The package faces (__init__) re-export their modules: they are not part of a circle.
    graph = {a: {b for b in bs if not (ROOT / "src" / Path(*b.split("."))).is_dir()} for a, bs in python_imports().items()}
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as e:
        raise AssertionError(f"a circle of imports: {e.args[1]}") from None


def engine_uses() -> dict[str, set[str]]:
    """Engine module (a top-level module of engine/src; a directory is one) → the crate modules it uses."""
    out: dict[str, set[str]] = {}
    src = ROOT / "engine" / "src"
    for p in src.rglob("*.rs"):
        mod = p.relative_to(src).parts[0].removesuffix(".rs")
        text = re.sub(r"#\[cfg\(test\)\]\s*mod tests \{.*", "", p.read_text(), flags=re.S)
        used = set(re.findall(r"crate::(\w+)", text))
        out.setdefault(mod, set()).update(u for u in used if u != mod)
    return out


def test_no_engine_module_uses_another_that_uses_it_back():
    try:
        tuple(TopologicalSorter(engine_uses()).static_order())
    except CycleError as e:
        raise AssertionError(f"a circle of engine modules: {e.args[1]}") from None


#: The longest a function in src/ may be [lines], its docstring included: one that does more is split by concept.
MAX_FUNCTION_LINES = 60


def test_no_function_is_longer_than_a_screen():
    long = [f"{p.relative_to(SRC)}:{n.name} ({n.end_lineno - n.lineno + 1} lines)" for p in sorted(SRC.rglob("*.py"))
            for n in ast.walk(ast.parse(p.read_text())) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.end_lineno - n.lineno + 1 > MAX_FUNCTION_LINES]
    assert long == []


#: A file or module a comment or docstring names by its path (``lab/emulated/build.py``,
#: ``lab/machine/cost.runs``, ``docs/methods.md``): relative to the root, src/v6bench or engine/.
NAMED_PATH = re.compile(r"(?<![\w/.:@-])((?:[\w-]+/)+[\w-]+)(?:\.(\w+))?")
#: The first folder of a named path that is the repository's (other paths are of a run directory or a URL).
REPO_FOLDERS = {p.name for p in ROOT.iterdir() if p.is_dir()} | {p.name for p in (SRC / "v6bench").iterdir() if p.is_dir()} \
    | {"lab", "emulated", "vm", "external", "model", "machine", "views"}


def test_every_path_the_code_names_exists():
    # A path from before a move, or a document the repository never had, sends a reader nowhere; a rule cited from
    # a comment lives in docs/, which the repository has. DEVELOPERS.md by name: it is no file of this repository.
    missing = []
    for p in sorted(SRC.rglob("*.py")):
        for n, line in enumerate(p.read_text().splitlines(), 1):
            if "DEVELOPERS.md" in line:
                missing.append(f"{p.relative_to(SRC)}:{n}: DEVELOPERS.md")
            for m in NAMED_PATH.finditer(line):
                path, ext = m.group(1), m.group(2)
                if path.split("/")[0] not in REPO_FOLDERS or path.startswith(("results/", "tables/", "figures/")):
                    continue
                bases = (ROOT, SRC / "v6bench", ROOT / "engine", p.parent)
                if not any((b / path).exists() or (b / f"{path}.py").exists() or (ext and (b / f"{path}.{ext}").exists())
                           for b in bases):
                    missing.append(f"{p.relative_to(SRC)}:{n}: {m.group(0)}")
    assert missing == [], "\n".join(missing)
