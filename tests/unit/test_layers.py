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
    """Module → the v6bench modules it imports (``from X import name`` counts X.name when that is a module)."""
    modules = {".".join(p.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__") for p in SRC.rglob("*.py")}
    out: dict[str, set[str]] = {}
    for p in SRC.rglob("*.py"):
        mod = ".".join(p.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
        package = mod.split(".") if p.name == "__init__.py" else mod.split(".")[:-1]
        for n in ast.walk(ast.parse(p.read_text())):
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
