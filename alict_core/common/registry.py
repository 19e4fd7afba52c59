"""Name → factory registries for backends (parsers, masked LMs, models, explainers).

The UI builds its menus from these registries; plugins register with a decorator.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Generic, TypeVar

from alict_core.common.errors import AlictError

T = TypeVar("T")


@dataclass(frozen=True)
class Param:
    """One argument a backend takes from its user (a form field, a ``name:key=value`` of the CLI)."""

    name: str
    hint: str = ""  # an example or what to give (the form's placeholder)
    required: bool = True


@dataclass
class Entry(Generic[T]):
    name: str
    factory: Callable[..., T]
    description: str = ""
    tags: dict[str, Any] = field(default_factory=dict)
    params: tuple[Param, ...] = ()  # the arguments its user gives (the form, the CLI and the trust check read them)

    def required(self) -> list[str]:
        """Names of the parameters that must be given."""
        return [p.name for p in self.params if p.required]


class Registry(Generic[T]):
    """A named collection of factories; ``create(name, **kwargs)`` builds a backend."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, Entry[T]] = {}

    def register(self, name: str, description: str = "", *, params: tuple[Param, ...] = (),
                 **tags: Any) -> Callable[[Callable[..., T]], Callable[..., T]]:
        def decorator(factory: Callable[..., T]) -> Callable[..., T]:
            self.add(name, factory, description, params=params, **tags)
            return factory

        return decorator

    def add(self, name: str, factory: Callable[..., T], description: str = "", *, params: tuple[Param, ...] = (),
            **tags: Any) -> None:
        self._entries[name] = Entry(name, factory, description, dict(tags), tuple(params))

    def remove(self, name: str) -> None:
        self._entries.pop(name, None)

    def names(self, **tag_filter: Any) -> list[str]:
        return [e.name for e in self._entries.values() if all(e.tags.get(k) == v for k, v in tag_filter.items())]

    def entry(self, name: str) -> Entry[T]:
        if name not in self._entries:
            valid = ", ".join(sorted(self._entries)) or "(none registered)"
            raise AlictError(f"unknown {self.kind} {name!r}; valid names: {valid}")
        return self._entries[name]

    def create(self, name: str, **kwargs: Any) -> T:
        return self.entry(name).factory(**kwargs)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self):
        return iter(list(self._entries.values()))
