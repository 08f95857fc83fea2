from __future__ import absolute_import, division, print_function

import io
import os
import platform

import pytest

import tinytornado
from tinytornado import gen

PACKAGE_DIR = os.path.dirname(os.path.abspath(tinytornado.__file__))


def package_sources():
    for directory, _, files in os.walk(PACKAGE_DIR):
        for filename in sorted(files):
            if filename.endswith('.py'):
                yield os.path.join(directory, filename)


@pytest.mark.parametrize('path', list(package_sources()),
                         ids=lambda path: os.path.relpath(path, PACKAGE_DIR))
def test_every_module_compiles_on_this_interpreter(path):
    # What `python2.7 -m compileall tinytornado` checks: the Python-3-only modules too
    # must at least compile on 2.7, so their 3.x syntax is compiled from strings.
    with io.open(path, 'rb') as source_file:
        source = source_file.read()
    compile(source, path, 'exec')


def test_the_c_speedups_are_built():
    if platform.python_implementation() != 'CPython':
        pytest.skip('the C speedups are for CPython')
    if os.environ.get('TINYTORNADO_EXTENSION') == '0':
        pytest.skip('TINYTORNADO_EXTENSION=0 turns the C speedups off')
    # setup.py builds them where there is a C compiler, as on our machines; a build that
    # failed unseen would make the C half of the wrapper tests skip and its speed go.
    assert gen._speedups is not None, 'tinytornado._speedups did not build or import'
