"""Detection methods: :data:`BUILTIN` declares each built-in method by name and the module defining it,
imported when the method is first asked for (:func:`get`), so that naming, listing or checking a
method's name imports nothing else.

:func:`create` makes an index by name with parameters; :func:`names` lists every method (importing
none); :func:`available` the methods whose optional dependencies are installed (importing each);
:func:`default_methods` those a check runs when it names none.

>>> names()
['calls', 'embedding', 'entities', 'exact', 'id', 'minhash', 'ngram']
>>> get("embeding")
Traceback (most recent call last):
...
auditor.errors.ConfigError: unknown method 'embeding' (did you mean 'embedding'?) (methods: calls, embedding, entities, exact, id, minhash, ngram)
"""

from __future__ import annotations

from typing import Any

from .base import METHODS, Finding, Index, MethodConfig, registry

#: method name -> the module (a file or a package) whose :class:`Index` subclass registers it
BUILTIN = {
    "calls": "auditor.methods.calls",
    "embedding": "auditor.methods.embedding",
    "entities": "auditor.methods.entities",
    "exact": "auditor.methods.exact",
    "id": "auditor.methods.ids",
    "minhash": "auditor.methods.minhash",
    "ngram": "auditor.methods.ngram",
}
for _name, _module in BUILTIN.items():
    METHODS.declare(_name, _module)
#: the built-in methods a check runs only when named (their ``Index.in_default`` is False): known without
#: importing any method, so that a check naming its methods says why each other one did not run
#: importing only these (``tests/test_not_checked.py`` pins it to the classes)
NAMED_ONLY = frozenset({"embedding"})


def names() -> list[str]:
    """Every method's name, sorted; imports none of them."""
    return METHODS.names()


def available() -> list[str]:
    """Methods whose requirements are installed, in a stable order (imports each method's module)."""
    return [n for n in names() if not get(n).missing_requirements()]


def default_methods() -> list[str]:
    """The methods a check runs when it names none: available ones with ``in_default`` set."""
    return [n for n in available() if get(n).in_default]


def get(name: str) -> type[Index]:
    """The method class called ``name``; :class:`~auditor.errors.ConfigError` (with a did-you-mean hint)
    for an unknown name."""
    return METHODS.get(name)


def create(name: str, params: dict[str, Any] | None = None) -> Index:
    return get(name)(**(params or {}))


__all__ = [
    "BUILTIN",
    "METHODS",
    "NAMED_ONLY",
    "Finding",
    "Index",
    "MethodConfig",
    "available",
    "create",
    "default_methods",
    "get",
    "names",
    "registry",
]
