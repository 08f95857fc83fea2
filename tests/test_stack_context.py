"""tinytornado.stack_context: what holds without stack contexts, and a loud refusal where
Tornado's would have followed callbacks."""
from __future__ import absolute_import, division, print_function

import contextlib
import functools

import pytest

from tinytornado.stack_context import (
    ExceptionStackContext, NullContext, StackContext, StackContextInconsistentError,
    run_with_stack_context, wrap,
)


def test_wrap_returns_the_callable_itself():
    def callback():
        pass

    partial = functools.partial(callback)
    assert wrap(callback) is callback
    assert wrap(partial) is partial
    assert wrap(None) is None


def test_null_context_runs_its_block_and_hides_no_exception():
    trace = []
    with NullContext() as entered:
        trace.append(('inside', entered))
    with pytest.raises(ZeroDivisionError):
        with NullContext():
            trace.append('raising')
            1 / 0
    assert trace == [('inside', None), 'raising']


def test_run_with_stack_context_calls_func_inside_the_context():
    trace = []

    @contextlib.contextmanager
    def traced():
        trace.append('enter')
        try:
            yield
        finally:
            trace.append('exit')

    def func():
        trace.append('func')
        return 42

    assert run_with_stack_context(traced(), func) == 42
    assert run_with_stack_context(NullContext(), lambda: 'x') == 'x'
    assert trace == ['enter', 'func', 'exit']


def test_run_with_stack_context_lets_exceptions_through():
    def fail():
        raise KeyError('k')

    with pytest.raises(KeyError):
        run_with_stack_context(NullContext(), fail)


@pytest.mark.parametrize('make', [
    lambda: StackContext(NullContext),
    lambda: ExceptionStackContext(lambda typ, value, tb: True),
    lambda: ExceptionStackContext(lambda typ, value, tb: True, delay_warning=True),
], ids=['StackContext', 'ExceptionStackContext', 'delay_warning'])
def test_the_transferring_contexts_refuse_at_once_naming_the_alternative(make):
    handled = []
    with pytest.raises(NotImplementedError) as caught:
        with make():
            handled.append('block ran')
    message = str(caught.value)
    assert 'no stack contexts' in message
    assert 'try/except' in message and 'coroutine' in message
    assert handled == []


def test_inconsistent_error_is_an_exception_to_catch():
    with pytest.raises(Exception) as caught:
        raise StackContextInconsistentError('yield inside a with block')
    assert isinstance(caught.value, StackContextInconsistentError)
