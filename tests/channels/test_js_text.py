"""The `elicit` tool writes answers and minutes as mcp.do's JavaScript does: checked against Node itself."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elicitkit._jstext import number, stringify

NODE = shutil.which("node") or shutil.which("nodejs")

# What an answer to a restricted form can hold: flat objects of text, numbers, booleans and lists of text.
values = st.one_of(
    st.text(),
    st.booleans(),
    st.integers(min_value=-(2**60), max_value=2**60),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.text(), max_size=4),
)
answers = st.dictionaries(st.text(max_size=8), values, max_size=6)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ({"approved": True, "note": None}, '{"approved":true,"note":null}'),
        ({"b": 1, "2": 2, "1": 3, "01": 4}, '{"1":3,"2":2,"b":1,"01":4}'),
        ({"name": "café ☕", "q": 'say "hi"\n'}, '{"name":"café ☕","q":"say \\"hi\\"\\n"}'),
        (
            [1.0, 1e21, 1e20, 1.5e-7, 0.000001, -0.0, 0.1 + 0.2],
            "[1,1e+21,100000000000000000000,1.5e-7,0.000001,0,0.30000000000000004]",
        ),
        ({"big": 2**53 + 1}, '{"big":9007199254740992}'),
    ],
)
def test_answers_read_as_json_stringify_writes_them(value: Any, text: str) -> None:
    assert stringify(value) == text


@pytest.mark.skipif(NODE is None, reason="Node.js (Debian's nodejs) is not installed")
@settings(max_examples=12, deadline=None)
@given(st.lists(answers, min_size=1, max_size=50))
def test_stringify_and_number_match_node_byte_for_byte(batch: list[dict[str, Any]]) -> None:
    assert NODE is not None
    numbers = [v for answer in batch for v in answer.values() if isinstance(v, float)]
    script = (
        "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const [a,n]=JSON.parse(s);"
        "process.stdout.write(JSON.stringify([a.map(x=>JSON.stringify(x)),n.map(x=>`${x/60}`)]))})"
    )
    sent = json.dumps([batch, numbers])
    done = subprocess.run([NODE, "-e", script], input=sent, capture_output=True, text=True, check=True, timeout=30)
    texts, minutes = json.loads(done.stdout)
    assert [stringify(answer) for answer in batch] == texts
    assert [number(n / 60) for n in numbers] == minutes
