# -*- coding: utf-8 -*-
"""Tornado 5.1's form parsers: `parse_multipart_form_data`, `parse_body_arguments`, and the
`_parse_header` they read Content-Type and Content-Disposition with.

The cases are those Tornado's own tests check (quoted and unquoted names, escaped file
names, RFC 5987 names, quoted boundaries, missing headers, data after the final
boundary) and more: boundaries that look like content, a preamble, a part of every kind
of fault next to good ones. A malformed body or part is a warning on gen_log, as in 5.1;
the tests assert each warning.
"""
from __future__ import absolute_import, division, print_function

import logging
import re

import pytest
from six import ensure_str

from tinytornado._httputil_legacy import _parse_header
from tinytornado.httputil import (
    HTTPFile, HTTPHeaders, parse_body_arguments, parse_multipart_form_data,
)
from tinytornado.log import gen_log
from tinytornado.util import ObjectDict


@pytest.fixture
def warnings_logged(caplog):
    """The messages gen_log warns with during the test, in order."""
    caplog.set_level(logging.WARNING, logger=gen_log.name)
    return lambda: [record.getMessage() for record in caplog.records
                    if record.name == gen_log.name]


def multipart(*parts, **kwargs):
    """A multipart body: each part is (header lines, body bytes); `boundary` (b'1234'),
    `preamble` and `epilogue` (bytes) may be given."""
    boundary = kwargs.pop('boundary', b'1234')
    data = kwargs.pop('preamble', b'')
    for lines, body in parts:
        head = '\r\n'.join(lines).encode('utf-8')
        data += b'--' + boundary + b'\r\n' + head + b'\r\n\r\n' + body + b'\r\n'
    return data + b'--' + boundary + b'--' + kwargs.pop('epilogue', b'')


def parsed(data, boundary=b'1234'):
    arguments, files = {}, {}
    parse_multipart_form_data(boundary, data, arguments, files)
    return arguments, files


def file_part(filename_params, body=b'Foo', name='files'):
    return (['Content-Disposition: form-data; name="%s"; %s' % (name, filename_params)], body)


# --- parse_multipart_form_data: what it gives --------------------------------------------------

def test_a_file_upload_is_an_http_file(warnings_logged):
    arguments, files = parsed(multipart(file_part('filename="ab.txt"')))
    assert arguments == {}
    [upload] = files['files']
    assert isinstance(upload, HTTPFile)
    assert upload == {'filename': 'ab.txt', 'body': b'Foo', 'content_type': 'application/unknown'}
    assert (upload.filename, upload.body, upload.content_type) == (
        'ab.txt', b'Foo', 'application/unknown')
    assert warnings_logged() == []


def test_an_http_file_is_a_dict_read_and_written_as_attributes():
    upload = HTTPFile(filename='a')
    assert isinstance(upload, ObjectDict)  # as in Tornado 5.1
    upload.body = b'x'
    assert upload == {'filename': 'a', 'body': b'x'} and upload['body'] == b'x'
    with pytest.raises(AttributeError):
        upload.content_type


def test_fields_and_files_in_order_with_their_content_types():
    data = multipart(
        (['Content-Disposition: form-data; name="a"'], b'1'),
        (['content-disposition: form-data; name="up"; filename="x.png"',
          'Content-Type: image/png'], b'\x89PNG\r\n\x1a\n\x00\xff'),
        (['Content-Disposition: form-data; name="a"'], b''),
        (['Content-Disposition: form-data; name="b"'], b'line 1\r\nline 2\r\n'),
    )
    arguments, files = {'a': [b'0']}, {}
    parse_multipart_form_data(b'1234', data, arguments, files)
    assert arguments == {'a': [b'0', b'1', b''], 'b': [b'line 1\r\nline 2\r\n']}
    assert files == {'up': [{'filename': 'x.png', 'body': b'\x89PNG\r\n\x1a\n\x00\xff',
                             'content_type': 'image/png'}]}


def test_names_need_no_quotes():
    data = multipart((['Content-Disposition: form-data; name=files; filename=ab.txt'], b'Foo'))
    assert parsed(data)[1]['files'][0].filename == 'ab.txt'


@pytest.mark.parametrize('filename', [
    'a;b.txt', 'a"b.txt', 'a";b.txt', 'a;"b.txt', 'a";";.txt', 'a\\"b.txt', 'a\\b.txt',
])
def test_escaped_file_names(filename):
    quoted = filename.replace('\\', '\\\\').replace('"', '\\"')
    upload = parsed(multipart(file_part('filename="%s"' % quoted)))[1]['files'][0]
    assert (upload.filename, upload.body) == (filename, b'Foo')


def test_a_backslash_that_escapes_nothing_stays():
    # Browsers send a Windows path as it is, backslashes unescaped.
    upload = parsed(multipart(file_part('filename="C:\\docs\\a.txt"')))[1]['files'][0]
    assert upload.filename == 'C:\\docs\\a.txt'


@pytest.mark.parametrize('params', [
    'filename="ab.txt"; filename*=UTF-8\'\'%C3%A1b.txt',
    'filename*=UTF-8\'\'%C3%A1b.txt; filename="ab.txt"',
    'filename*=utf-8\'en\'%C3%A1b.txt',
    'FILENAME*=iso-8859-1\'\'%E1b.txt',
], ids=['after-the-plain-name', 'before-it', 'with-a-language', 'latin-1'])
def test_an_rfc_5987_file_name_is_text_and_wins(params):
    upload = parsed(multipart(file_part(params)))[1]['files'][0]
    assert upload.filename == u'\xe1b.txt'


def test_names_are_native_strings_read_as_utf8():
    data = multipart(([u'Content-Disposition: form-data; name="n\xe9"; filename="\xe1b.txt"'],
                      b'Foo'))
    upload = parsed(data)[1][ensure_str(u'n\xe9')][0]
    assert upload.filename == ensure_str(u'\xe1b.txt')
    assert type(upload.filename) is str


@pytest.mark.parametrize('boundary, given', [
    (b'1234', b'"1234"'),  # quoted in the Content-Type: allowed, and rare
    (b'a.b*c+(d)?', b'a.b*c+(d)?'),  # not a pattern
    (b'--', b'--'),
    (b'x' * 70, b'x' * 70),
    (b"'()+_,-./:=?", b'"\'()+_,-./:=?"'),
], ids=['quoted', 'regex-characters', 'dashes', 'longest', 'every-special-character'])
def test_odd_boundaries(boundary, given):
    data = multipart((['Content-Disposition: form-data; name="a"'], b'x'), boundary=boundary)
    assert parsed(data, boundary=given) == ({'a': [b'x']}, {})


def test_content_that_resembles_a_boundary_is_content():
    body = b'--1234x\r\n--1234--\r\nend'  # neither a delimiter (no CRLF before) nor the last
    data = multipart((['Content-Disposition: form-data; name="a"'], body),
                     (['Content-Disposition: form-data; name="b"'], b'--12'))
    assert parsed(data) == ({'a': [body], 'b': [b'--12']}, {})


@pytest.mark.parametrize('epilogue', [b'\r\n', b'\r\nignored\r\n'])
def test_what_follows_the_final_boundary_is_ignored(epilogue, warnings_logged):
    data = multipart(file_part('filename="ab.txt"'), epilogue=epilogue)
    assert parsed(data)[1]['files'][0].body == b'Foo'
    assert warnings_logged() == []


def test_a_preamble_is_ignored(warnings_logged):
    data = multipart(file_part('filename="ab.txt"'), preamble=b'This is a preamble.\r\n\r\n\r\n')
    assert parsed(data)[1]['files'][0].body == b'Foo'
    assert warnings_logged() == []


def test_no_parts():
    assert parsed(b'--1234--') == ({}, {})


def test_an_empty_boundary_is_an_error():
    with pytest.raises(ValueError, match='empty multipart boundary'):
        parsed(b'----', boundary=b'""')


# --- parse_multipart_form_data: what it warns about -------------------------------------------

def test_a_body_without_its_final_boundary_gives_nothing(warnings_logged):
    data = multipart(file_part('filename="ab.txt"'))[:-2]
    assert parsed(data) == ({}, {})
    assert warnings_logged() == ['Invalid multipart/form-data: no final boundary']


@pytest.mark.parametrize('bad_part, warning', [
    (b'\r\nFoo\r\n', 'multipart/form-data missing headers'),
    (b'Content-Disposition: invalid; name="files"; filename="ab.txt"\r\n\r\nFoo\r\n',
     "Invalid multipart/form-data: a part's Content-Disposition is 'invalid', not form-data"),
    (b'Content-Type: text/plain\r\n\r\nFoo\r\n',
     "Invalid multipart/form-data: a part's Content-Disposition is '', not form-data"),
    (b'Content-Disposition: form-data; name="a"\r\n\r\nFoo',
     'Invalid multipart/form-data: no CRLF before a boundary'),
    (b'Content-Disposition: form-data; filename="ab.txt"\r\n\r\nFoo\r\n',
     'multipart/form-data value missing name'),
    (b'Content-Disposition: form-data; name=""\r\n\r\nFoo\r\n',
     'multipart/form-data value missing name'),
    (b'Content-Disposition: form-data; name="\xff"\r\n\r\nFoo\r\n',
     "Invalid multipart/form-data: 'utf-?8' codec can't decode byte 0xff .*"),
    (b' Content-Disposition: form-data; name="a"\r\n\r\nFoo\r\n',
     'Invalid multipart/form-data: first header line cannot start with whitespace'),
    (b'Content-Disposition: form-data; name="a"; filename*=nosuch\'\'x\r\n\r\nFoo\r\n',
     "Invalid multipart/form-data: unknown charset 'nosuch' in RFC 5987 parameter value"),
    (b'Content-Disposition: form-data; name="a"; filename*=x.txt\r\n\r\nFoo\r\n',
     "Invalid multipart/form-data: malformed RFC 5987 parameter value 'x.txt'"),
], ids=['missing-headers', 'not-form-data', 'no-content-disposition', 'no-crlf-before-boundary',
        'no-name', 'empty-name', 'not-utf8', 'continuation-first', 'unknown-charset',
        'malformed-rfc-5987'])
def test_a_malformed_part_is_skipped_and_the_others_kept(bad_part, warning, warnings_logged):
    # Raw parts: the bytes between one delimiter line and the next.
    good_part = b'Content-Disposition: form-data; name="good"\r\n\r\nkept\r\n'
    data = b''.join(b'--1234\r\n' + part for part in [good_part, bad_part, good_part])
    assert parsed(data + b'--1234--') == ({'good': [b'kept', b'kept']}, {})
    [logged] = warnings_logged()
    assert re.match(warning + r'\Z', logged), logged


# --- parse_body_arguments -------------------------------------------------------------------

FORM = 'application/x-www-form-urlencoded'


def body_arguments(content_type, body, headers=None):
    arguments, files = {}, {}
    parse_body_arguments(content_type, body, arguments, files, headers)
    return arguments, files


def test_a_urlencoded_body_gives_native_names_and_byte_values(warnings_logged):
    arguments, files = body_arguments(FORM + '; charset=UTF-8',
                                      b'a=1&b=x+y&a=%C3%A9&empty=&bare&%E9=%FF&&=nameless')
    assert arguments == {'a': [b'1', b'\xc3\xa9'], 'b': [b'x y'], 'empty': [b''],
                         'bare': [b''], '\xe9': [b'\xff'], '': [b'nameless']}
    assert all(type(name) is str for name in arguments) and files == {}
    assert warnings_logged() == []


def test_a_urlencoded_body_keeps_raw_bytes_and_splits_only_at_ampersands():
    assert body_arguments(FORM, b'a=\xc3\xa9;b=%FF')[0] == {'a': [b'\xc3\xa9;b=\xff']}


def test_a_urlencoded_body_that_is_not_utf8_is_refused_with_5_1s_warning(warnings_logged):
    # Tornado 5.1 on Python 3 decoded the body as UTF-8 first; tinytornado does on 2.7 too.
    assert body_arguments(FORM, b'a=1&b=\xff')[0] == {}
    [warning] = warnings_logged()
    assert warning.startswith('Invalid x-www-form-urlencoded body: ')


def test_urlencoded_fields_extend_the_arguments_given():
    arguments = {'a': [b'query']}
    parse_body_arguments(FORM, b'a=body', arguments, {})
    assert arguments == {'a': [b'query', b'body']}


@pytest.mark.parametrize('content_type', [
    'multipart/form-data; boundary=1234',
    'multipart/form-data; boundary="1234"',
    'multipart/form-data; charset=utf-8; Boundary=1234',
    'multipart/form-data;boundary=1234;',
])
def test_a_multipart_body_by_its_content_type(content_type, warnings_logged):
    data = multipart((['Content-Disposition: form-data; name="a"'], b'1'),
                     file_part('filename="ab.txt"'))
    arguments, files = body_arguments(content_type, data)
    assert arguments == {'a': [b'1']} and files['files'][0].filename == 'ab.txt'
    assert warnings_logged() == []


def test_a_quoted_boundary_may_hold_a_semicolon():
    data = multipart((['Content-Disposition: form-data; name="a"'], b'1'), boundary=b'x;y')
    assert body_arguments('multipart/form-data; boundary="x;y"', data)[0] == {'a': [b'1']}


@pytest.mark.parametrize('content_type, warning', [
    ('multipart/form-data', 'Invalid multipart/form-data: multipart boundary not found'),
    ('multipart/form-data; boundary=', 'Invalid multipart/form-data: multipart boundary not '
                                       'found'),
    ('multipart/form-data; boundary=""', 'Invalid multipart/form-data: multipart boundary not '
                                         'found'),
    ('multipart/form-data; boundary=4321', 'Invalid multipart/form-data: no final boundary'),
    ("multipart/form-data; boundary*=nosuch''1234",
     "Invalid multipart/form-data: unknown charset 'nosuch' in RFC 5987 parameter value"),
])
def test_a_multipart_body_that_cannot_be_parsed_is_a_warning(content_type, warning,
                                                             warnings_logged):
    data = multipart((['Content-Disposition: form-data; name="a"'], b'1'))
    assert body_arguments(content_type, data) == ({}, {})
    assert warnings_logged() == [warning]


@pytest.mark.parametrize('headers', [{'Content-Encoding': 'gzip'},
                                     HTTPHeaders({'content-encoding': 'gzip'})])
def test_a_body_with_a_content_encoding_is_not_parsed(headers, warnings_logged):
    assert body_arguments(FORM, b'a=1', headers) == ({}, {})
    assert warnings_logged() == ['Unsupported Content-Encoding: gzip']


@pytest.mark.parametrize('content_type', ['text/plain', '', 'application/json'])
def test_other_bodies_are_left_alone(content_type, warnings_logged):
    assert body_arguments(content_type, b'a=1', HTTPHeaders()) == ({}, {})
    assert warnings_logged() == []


# --- _parse_header ---------------------------------------------------------------------------

@pytest.mark.parametrize('line, expected', [
    ('text/html', ('text/html', {})),
    ('', ('', {})),
    ('form-data; name="a"; filename=b.txt', ('form-data', {'name': 'a', 'filename': 'b.txt'})),
    (' Form-Data ;NAME = "a" ; flag; x=', ('Form-Data', {'name': 'a', 'x': ''})),
    ('a; q="x;y=z"; r="\\"\\\\\\z"', ('a', {'q': 'x;y=z', 'r': '"\\\\z'})),
    ('a; q="open;r=1', ('a', {'q': '"open', 'r': '1'})),  # a quote never closed: no string
    ('a; q="x\\', ('a', {'q': '"x\\'})),
    ("a; t*=UTF-8''%E2%82%AC%20rates; t=plain", ('a', {'t': u'\u20ac rates'})),
    ('a; t*="UTF-8\'\'%C3%A1"', ('a', {'t': u'\xe1'})),
])
def test_parse_header(line, expected):
    assert _parse_header(line) == expected


def test_parse_header_is_linear_in_an_unclosed_quote():
    key, params = _parse_header('a; q="' + 'x' * 100000)
    assert params == {'q': '"' + 'x' * 100000}


@pytest.mark.parametrize('line, message', [
    ("a; t*=UTF-8''%FF", "can't decode byte 0xff"),
    ("a; t*=nosuch''x", "unknown charset 'nosuch'"),
    ("a; t*=UTF-8'x", 'malformed RFC 5987 parameter value'),
])
def test_parse_header_refuses_a_bad_rfc_5987_value(line, message):
    with pytest.raises(ValueError, match=message):
        _parse_header(line)
