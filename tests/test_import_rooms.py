"""The house's import rules: no import circle anywhere, and every room imports downwards only.

The graph is read from the source with ``ast`` (module-level and lazy
imports alike; imports under ``if TYPE_CHECKING:`` only feed the type
checker and are left out), so a circle fails here before it fails at run
time. The rules are drawn in specs/ARCHITECTURE.md.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("anchor", "auditor", "capture", "chain", "cli", "index", "integrations", "workspace")

# Top-level packages: who may import whom (besides itself).
PACKAGE_RULES: dict[str, set[str]] = {
    "chain": set(),
    "auditor": set(),
    "index": {"chain"},
    "anchor": {"chain"},
    "workspace": {"index", "chain"},
    "capture": {"workspace", "index", "chain"},
    # the console (integrations/console.py) serves the auditor's self-verifying proof page
    "integrations": {"capture", "workspace", "index", "chain", "anchor", "auditor"},
    "cli": {"integrations", "capture", "workspace", "index", "chain", "anchor", "auditor"},
}

# The rooms of chain/, bottom to top: each may import the rooms listed.
ROOM_RULES: dict[str, set[str]] = {
    "format": set(),
    "content": {"format"},
    "log": {"format"},
    "verify": {"format", "content", "log"},
    "store": {"format", "content", "log", "verify"},
    "audit": {"format", "content", "log", "verify", "store"},
    "lifecycle": {"format", "content", "log", "verify", "store", "audit"},
}


def _module_name(path: Path) -> str:
    rel = path.relative_to(REPO).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["memory_chain", *parts])


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """Every memory_chain module named by an import statement in ``tree``."""
    found: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("memory_chain"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target.startswith("memory_chain"):
                found.add(target)
                found.update(f"{target}.{a.name}" for a in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _graph() -> dict[str, set[str]]:
    files = {
        _module_name(p): p
        for pkg in PACKAGES
        for p in (REPO / pkg).rglob("*.py")
        if "node_modules" not in p.parts
    }
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        named = _imports(ast.parse(path.read_text("utf-8")), name, path.name == "__init__.py")
        # "from pkg import name" names a module only when that module exists.
        graph[name] = {m for m in named if m in files and m != name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), or self-loops."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def _top(module: str) -> str:
    return module.split(".")[1]


def _room(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "chain" else None


def test_the_graph_is_read() -> None:
    """Control: the reader sees known edges, or every rule below would pass vacuously."""
    graph = _graph()
    assert "memory_chain.chain.store.ledger" in graph["memory_chain.chain.lifecycle.redact"]
    assert "memory_chain.chain.format.canonical" in graph["memory_chain.chain.store.ledger"]
    assert "memory_chain.chain.content.store" in graph["memory_chain.index.sync"]


def test_no_import_circle_anywhere() -> None:
    assert _cycles(_graph()) == []


def test_the_circle_finder_finds_one() -> None:
    """Control: a planted circle (a -> b -> c -> a) is reported."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


@pytest.mark.parametrize("package", sorted(PACKAGE_RULES))
def test_packages_import_one_way(package: str) -> None:
    allowed = PACKAGE_RULES[package] | {package}
    wrong = sorted(
        f"{src} -> {dst}"
        for src, dsts in _graph().items()
        if _top(src) == package
        for dst in dsts
        if _top(dst) not in allowed
    )
    assert wrong == []


@pytest.mark.parametrize("room", sorted(ROOM_RULES))
def test_chain_rooms_import_downwards(room: str) -> None:
    allowed = ROOM_RULES[room] | {room}
    wrong = sorted(
        f"{src} -> {dst}"
        for src, dsts in _graph().items()
        if _room(src) == room
        for dst in dsts
        if _top(dst) == "chain" and _room(dst) not in allowed
    )
    assert wrong == []


def test_every_chain_module_lives_in_a_room() -> None:
    loose = sorted(
        m for m in _graph() if _top(m) == "chain" and m != "memory_chain.chain" and _room(m) is None
    )
    strays = sorted(r for m in _graph() if (r := _room(m)) is not None and r not in ROOM_RULES)
    assert loose == [] and strays == []


@pytest.mark.parametrize("room", sorted(ROOM_RULES))
def test_each_room_says_what_it_holds_and_may_import(room: str) -> None:
    doc = ast.get_docstring(ast.parse((REPO / "chain" / room / "__init__.py").read_text("utf-8")))
    assert doc is not None and "May import" in doc, room
    named = {w.strip(" .,:`") for w in doc.split("May import", 1)[1].split()}
    assert ROOM_RULES[room] <= named, (room, doc)
