"""``syntax.cached.cached_property``: computed on first access only, then read from the
instance (frozen dataclasses included), like ``functools.cached_property``."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, dataclass

import pytest

from mantle_lsp.syntax.cached import cached_property


@dataclass(frozen=True)
class Site:
    text: str

    @cached_property
    def shout(self) -> str:
        """The text, loud."""
        calls.append(self.text)
        return self.text.upper()


calls: list[str] = []


def test_the_value_is_computed_once_per_instance_and_stays_frozen() -> None:
    calls.clear()
    a, b = Site("a"), Site("b")
    assert (a.shout, a.shout, b.shout) == ("A", "A", "B")
    assert calls == ["a", "b"]
    assert a == Site("a") and hash(a) == hash(Site("a"))  # the cached value is not a field
    with pytest.raises(FrozenInstanceError):
        a.text = "c"  # type: ignore[misc]
    assert isinstance(Site.shout, cached_property)
    assert Site.shout.__doc__ == "The text, loud."
