"""Python's side effects on objects, performed once per public call: saved before it, put back between sweeps.

A derivative performs the writes of the function it differentiates (`self.nfev += 1`, `self.X.append(X)`) in its
forward sweep (s2s/ir/object_state.py lists them: `Function.effects`). One public call must perform them once, as
one call of the function would; but `grad(f, mode="forward")` on an array, `hessian` and `jacobian` run one sweep per
coordinate, `jacobian` and `vjp` call f itself first, and the checking mode (`check=True`) runs f and the forward
sweep once more to compare them. `Effects(fn)` saves what those writes change (each attribute, item or list they
touch, as it is now); `again()` puts it back before each run after the first, so the last run leaves what one call
leaves; `undo()` puts it back after a run that must leave nothing (the checking mode's). Saved and restored without
running the objects' own code: instance dictionaries, dict items, list and array contents.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

_ABSENT = object()


def _written(fn: Callable) -> list:
    from s2s.driver.primal import lowered, root_function
    root = root_function(fn)
    try:
        return list(getattr(lowered(root), "effects", ()))
    except Exception:               # noqa: BLE001 - a function s2s cannot read writes nothing it performs
        return []


class Effects:
    """The state fn's writes change, as it is when made."""

    def __init__(self, fn: Callable, effects: list | None = None) -> None:
        self.places = _written(fn) if effects is None else effects
        self.saved = [self._save(p) for p in self.places]

    def __bool__(self) -> bool:
        return bool(self.places)

    @staticmethod
    def _save(place: tuple) -> Any:
        kind, obj, name = place
        if kind == "attr":
            held = getattr(obj, "__dict__", None)
            if isinstance(held, dict) and not isinstance(obj, type):
                return held.get(name, _ABSENT)
            return getattr(obj, name, _ABSENT) if not isinstance(obj, type) else vars(obj).get(name, _ABSENT)
        if kind == "item":
            if isinstance(obj, dict):
                return obj.get(name, _ABSENT)
            return obj[name] if isinstance(name, int) and 0 <= name < len(obj) else _ABSENT
        if isinstance(obj, np.ndarray):
            return obj.copy()
        if isinstance(obj, dict):
            return dict(obj)
        return list(obj)

    @staticmethod
    def _restore(place: tuple, value: Any) -> None:
        kind, obj, name = place
        if kind == "attr":
            held = getattr(obj, "__dict__", None)
            if value is _ABSENT:
                if isinstance(obj, type):
                    if name in vars(obj):
                        delattr(obj, name)
                elif isinstance(held, dict):
                    held.pop(name, None)
                elif hasattr(obj, name):
                    delattr(obj, name)
            elif isinstance(held, dict) and not isinstance(obj, type):
                held[name] = value
            else:
                setattr(obj, name, value)
        elif kind == "item":
            if value is _ABSENT:
                if isinstance(obj, dict):
                    obj.pop(name, None)
            else:
                obj[name] = value
        elif isinstance(obj, np.ndarray):
            obj[...] = value
        elif isinstance(obj, dict):
            obj.clear()
            obj.update(value)
        else:
            obj[:] = value

    def state(self) -> list:
        """What the writes left (to compare Python's run with the derivative's in the checking mode)."""
        return [self._save(p) for p in self.places]

    def again(self) -> None:
        """Every place as it was when saved: the next run starts from the state the first one did."""
        for place, value in reversed(list(zip(self.places, self.saved))):
            self._restore(place, value)

    undo = again
