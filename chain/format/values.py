"""Small records without dataclasses' import cost.

``@dataclass`` writes and compiles several methods per class when its
module is imported: 0.3-0.6 ms a class, and the session start's modules
defined two dozen (a sixth of its import time). A class on that path lists
its fields in ``__slots__``, sets them in a hand-written ``__init__``, and
takes the rest from a base here:

- ``Record`` (a mutable dataclass): equality by field values and a repr;
  like the dataclass, it is not hashable.
- ``Value`` (``frozen=True``): the same, hashable, its fields set once in
  ``__init__`` through ``object.__setattr__`` and never after, and
  ``replace()`` in place of ``dataclasses.replace``.

Fields are the ``__slots__`` of the class and its bases, bases first, in the
order of the class's annotations; each ``__init__`` takes them by name.
"""

from __future__ import annotations

from typing import Any, Self

__all__ = ["FrozenError", "Record", "Value", "fields_of"]

_FIELDS: dict[type, tuple[str, ...]] = {}


def fields_of(cls: type) -> tuple[str, ...]:
    """The field names of a Record class: its and its bases' ``__slots__``, bases first,
    each class's in the order its annotations declare them (as a dataclass orders them)."""
    found = _FIELDS.get(cls)
    if found is None:
        import inspect  # loaded by click on every command already

        names: list[str] = []
        for klass in reversed(cls.__mro__):
            slots = klass.__dict__.get("__slots__", ())
            slots = (slots,) if isinstance(slots, str) else tuple(slots)
            declared = [n for n in inspect.get_annotations(klass) if n in slots]
            names.extend(declared + [n for n in slots if n not in declared])
        found = _FIELDS[cls] = tuple(names)
    return found


def _rebuild(cls: type[Value], fields: dict[str, Any]) -> Value:
    """A pickled Value made again (its ``__init__`` takes its fields by name)."""
    return cls(**fields)


class FrozenError(AttributeError):
    """A field of a Value was assigned or deleted."""


class Record:
    """Base of a record whose fields are its ``__slots__``: equality and repr by field."""

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]  # mutable: not hashable, as the dataclass

    def _fields(self) -> dict[str, Any]:
        """Every field by name."""
        return {name: getattr(self, name) for name in fields_of(type(self))}

    def _values(self) -> tuple[Any, ...]:
        """What equality (and a Value's hash) compares: every field, unless a class says less."""
        return tuple(getattr(self, name) for name in fields_of(type(self)))

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Record)
        return self._values() == other._values()

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in fields_of(type(self)))
        return f"{type(self).__qualname__}({shown})"


class Value(Record):
    """A Record that cannot change once made (``dataclass(frozen=True)``)."""

    __slots__ = ()

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(self._values())

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self._fields()))

    def replace(self, **changes: Any) -> Self:
        """A copy with ``changes`` (as dataclasses.replace)."""
        values = self._fields()
        unknown = changes.keys() - values.keys()
        if unknown:
            raise TypeError(f"{type(self).__qualname__} has no field(s) {sorted(unknown)}")
        values.update(changes)
        return type(self)(**values)
