"""Handlers written with async def, which only Python 3 can compile (test_web imports
this module on 3.x)."""
from __future__ import absolute_import, division, print_function

from tinytornado import gen
from tinytornado.web import RequestHandler


class NativeHandler(RequestHandler):
    async def prepare(self):
        await gen.sleep(0)
        self.steps = ['prepare']

    async def get(self, name):
        await gen.sleep(0.01)
        self.steps.append('get')
        self.write('native %s after %s' % (name, ','.join(self.steps)))
