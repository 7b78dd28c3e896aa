"""checkpoint (Reactor's ``checkpoint``): a marker whose description is added to passing errors.

The error keeps its own traceback; the checkpoint adds a note (``BaseException.add_note``) such as
``checkpoint: orders enriched (etl.py:42)`` as it passes, so a failure deep in an asynchronous
pipeline says which part of the pipeline it crossed. With ``trace`` (or no description) the user's
assembling ``file:line`` is recorded once at assembly (one walk up the stack to the first frame
outside rstreams). Elements pass through the same subscriber call as ``hide()``'s; a synchronous
chain above the checkpoint stays fused (the chain below it is not folded across it).
"""

from __future__ import annotations

import os
from typing import Any, TypeVar, final

from ..._spec import Subscriber
from .._assembly import add_note, note_subscriber, user_frame
from .._flowable import Flowable

__all__ = ["checkpoint"]

T = TypeVar("T")


@final
class _CheckpointFlowable(Flowable[T]):
    __slots__ = ("_source", "note")
    _rs_no_trace = True  # a marker: assembly tracing leaves it unwrapped (name/tag look for it)

    def __init__(self, source: Flowable[T], note: str) -> None:
        self._source = source
        self.note = note

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._source.subscribe(note_subscriber(subscriber, self._add))

    def _add(self, error: BaseException) -> None:
        add_note(error, self.note)


def checkpoint(source: Flowable[T], description: Any, trace: bool) -> Flowable[T]:
    if description is not None and not isinstance(description, str):
        raise TypeError(f"checkpoint(): description must be a str or None, got {type(description).__name__}")
    note = "checkpoint" if description is None else f"checkpoint: {description}"
    if trace or description is None:
        frame = user_frame()
        if frame is not None:
            note += f" ({os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno})"
    return _CheckpointFlowable(source, note)
