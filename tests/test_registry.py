"""The one registry of named plugins (auditor.registry) and the four it holds: every built-in entry is
declared once, by the module that registers it, and adapters sniff in one explicit order."""

from __future__ import annotations

import importlib
import pkgutil
import sys

import pytest

from auditor import adapters, engines, methods
from auditor.adapters.base import ADAPTERS, BUILTIN, Adapter, in_sniff_order
from auditor.engines.base import ENGINES, Engine
from auditor.errors import ConfigError, InternalError, MissingDependencyError
from auditor.methods.base import METHODS, Index
from auditor.registry import Registry
from auditor.store.findings import STORES, FindingStore


def _registered_in(package, base: type) -> dict[str, str]:
    """name -> module of every named ``base`` subclass the package's modules (files or packages) define."""
    for m in pkgutil.iter_modules(package.__path__):
        if not m.name.startswith("_"):
            importlib.import_module(f"{package.__name__}.{m.name}")
    found: dict[str, str] = {}
    todo = [base]
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        # a class of a module no longer imported (a test's stand-in, its module dropped) is no built-in
        if (
            getattr(cls, "name", "")
            and cls.__module__.startswith(package.__name__ + ".")
            and cls.__module__ in sys.modules
        ):
            found[cls.name] = cls.__module__
    return found


def test_every_built_in_adapter_is_in_the_sniffing_order_exactly_once():
    names = [n for n, _ in BUILTIN]
    assert len(names) == len(set(names))  # no name twice: no ties, no doubt which sniffs first
    assert dict(BUILTIN) == _registered_in(adapters, Adapter)


def test_detection_asks_adapters_in_the_listed_order_with_plugins_before_the_generic_readers():
    listed = [ADAPTERS.get(n) for n, _ in BUILTIN]
    assert in_sniff_order(reversed(listed)) == listed

    class Plugin(Adapter):
        name = "test-plugin-format"

        def read(self, path):
            return iter(())

    try:
        order = [a.name for a in in_sniff_order([*listed, Plugin])]
        assert order.index("webshop-goals") < order.index("test-plugin-format") < order.index("jsonl")
    finally:
        ADAPTERS.unregister("test-plugin-format")


def _declares(declared: dict[str, str], found: dict[str, str]) -> bool:
    """The same names, each declared by the module defining its class or a package above it (a method
    that is a package may define its class in a submodule its ``__init__`` imports)."""
    return declared.keys() == found.keys() and all(
        found[n] == m or found[n].startswith(m + ".") for n, m in declared.items()
    )


def test_every_built_in_method_engine_and_store_is_declared_by_its_module():
    assert _declares(methods.BUILTIN, _registered_in(methods, Index))
    assert {n: ENGINES.module(n) for n in ENGINES.names()} == _registered_in(engines, Engine)
    import auditor.store

    declared = {n: STORES.module(n) for n in STORES.names() if STORES.module(n)}
    assert declared == {
        n: m for n, m in _registered_in(auditor.store, FindingStore).items() if m != "auditor.store.findings"
    }


def test_names_import_nothing_and_get_imports_the_declared_module(tmp_path, monkeypatch):
    (tmp_path / "reg_plugin_pkg").mkdir()
    (tmp_path / "reg_plugin_pkg" / "__init__.py").write_text(
        "from test_registry import SHAPES\n\nclass Square:\n    pass\n\nSHAPES.register('square', Square)\n"
    )
    (tmp_path / "reg_plugin_empty.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    SHAPES.declare("square", "reg_plugin_pkg")  # a package, as a method's module may be
    SHAPES.declare("empty", "reg_plugin_empty")
    try:
        assert SHAPES.names() == ["empty", "square"] and "reg_plugin_pkg" not in sys.modules
        assert not SHAPES.loaded("square")
        assert SHAPES.get("square").__name__ == "Square" and "reg_plugin_pkg" in sys.modules
        with pytest.raises(InternalError, match="module reg_plugin_empty registers no shape 'empty'"):
            SHAPES.get("empty")
        with pytest.raises(
            ConfigError, match=r"unknown shape 'sqare' \(did you mean 'square'\?\) \(shapes: empty, square\)"
        ):
            SHAPES.get("sqare")
    finally:
        for n in ("reg_plugin_pkg", "reg_plugin_empty"):
            sys.modules.pop(n, None)


SHAPES: Registry[type] = Registry("shape")


@pytest.mark.parametrize(
    ("registry", "typo", "message"),
    [
        (METHODS, "embeding", "unknown method 'embeding' (did you mean 'embedding'?)"),
        (ADAPTERS, "jsonll", "unknown format 'jsonll' (did you mean 'jsonl'?"),
        (ENGINES, "rayy", "unknown engine 'rayy' (did you mean 'ray'?) (engines: local, ray)"),
        (STORES, "duckbd", "unknown findings store 'duckbd' (did you mean 'duckdb'?)"),
    ],
)
def test_an_unknown_name_is_a_config_error_with_a_hint(registry, typo, message):
    with pytest.raises(ConfigError) as e:
        registry.get(typo)
    assert str(e.value).startswith(message)


def test_a_method_whose_requirement_is_missing_is_listed_as_unavailable(monkeypatch):
    """``available`` imports each method to ask it; one needing an uninstalled module stays listed by
    ``names`` and is refused with the extra to install."""
    embedding = methods.get("embedding")
    monkeypatch.setattr(embedding, "requires", {"no_such_module_for_auditor": "embed"})
    assert "embedding" in methods.names() and "embedding" not in methods.available()
    with pytest.raises(MissingDependencyError, match="no_such_module_for_auditor"):
        methods.create("embedding")
