"""Hold-out round four: blank letters and other default-ignorable code points a reviewer cannot see.

Attacks tried (session 2026-12-03, redteam2) and whether they got through before this module's fix:

- a spec prompt padded with Hangul fillers (U+3164, U+115F, U+1160, U+FFA0), a soft hyphen and a run of
  variation selectors carrying bytes ("emoji smuggling"), shown by ``zagent agent show``: GOT THROUGH (printed
  raw, drawn as nothing) -- fixed: ``printable`` escapes Unicode's default-ignorable code points, but the emoji
  joiner and the text/emoji presentation selectors U+FE0E/FE0F
"""

import json

from .conftest import run_cli

HIDDEN = ("\u3164", "\u115f", "\u1160", "\uffa0", "\u00ad", "\u034f", "\ufe01", "\U000e0100", "\u206a")


def test_agent_show_escapes_hangul_fillers_and_variation_selector_runs(tmp_path):
    """`zagent agent show`: every hidden code point of the prompt is shown as a \\u escape."""
    spec = {"name": "Nice", "prompt": "Summarise {text}." + "".join(HIDDEN), "inputs": [{"name": "text"}],
            "outputs": [{"name": "summary"}], "parse_mode": "str", "llm": "test:offline"}
    (tmp_path / "nice.json").write_text(json.dumps(spec))
    done = run_cli("agent", "show", str(tmp_path / "nice.json"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert not any(c in done.stdout for c in HIDDEN)
    assert "\\u3164" in done.stdout and "\\uffa0" in done.stdout


def test_printable_keeps_emoji_presentation_and_round_trips_as_json():
    """``printable`` keeps U+FE0F and the emoji joiner; its escapes decode back to the same text."""
    from zagent.plugins.cliterminal import printable

    text = "a" + "".join(HIDDEN) + " \u2764\ufe0f 👨\u200d👩"
    shown = printable(text)
    assert "\u2764\ufe0f" in shown and "👨\u200d👩" in shown
    assert not any(c in shown for c in HIDDEN)
    assert json.loads(f'"{shown}"') == text
