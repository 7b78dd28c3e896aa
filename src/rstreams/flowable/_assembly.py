"""Assembly tracing and the assembly hook: where each stage of a pipeline was built.

A Python traceback of an asynchronous pipeline shows drain loops and scheduler frames, not the line
of user code that built the failing stage. With tracing on (``rstreams.plugins.enable_assembly_tracing()``
or ``RSTREAMS_ASSEMBLY_TRACING=1`` at import), every Flowable that user code gets from a public
method or factory remembers the method, its first arguments and the caller's ``file:line`` (one
``sys._getframe`` at assembly), and an error passing through it gets a note
(``BaseException.add_note``) such as ``at .map(parse) (etl.py:42)``; the notes read from the stage
that raised down to the subscriber.

The one place. Operators are assembled by the facade's public methods (``Flowable.map``,
``Flowable.range``, the mixins' time and asyncio methods). Switching tracing (or an assembly hook)
on replaces those methods on the ``Flowable`` class with wrappers that call the original and pass
its result through :func:`_assembled`; switching both off puts the originals back. So with tracing
off and no hook, nothing of this module runs: zero cost at assembly and per element. With tracing
on, each traced stage costs one pass-through subscriber call per element, except in a fused
synchronous chain, where the stages stay folded into builtin iterators and only the last stage of
the chain is subscribed: it names the folded stages it carries (the one whose user function is in
the error's traceback first, or all of them when none is).

Calls from inside the library (an operator built from other operators) are not traced: the caller
frame is rstreams' own, and the user's line is the outer call's. Flowables with an interface of
their own (``publish()``'s ConnectableFlowable, ``group_by``'s groups) are not wrapped.

The state here is global (it patches one class); tests restore it with ``rstreams.plugins.reset()``.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from types import CodeType, FrameType, MemberDescriptorType, TracebackType
from typing import Any, Final, TypeVar, final

from .._internal.subscriptions import CANCELLED, report_double_subscription
from .._spec import Subscriber, Subscription
from ._base import BasicSubscriber
from ._flowable import Flowable

__all__ = [
    "AssemblyRecord",
    "NoteSubscriber",
    "add_note",
    "assembly_hook",
    "caller_record",
    "note_subscriber",
    "set_assembly_hook",
    "set_tracing",
    "tracing_enabled",
    "user_frame",
]

T = TypeVar("T")

AssemblyHook = Callable[[Flowable[Any]], Flowable[Any]]

# Files of the library: a caller frame in one of them is an internal assembly.
_PACKAGE_DIR: Final = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

# Public methods that assemble nothing (or only apply user functions that do): never wrapped.
_NOT_ASSEMBLY: Final = frozenset(
    {"subscribe", "test", "pipe", "compose", "to", "to_future", "send", "throw", "close"}
)

# Operators that look at their upstream's type to flatten a chain (a.concat_with(b).concat_with(c)
# stays one flat trampoline, not one nested subscription per call): they get the traced stage's
# own Flowable, and the result carries the upstream's record as a folded one.
_FLATTENING: Final = frozenset({"concat_with", "start_with"})

# An error crossing a long traced chain gets at most this many "at ..." notes.
_MAX_NOTES: Final = 16
_MORE: Final = "at ... (more traced stages: notes stop here)"

# Guards switching: two threads enabling/disabling at once would patch the class twice or restore
# a wrapper as an "original". Readers (the wrappers) take plain snapshots of the two globals.
_lock = threading.Lock()
_tracing = False
_hook: AssemblyHook | None = None
_originals: dict[str, Any] = {}  # name -> what Flowable's own __dict__ held (or _INHERITED)
_INHERITED: Final = object()
_plain_types: dict[type, bool] = {}
_in_hook = threading.local()


def _codes(args: tuple[Any, ...]) -> frozenset[CodeType]:
    """The code objects of the user functions among ``args`` (to find the stage that raised)."""
    codes: set[CodeType] = set()
    for a in args:
        fn = getattr(a, "func", a)  # functools.partial
        fn = getattr(fn, "__func__", fn)  # bound method
        code = getattr(fn, "__code__", None)
        if isinstance(code, CodeType):
            codes.add(code)
    return frozenset(codes)


def _describe(arg: Any) -> str:
    if isinstance(arg, (list, tuple, dict, set, frozenset)) and len(arg) > 4:  # no repr of a big input
        return f"<{type(arg).__name__} of {len(arg)}>"
    if callable(arg) and not isinstance(arg, Flowable):
        name = getattr(arg, "__qualname__", None) or getattr(arg, "__name__", None)
        if isinstance(name, str):
            return name.rsplit(".", 1)[-1] if "<locals>" in name else name
        return type(arg).__name__
    text = repr(arg)
    if text.startswith("<"):  # an object's default repr: its type says more in one line
        return type(arg).__name__
    return text if len(text) <= 24 else text[:21] + "..."


@final
class AssemblyRecord:
    """Where one stage was built: its operator, its first arguments and the caller's file:line."""

    __slots__ = ("operator", "args", "filename", "lineno", "codes", "_line")

    def __init__(self, operator: str, args: tuple[Any, ...], filename: str, lineno: int) -> None:
        self.operator = operator
        self.args = args[:2]
        self.filename = filename
        self.lineno = lineno
        self.codes = _codes(self.args)
        self._line: str | None = None

    @property
    def line(self) -> str:
        """The note's text: ``at .map(parse) (etl.py:42)``."""
        line = self._line
        if line is None:
            shown = ", ".join(_describe(a) for a in self.args)
            line = f"at {self.operator}({shown}) ({os.path.basename(self.filename)}:{self.lineno})"
            self._line = line  # racing threads compute the same string: harmless
        return line

    def __repr__(self) -> str:
        return f"AssemblyRecord({self.line!r})"


def user_frame() -> FrameType | None:
    """The innermost frame outside rstreams on this thread's stack (the user's assembling line)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
    return frame


def caller_record(operator: str, args: tuple[Any, ...], frame: FrameType) -> AssemblyRecord:
    """The record of a stage built by ``frame``'s line."""
    return AssemblyRecord(operator, args, frame.f_code.co_filename, frame.f_lineno)


def add_note(error: BaseException, note: str) -> None:
    """Add ``note`` to ``error`` once (an error object re-signalled by a retry is noted once)."""
    notes = getattr(error, "__notes__", None)
    if notes is not None and note in notes:
        return
    try:
        error.add_note(note)
    except Exception:  # noqa: BLE001 - a foreign exception type with a broken __notes__: no note
        pass


def _traceback_codes(tb: TracebackType | None) -> set[CodeType]:
    codes: set[CodeType] = set()
    while tb is not None:
        codes.add(tb.tb_frame.f_code)
        tb = tb.tb_next
    return codes


class NoteSubscriber(BasicSubscriber[T, T]):
    """Passes every signal through; an error gets ``notes()`` added first (tracing, checkpoint)."""

    __slots__ = ("_notes",)

    def __init__(self, downstream: Subscriber[T], notes: Callable[[BaseException], None]) -> None:
        super().__init__(downstream)
        self._notes = notes

    def on_subscribe(self, subscription: Subscription) -> None:
        if self.upstream is not CANCELLED and subscription is not None:
            subscription.cancel()  # rule 2.5
            # the offender is the stage just above this point: the note says where it was built
            report_double_subscription("the stage whose assembly the note names", self._notes)
            return
        super().on_subscribe(subscription)

    def on_next(self, item: T) -> None:
        self.downstream.on_next(item)

    def on_error(self, error: BaseException) -> None:
        if not self.done:
            self._notes(error)
        super().on_error(error)


class _NoteBatchSubscriber(NoteSubscriber[T]):
    """A NoteSubscriber in front of a batch consumer: hands the library-internal batches on."""

    __slots__ = ()

    def on_next_batch(self, items: list[T]) -> None:
        self.downstream.on_next_batch(items)  # type: ignore[attr-defined]

    @property
    def accepts_batches(self) -> bool:
        return bool(getattr(self.downstream, "accepts_batches", True))


def note_subscriber(downstream: Subscriber[T], notes: Callable[[BaseException], None]) -> NoteSubscriber[T]:
    """A NoteSubscriber that keeps the batch hand-off when ``downstream`` takes batches."""
    if getattr(downstream, "on_next_batch", None) is not None:
        return _NoteBatchSubscriber(downstream, notes)
    return NoteSubscriber(downstream, notes)


@final
class _Traced(Flowable[T]):
    """A traced stage: subscribes its stage behind a NoteSubscriber; fuses as its stage does."""

    __slots__ = ("_source", "_record", "_folded")

    def __init__(self, inner: Flowable[T], record: AssemblyRecord, folded: tuple[AssemblyRecord, ...]) -> None:
        self._source = inner  # named as operators name their upstream: chain walks find it
        self._record = record
        self._folded = folded  # traced stages fused into this one, upstream first

    def _fused(self) -> Any:
        return self._source._fused()

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._source.subscribe(note_subscriber(subscriber, self._note))

    def _note(self, error: BaseException) -> None:
        record = self._record
        folded = self._folded
        lines: list[str] = []
        if folded:
            codes = _traceback_codes(error.__traceback__)
            start = 0
            if not (record.codes & codes):  # not raised by this stage's own function
                for i, r in enumerate(folded):
                    if r.codes & codes:
                        start = i
                        break
                lines.extend(r.line for r in folded[start:])
        lines.append(record.line)
        notes = getattr(error, "__notes__", None) or ()
        room = _MAX_NOTES - sum(1 for n in notes if isinstance(n, str) and n.startswith("at "))
        for line in lines:
            if room <= 0:
                add_note(error, _MORE)
                return
            add_note(error, line)
            room -= 1

    def __repr__(self) -> str:
        return f"{self._source!r} {self._record.line}"


def _is_plain(cls: type) -> bool:
    """True if ``cls`` adds no public method to Flowable's (so a _Traced can stand in for it).

    Public data slots (``just``'s ``items``) do not count; ``_rs_no_trace`` classes (markers such
    as ``checkpoint`` and ``name``, whose own operators look for them) are never wrapped."""
    plain = _plain_types.get(cls)
    if plain is None:
        base = set(dir(Flowable))
        plain = not getattr(cls, "_rs_no_trace", False) and not any(
            not n.startswith("_") and n not in base and not isinstance(getattr(cls, n, None), MemberDescriptorType)
            for n in dir(cls)
        )
        _plain_types[cls] = plain  # racing threads store the same answer: harmless
    return plain


def _assembled(
    result: Any, operator: str, upstream: Any, args: tuple[Any, ...], frame: FrameType | None
) -> Any:
    """What a facade method returns with tracing or the hook on (``frame``: its caller's)."""
    if not isinstance(result, Flowable) or result is upstream or isinstance(result, _Traced):
        return result
    if (
        _tracing
        and frame is not None
        and not frame.f_code.co_filename.startswith(_PACKAGE_DIR)
        and _is_plain(type(result))
    ):
        folded: tuple[AssemblyRecord, ...] = ()
        if isinstance(upstream, _Traced) and upstream._fused() is not None and result._fused() is not None:
            folded = (*upstream._folded, upstream._record)
        result = _Traced(result, caller_record(operator, args, frame), folded)
    hook = _hook
    if hook is not None and not getattr(_in_hook, "busy", False):
        _in_hook.busy = True  # what the hook assembles itself is not passed to it (no recursion)
        try:
            result = hook(result)
        finally:
            _in_hook.busy = False
    return result


def _wrap(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    operator = "." + name
    if name in _FLATTENING:

        def assembled(self: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(self, _Traced):  # let the operator see (and flatten) its own type
                inner = self._source
                result = fn(inner, *args, **kwargs)
                if result is inner:  # start_with() of nothing is its source
                    return self
                result = _assembled(result, operator, None, args, sys._getframe(1))
                if isinstance(result, _Traced):
                    result._folded = (*self._folded, self._record, *result._folded)
                return result
            return _assembled(fn(self, *args, **kwargs), operator, self, args, sys._getframe(1))

    else:

        def assembled(self: Any, *args: Any, **kwargs: Any) -> Any:
            return _assembled(fn(self, *args, **kwargs), operator, self, args, sys._getframe(1))

    assembled.__name__ = name
    assembled.__qualname__ = f"Flowable.{name}"
    assembled.__doc__ = fn.__doc__
    assembled.__wrapped__ = fn  # type: ignore[attr-defined]
    return assembled


def _wrap_static(name: str, fn: Callable[..., Any]) -> staticmethod[..., Any]:
    operator = "Flowable." + name

    def assembled(*args: Any, **kwargs: Any) -> Any:
        return _assembled(fn(*args, **kwargs), operator, None, args, sys._getframe(1))

    assembled.__name__ = name
    assembled.__qualname__ = f"Flowable.{name}"
    assembled.__doc__ = fn.__doc__
    assembled.__wrapped__ = fn  # type: ignore[attr-defined]
    return staticmethod(assembled)


def _instrument() -> None:
    """Replace the facade's assembling methods with wrappers (under _lock)."""
    if _originals:
        return
    seen: set[str] = set()
    for cls in Flowable.__mro__:
        for name, attr in vars(cls).items():
            if name.startswith("_") or name in _NOT_ASSEMBLY or name.startswith("blocking_") or name in seen:
                continue
            seen.add(name)
            if isinstance(attr, staticmethod):
                wrapped: Any = _wrap_static(name, attr.__func__)
            elif callable(attr) and not isinstance(attr, (classmethod, type)):
                wrapped = _wrap(name, attr)
            else:
                continue
            _originals[name] = Flowable.__dict__.get(name, _INHERITED)
            setattr(Flowable, name, wrapped)


def _restore() -> None:
    """Put the facade's own methods back (under _lock)."""
    for name, original in _originals.items():
        if original is _INHERITED:
            delattr(Flowable, name)
        else:
            setattr(Flowable, name, original)
    _originals.clear()


def _update() -> None:
    if _tracing or _hook is not None:
        _instrument()
    else:
        _restore()


def set_tracing(enabled: bool) -> None:
    """Switch assembly tracing on or off for Flowables assembled from now on."""
    global _tracing
    with _lock:
        _tracing = bool(enabled)
        _update()


def tracing_enabled() -> bool:
    return _tracing


def set_assembly_hook(hook: AssemblyHook | None) -> None:
    """Install ``hook`` (called with every Flowable the facade returns; returns it or a stand-in)."""
    global _hook
    if hook is not None and not callable(hook):
        raise TypeError(f"set_on_assembly(): the hook must be a callable or None, got {type(hook).__name__}")
    with _lock:
        _hook = hook
        _update()


def assembly_hook() -> AssemblyHook | None:
    return _hook
