"""Hostile strings: markup an attacker can put into a URL, a dataset column or an upload.

`PLANTED_HOST` never resolves (`.invalid`, RFC 2606); `planted_payloads(port)` adds URLs on
a 127.0.0.1 port a test can listen on, so a fetch by the browser is counted, not guessed.
Every payload has a name; tests iterate over `payloads(port)`.
"""

from __future__ import annotations

PLANTED_HOST = "planted.invalid"
MARK = "PWN"
"""Every payload contains this, so a test can find the region where payloads rendered."""


def payloads(port: int = 9) -> dict[str, str]:
    """name -> payload. `port`: a 127.0.0.1 port whose hits a test counts."""
    h = PLANTED_HOST
    lo = f"127.0.0.1:{port}"
    corpus = {
        "backtick_breakout": f"x` ![i](http://{h}/u.png) `y",
        "backtick_breakout_local": f"x` ![i](http://{lo}/bt.png) `y",
        "double_backtick": f"``a`` ![i](http://{lo}/dbt.png) ``",
        "image": f"![logo](http://{h}/x.png)",
        "image_local": f"![logo](http://{lo}/img.png)",
        "image_title": f'![a](http://{lo}/t.png "title")',
        "link": f"[Session expired: sign in again](http://{h}/login)",
        "link_local": f"[click](http://{lo}/link)",
        "reference_link": f"[ref][1]\n\n[1]: http://{h}/ref",
        "reference_image": f"![ref][img]\n\n[img]: http://{lo}/refimg.png",
        "autolink": f"<http://{h}/auto>",
        "autolink_email": "<someone@planted.invalid>",
        "bare_url": f"see http://{h}/bare now",
        "bare_https": f"https://{h}/secure?q=1&r=2",
        "www_link": f"www.{h}/w",
        "WWW_upper": f"WWW.{h}/upper",
        "email": f"mail me at victim@{h} please",
        "mailto": f"mailto:victim@{h}",
        "html_img": f'<img src="http://{lo}/html.png">',
        "html_a": f'<a href="http://{h}/a">a</a>',
        "html_iframe": f'<iframe src="http://{lo}/frame"></iframe>',
        "html_script": f"<script>fetch('http://{lo}/js')</script>",
        "html_style": f"<style>body{{background:url(http://{lo}/css.png)}}</style>",
        "html_entity": "&lt;b&gt; &amp; &#x3C;img&#x3E; &copy;",
        "latex_inline": "$x^2 + \\frac{1}{2}$",
        "latex_block": "$$\\int_0^1 f(x)\\,dx$$",
        "latex_href": f"$\\href{{http://{h}/tex}}{{click}}$",
        "dollar_amounts": "costs $5 and $10",
        "color": ":red[alarm] :blue-background[bg] :rainbow[r]",
        "badge": ":green-badge[Verified]",
        "small": ":small[tiny]",
        "material_icon": ":material/home: :material/warning:",
        "emoji_shortcode": ":smile: :+1: :warning:",
        "bidi_override": "abc\u202edcba\u202c txt.exe",
        "bidi_isolates": "\u2066left\u2069 \u2067right\u2069 \u2068first\u2069 \u200e\u200f\u061c",
        "zero_width": "Jud\u200bge\u200c9\u200d\ufeff",
        "nul_and_controls": "a\x00b\x07c\x1bd\x7fe\x85f",
        "newlines_heading": "line1\n# Heading\n## h2",
        "setext_heading": "Title\n=====",
        "blockquote": "> quoted\n>> nested",
        "list": "- item\n* star\n1. one",
        "hr": "---\n***",
        "table_pipes": "\n\n| a | b |\n|---|---|\n| ![x](http://planted.invalid/tbl.png) | c |",
        "code_fence": "```\ncode\n```\n~~~\ntilde\n~~~",
        "nested_fence": "````\n```\ninner\n```\n````",
        "indented_code": "\n\n    indented code",
        "emphasis": "**bold** __b__ *i* _i_ ~~strike~~ ~sub~",
        "javascript_url": "[x](javascript:alert(1))",
        "data_url": "![d](data:image/png;base64,iVBORw0KGgo=)",
        "data_url_link": "[d](data:text/html,<script>alert(1)</script>)",
        "percent_encoded": f"%5Bx%5D(http%3A%2F%2F{h}%2Fp) %60 ![a](http://{h}/%2e%2e/p.png)",
        "html_escaped_link": f"&#91;x&#93;(http://{h}/ent)",
        "backslashes": "\\*not\\* \\\\ \\` \\$",
        "footnote": f"text[^1]\n\n[^1]: http://{h}/foot",
        "task_list": "- [ ] todo\n- [x] done",
        "directive_container": ":::note\nbody\n:::",
        "leaf_directive": f"::video[x]{{src=http://{lo}/leaf}}",
        "curly_attrs": "{#id .class}",
        "unicode_confusable": "Ｊｕｄｇｅ９ раураl",
        "long": "A" * 5000 + f" ![x](http://{lo}/long.png)",
        "crlf_injection": "a\r\n\r\n# injected\r\n",
        "url_param_split": f"x` ![i](http://{h}/u.png) `y",
        "combining": "e\u0301\u0301\u0301 Z\u0336a\u0336",
        "surrogate_like": "\U0001f600 \U0001f4a5 emoji",
        "html_comment": "<!-- hidden --> visible",
        "typography": "a <- b -> c <-> d -- e >= f <= g ~= h :streamlit:",
        "angle_only": "a < b > c <= d",
        "real_tld": "visit evil.com/x or www.evil.com or me@evil.com or https://evil.com",
        "underscore_ids": "alltrails_find_23 __init__",
    }
    return {name: f"{MARK} {text} {MARK}" for name, text in corpus.items()}
