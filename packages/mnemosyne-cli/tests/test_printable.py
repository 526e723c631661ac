"""The escaping of output lines against its plain definition as a regular expression: the
code escapes without one, so that a plain find never imports re."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from mnemosyne_cli.output import has_control_character, printable

#: C0 and C1 controls and DEL, and (for printable) the surrogates standing for undecodable bytes.
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\udc80-\udcff]")


def reference_printable(text: str) -> str:
    def escape(match: re.Match[str]) -> str:
        code = ord(match.group())
        return f"\\x{code & 0xFF:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\x{code:02x}"

    return UNSAFE.sub(escape, text)


TEXT = st.text(
    alphabet=st.one_of(
        st.characters(codec=None, min_codepoint=0, max_codepoint=0xFF),
        st.sampled_from(["\udc80", "\udcff", "\udc7f", "\ud800", "\u2028", "\ufeff", "é", "ß", "—", "\U0001f600"]),
    ),
    max_size=20,
)


@given(TEXT)
def test_printable_and_has_control_character_equal_the_regular_expressions(text: str) -> None:
    assert printable(text) == reference_printable(text)
    assert has_control_character(text) == (CONTROL.search(text) is not None)
