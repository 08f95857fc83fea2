"""Tornado 5.1's stack_context names for legacy code: tinytornado has no stack contexts.

In Tornado a StackContext followed a callback to wherever it ran: ``wrap`` captured the
contexts active when a callback was scheduled and re-entered them when it ran, and the
IOLoop, IOStream and HTTP client wrapped every callback they were given. That costs every
scheduled callback a wrapper, and Tornado 5.1 deprecated it for coroutines, whose
``try``/``except`` follows a ``yield`` with nothing extra (docs/design.md lists it among
what the anchors got wrong). tinytornado schedules plain callbacks, so what is true here
is what holds when no context is ever captured:

- `wrap` returns its callable unchanged: there is nothing to capture.
- `NullContext` is a context manager that does nothing: there is no context to clear.
  It hides no exception.
- `run_with_stack_context` enters the context manager it is given and calls `func`.
- `StackContextInconsistentError` exists to be caught; nothing raises it.

`StackContext` and `ExceptionStackContext` raise NotImplementedError when made. Their
whole point is to reach callbacks scheduled inside their ``with`` block and run later:
every use in Tornado 5.1's own tests (a resolver's, an HTTP client's or the loop's
callback raising) is that case. Handling only exceptions raised inside the block itself
would let that code start and then hang silently, its handler never called, so it fails
at once instead, naming the replacement: a coroutine with ``try``/``except`` around the
``yield``, or a Future's exception read in its done callback.
"""
from __future__ import absolute_import, division, print_function

__all__ = [
    'StackContext', 'ExceptionStackContext', 'NullContext', 'StackContextInconsistentError',
    'wrap', 'run_with_stack_context',
]

_NO_STACK_CONTEXTS = (
    '%s: tinytornado has no stack contexts, so nothing would carry this one into the '
    'callbacks scheduled inside its block. Catch their errors where they surface: '
    'try/except around the yield in a @gen.coroutine, or future.exception() in a done '
    'callback.')


class StackContextInconsistentError(Exception):
    """Tornado raised it when a ``with StackContext`` block spanned a ``yield``."""


class StackContext(object):
    """Not available: raises NotImplementedError (see the module's docstring)."""

    def __init__(self, context_factory):
        raise NotImplementedError(_NO_STACK_CONTEXTS % 'StackContext')


class ExceptionStackContext(object):
    """Not available: raises NotImplementedError (see the module's docstring)."""

    def __init__(self, exception_handler, delay_warning=False):
        raise NotImplementedError(_NO_STACK_CONTEXTS % 'ExceptionStackContext')


class NullContext(object):
    """A context manager that clears the stack contexts: here there are none to clear."""

    def __enter__(self):
        return None

    def __exit__(self, exc_type, exc_value, traceback):
        return False  # an exception inside the block goes on up


def wrap(fn):
    """`fn` itself (None stays None): there is no stack context to capture with it."""
    return fn


def run_with_stack_context(context, func):
    """Call `func` inside ``with context:`` and return what it returns.

    Tornado offered it so that a coroutine could be called inside a StackContext without
    a ``yield`` in the ``with`` block; here `context` is any context manager.
    """
    with context:
        return func()
