"""Named things of one kind (policies, presets, models), each list of choices defined once.

A :class:`Registry` maps names to implementations or presets in registration order. The
command line derives its choices and help from it, and every lookup of an unknown name
fails the same way: ``ValueError("unknown <kind> 'x'; known: a, b, c")``.
"""

from collections.abc import Mapping, MutableMapping


__all__ = ["Registry"]


class Registry(MutableMapping):
    """``kind`` names what is registered, for messages (``"GPU preset"``); ``items`` is a
    mapping of names to items, or items registered under their ``name``; ``hint``, if
    given, ends the message for an unknown name."""

    def __init__(self, kind, items=(), *, hint=None):
        self.kind = kind
        self.hint = hint
        self._items = {}
        if isinstance(items, Mapping):
            for name, item in items.items():
                self[name] = item
        else:
            for item in items:
                self.register(item)

    def register(self, item):
        """Register ``item`` under ``item.name`` and return it (a class decorator)."""
        self[item.name] = item
        return item

    def lookup(self, name):
        """The item registered as ``name``; ``ValueError`` naming the known ones if none."""
        try:
            return self._items[name]
        except (KeyError, TypeError):
            raise self.unknown(name) from None

    def unknown(self, name):
        hint = f" ({self.hint})" if self.hint else ""
        return ValueError(f"unknown {self.kind} {name!r}; known: {', '.join(self._items)}{hint}")

    @property
    def names(self):
        return tuple(self._items)

    def __getitem__(self, name):
        return self._items[name]

    def __setitem__(self, name, item):
        if name in self._items:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._items[name] = item

    def __delitem__(self, name):
        del self._items[name]

    def __iter__(self):
        return iter(self._items)

    def __len__(self):
        return len(self._items)

    def __repr__(self):
        return f"Registry({self.kind!r}, {self.names})"
