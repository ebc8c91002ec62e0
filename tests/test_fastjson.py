import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yupana import fastjson

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=20,
)


@given(json_values)
def test_round_trips_like_the_json_module(value):
    text = fastjson.dumps(value)
    assert json.loads(text) == value
    assert fastjson.loads(text) == json.loads(text)


@pytest.mark.parametrize("bad", ["", "{", "[1,]", "{} x", "NaN", '{"a" 1}', "\x00", "[" * 100000, '"a\x01"'])
def test_rejects_what_json_rejects_with_valueerror(bad):
    with pytest.raises(ValueError):
        fastjson.loads(bad)


def test_parses_bytes_and_surrounding_whitespace():
    assert fastjson.loads(b' \n{"a": [1, 2.5, null, true]}\t') == {"a": [1, 2.5, None, True]}


def test_refuses_non_finite_floats_and_foreign_types():
    with pytest.raises(ValueError):
        fastjson.dumps(float("nan"))
    with pytest.raises(ValueError):
        fastjson.dumps({1: "x"})
    with pytest.raises(ValueError):
        fastjson.dumps(object())
