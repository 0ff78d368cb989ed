"""Statement text with its secrets masked, for wherever a statement's text is shown again (SHOW
PROCESSLIST's Info, syntax errors): `"s3.secret_key" = "…"`, `"AWS_SECRET_KEY" = "…"`,
`"property.sasl.password" = "…"` and the like keep their key and lose their value."""

from __future__ import annotations

import re

from storage.secrets import MASK, is_secret

# A quoted key, `=`, a quoted value (either quote; a backslash escapes the next character).
_PAIR = re.compile(r"""(?P<key>(["'`])(?P<name>[^"'`]{1,200})\2\s*=\s*)(?P<q>["'])(?:\\.|(?!(?P=q)).)*(?P=q)""",
                   re.DOTALL)


def mask_secrets(text: str) -> str:
    lowered = text.lower()
    if not any(word in lowered for word in _HINTS):  # the common case, and a multi-MB INSERT's: no scan
        return text

    def masked(found: re.Match[str]) -> str:
        if not is_secret(found.group("name")) and found.group("name").lower() not in _SECRET_NAMES:
            return found.group(0)
        return f"{found.group('key')}{found.group('q')}{MASK}{found.group('q')}"

    return _PAIR.sub(masked, text)


# Every secret key name (storage.secrets.is_secret, _SECRET_NAMES) contains one of these.
_HINTS = ("secret", "password", "token", "sasl")
_SECRET_NAMES = frozenset({"s3.secret_key", "aws_secret_key", "secret_key", "s3.session_token", "aws_token"})
