"""Records whose equality and repr follow their ``__slots__``, so neither can fall behind
when a field is added.

A dataclass would do the same, but importing dataclasses costs start-up time (it imports
inspect, re and more) on every find call; this base is enough for the records a find call
builds. Where start-up does not matter, a dataclass is the plainer choice.
"""

from __future__ import annotations


class Record:
    """A base for a ``__slots__`` class whose value is all of its slots: two records are
    equal when they are of the same class and every slot is equal, and the repr names
    every slot (``Layout(depth='flat', dirs=('atlas',), ...)``), so two unequal records
    never print alike. Every slot must be set by ``__init__``.

    A record is unhashable, as a list is, since most are filled in after they are made;
    one that never changes once made derives from ``HashableRecord`` instead.
    """

    __slots__ = ()
    #: Every slot of the class and its bases, in the order the repr names them.
    _fields: tuple[str, ...] = ()

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        fields: list[str] = []
        for klass in reversed(cls.__mro__):
            slots = klass.__dict__.get("__slots__", ())
            fields.extend((slots,) if isinstance(slots, str) else slots)
        cls._fields = tuple(fields)

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, field) for field in self._fields)

    # Defining __eq__ sets __hash__ to None (Python's rule), which the subclasses inherit.
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __repr__(self) -> str:
        fields = ", ".join(f"{field}={getattr(self, field)!r}" for field in self._fields)
        return f"{self.__class__.__name__}({fields})"


class HashableRecord(Record):
    """A record that is never changed once made, so it can be a set member or a dict key:
    its hash is that of its slots' values."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(self._values())
