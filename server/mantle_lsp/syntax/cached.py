"""``cached_property`` without the lock Python 3.11's has.

``functools.cached_property`` takes a lock shared by every instance of the class on each
first access (3.12 dropped it: it serialised unrelated instances and protected nothing);
at tens of thousands of parsed objects per check that lock was ~1% of the run. This one
computes the value on first access and stores it in the instance's ``__dict__``, where
later accesses find it without calling the descriptor, like ``functools.cached_property``
(frozen dataclasses included: the store bypasses their ``__setattr__``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")


class cached_property(Generic[T]):
    def __init__(self, func: Callable[[Any], T]) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> cached_property[T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> Any:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.func(instance)
        return value
