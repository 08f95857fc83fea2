"""Tests of running on asyncio and talking to it; they live in platform_asyncio_cases_py3.py,
which 2.7 cannot parse (``async def``)."""
from __future__ import absolute_import, division, print_function

import pytest

from tinytornado._compat import PY2

if PY2:
    pytest.skip('asyncio is Python 3 only', allow_module_level=True)

pytest.register_assert_rewrite('platform_asyncio_cases_py3')
from platform_asyncio_cases_py3 import *  # noqa: E402,F401,F403
