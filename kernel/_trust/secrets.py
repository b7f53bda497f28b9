"""``Secret`` (a string that never shows its value), ``mask_userinfo`` (URL credentials out of text), the
secret-name rule, ``Masker`` and ``env_secrets``: what the kernel masks in what it shows (a tool's error). Plugins
import them from ``zagent.agentkit.secrets``."""

from __future__ import annotations

import functools
import re
from typing import Any, Optional

#: a setting is secret when the last word of its name is one of these (``api_key``, ``X-Auth-Token``)
SECRET_KEY_WORDS = frozenset({"key", "apikey", "secret", "token", "password", "passwd", "pwd", "authorization",
                              "auth", "cookie", "credential", "credentials", "passphrase", "pass", "pat", "jwt",
                              "secrets", "passwords"})
#: ``keys``/``tokens`` are credentials after these (``OPENAI_API_KEYS``, ``access_tokens``; not ``max_tokens``)
_PLURAL_AFTER = frozenset({"api", "access", "auth", "secret", "session", "private", "client", "bearer", "refresh",
                           "signing", "master", "bot", "encryption", "security", "license"})
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
#: a credential named in one word (``PGPASSWORD``, ``NGROK_AUTHTOKEN``, ``accesskey``, ``clientsecret``)
_ONE_WORD = re.compile(r"(?:pass(?:word|wd|phrase)|secret|(?:api|access|auth|private|secret|session|master|signing"
                       r"|client|app|bot|bearer|refresh|security|encryption)(?:key|token))$")
#: a ``token`` after these words is a pagination cursor, not a credential (``page_token``, ``NextToken``)
_CURSOR_WORDS = frozenset({"page", "next", "prev", "previous", "continuation", "pagination", "sync", "cursor"})
#: a trailing number or version (``2``, ``v2``) says which secret, not whether it is one
_VERSION = re.compile(r"^[vV]?[0-9]+$")

#: the shell's working folders: their names end like a password's, but they hold none
_SHELL_DIRS = frozenset({"PWD", "OLDPWD"})
#: ``scheme://userinfo@``; greedy to the authority's last ``@`` (a raw ``@`` in a password, as URL parsers read it);
#: also as JSON with escaped slashes writes it (``https:\/\/user:pw@host``)
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*:(?://|\\/\\/))(?:[^/?#\s'\"<>\\]|\\(?!/))+@")
#: a URL, for its query parameters named like a credential (``?key=``, ``&api-key=``, ``&sig=``)
_URL = re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s'\"<>]*\?[^\s'\"<>]*")
_PARAM = re.compile(r"([?&;])([^=&#?;\s]+)=([^&#;\s'\"<>]+)")
_SIGNATURES = frozenset({"sig", "signature"})  # a signed URL's (``X-Amz-Signature``, Azure's ``sig``)
#: a parameter that is a credential when it is the whole name: Azure Functions' function key, an OAuth code
_ALONE = frozenset({"code"})


class Secret:
    """A secret string: ``repr``/``str`` print ``'***'``, ``reveal()`` returns the value."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value

    @classmethod
    def of(cls, value: "Optional[str | Secret]") -> "Optional[Secret]":
        """Wrap ``value`` unless it is ``None``, empty or already a ``Secret``."""
        if value is None or value == "":
            return None
        return value if isinstance(value, Secret) else cls(value)

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(("Secret", self._value))

    def __bool__(self) -> bool:
        return bool(self._value)

    def __reduce__(self) -> tuple[type["Secret"], tuple[str]]:  # pickling would leak nothing new, but keep it explicit
        return (Secret, (self._value,))


def mask_userinfo(text: str) -> str:
    """``text`` with the userinfo of every URL in it replaced by ``***`` (``http://***@proxy/v1``), and the
    value of each query parameter whose name says credential (``looks_secret_param``: ``?key=***``)."""
    if "://" not in text and ":\\/\\/" not in text:
        return text
    if "@" in text:
        text = _USERINFO.sub(r"\1***@", text)
    return _URL.sub(_masked_query, text) if "?" in text and "=" in text else text


def looks_secret_param(name: str) -> bool:
    """Whether a URL query parameter named ``name`` holds a credential (``key``, ``api-key``, ``access_token``,
    ``sig``, ``code`` alone); ``api-version``, ``country-code`` or ``page`` do not."""
    return looks_secret(name) or name.rsplit("-", 1)[-1].lower() in _SIGNATURES or name.lower() in _ALONE


def _masked_query(url: "re.Match[str]") -> str:
    at = url.group(0).index("?")
    return url.group(0)[:at] + _PARAM.sub(
        lambda p: f"{p[1]}{p[2]}=***" if looks_secret_param(_unquoted(p[2])) else p[0], url.group(0)[at:])


def _unquoted(name: str) -> str:
    """A query parameter's name as the server reads it (``api%5Fkey`` is ``api_key``)."""
    if "%" not in name:
        return name
    from urllib.parse import unquote

    return unquote(name)


def looks_secret(key: str) -> bool:
    """Whether a setting named ``key`` holds a secret (``api_key``, ``Authorization``, ``X-Auth-Token``,
    ``PGPASSWORD``...); a pagination cursor (``page_token``, ``nextPageToken``) does not."""
    key = key if isinstance(key, str) else str(key)
    return _looks_secret(key) if len(key) <= 256 else _looks_secret.__wrapped__(key)  # a model's 1 MB key: not kept


@functools.lru_cache(maxsize=4096)  # names repeat (environment variables, argument names): the rule is ~10 us
def _looks_secret(key: str) -> bool:
    words = [w for w in _WORDS.findall(key) if not _VERSION.match(w)]  # ``X-Api-Key-2``, ``api_key_v2``
    if not words:
        return False
    last = words[-1].lower().rstrip("0123456789")
    if last in SECRET_KEY_WORDS:
        if last in ("pass", "pat"):  # ``DB_PASS``, ``GITHUB_PAT``; alone, a flag or a pattern
            return len(words) > 1
        return not (last == "token" and len(words) > 1 and words[-2].lower() in _CURSOR_WORDS)
    if last in ("keys", "tokens") and len(words) > 1:
        return words[-2].lower() in _PLURAL_AFTER
    return _ONE_WORD.search(last) is not None


def env_secrets() -> list[str]:
    """Values of environment variables whose names look secret (``OPENAI_API_KEY``; not ``PWD``) of at least
    ``MIN_MASK_LENGTH`` characters."""
    import os

    return [v for k, v in os.environ.items()
            if len(v) >= MIN_MASK_LENGTH and k not in _SHELL_DIRS and looks_secret(k)]


def env_masker() -> "Masker":
    """A ``Masker`` of ``env_secrets()`` (built again only when they change)."""
    return _masker_of(tuple(env_secrets()))


def error_excerpt(exc: BaseException, limit: int = 300) -> str:
    """``Type: message`` of ``exc`` with secret environment values and URL passwords masked, *then* cut to
    ``limit`` characters (cut first, the head of a key at the cut would stay): an event's ``error`` text."""
    return mask_env(f"{type(exc).__name__}: {exc}"[:limit + 4096])[:limit]  # a secret ending past the cut: masked


def mask_env(text: str) -> str:
    """``text`` with secret environment values masked as ``env_masker`` does, and long runs of them too (a
    library quoting ``OPENAI_API_KEY`` cut short or upper-cased: ``mask_pieces``); for error texts."""
    masker = env_masker()
    return mask_pieces(masker(text), masker.values)


def mask_exception(exc: Optional[BaseException], mask: Any = mask_env) -> None:
    """Mask in place the messages and notes of ``exc`` and of every exception it chains or groups (``args``, and
    ``msg``/``strerror``, which ``ImportError``/``OSError`` show, and the text an error keeps: ``_mask_kept``): an
    error raised ``from`` it shows them all."""
    import builtins

    group: Any = getattr(builtins, "BaseExceptionGroup", ())  # Python 3.11 on
    seen: set[int] = set()
    todo = [exc]
    while todo:
        exc = todo.pop()
        if exc is None or id(exc) in seen:
            continue
        seen.add(id(exc))
        text = str(exc)
        if mask(text) != text and not isinstance(exc, group):  # a group's members are masked below
            exc.args = (mask(text),)
            for attr in ("msg", "strerror"):
                if isinstance(getattr(exc, attr, None), str):
                    setattr(exc, attr, mask(getattr(exc, attr)))
        try:
            _mask_kept(exc, mask)
        except (AttributeError, TypeError):  # a library's read-only attribute
            pass
        if isinstance(getattr(exc, "__notes__", None), list):
            exc.__notes__ = [mask(n) if isinstance(n, str) else n for n in exc.__notes__]
        todo += [exc.__cause__, exc.__context__, *(exc.exceptions if isinstance(exc, group) else ())]



def _mask_kept(exc: BaseException, mask: Any) -> None:
    """Mask the server's text ``exc`` keeps whole for apps, by attribute (``errors`` imports this module): a
    ``ProviderError``'s ``body``; a ``ParseError``'s ``raw`` reply, its ``attempts`` and its ``invalid`` reasons."""
    for attr in ("body", "raw"):
        value = getattr(exc, attr, None)
        if isinstance(value, str) and value:
            setattr(exc, attr, mask(value))
    if not isinstance(getattr(exc, "raw", None), str):
        return
    attempts, invalid = getattr(exc, "attempts", None), getattr(exc, "invalid", None)
    if isinstance(attempts, list):
        setattr(exc, "attempts", [mask(a) if isinstance(a, str) else a for a in attempts])
    if isinstance(invalid, dict):
        setattr(exc, "invalid", {mask(k) if isinstance(k, str) else k: mask(v) if isinstance(v, str) else v
                                 for k, v in invalid.items()})

@functools.lru_cache(maxsize=4)
def _masker_of(values: tuple[str, ...]) -> "Masker":
    return Masker(values)


MASK = "***"
MIN_MASK_LENGTH = 6  # shorter values (dummy keys such as ``x``) are never masked
WORD_MASK_LENGTH = 8  # nor shorter letters-only ones (``ollama``)
ANYWHERE_MASK_LENGTH = 20  # longer ones are masked even inside other text; shorter ones only standing alone
_TOKEN_CHARS = r"A-Za-z0-9_\-"


def encoded_forms(value: str) -> set[str]:
    """``value`` as a server may echo it: as it is, JSON-escaped, percent-encoded (``%2B``, and ``+`` for a space,
    as a quoted URL or form body shows it) and base64-encoded (standard and URL-safe, padding left out: a debugging
    proxy showing the credential it got, alone or inside a longer text such as ``Authorization: Bearer <key>``)."""
    import base64
    import json
    from urllib.parse import quote, quote_plus

    raw = value.encode("utf-8", "surrogatepass")
    forms = {value, json.dumps(value)[1:-1], quote(value, safe=""), quote_plus(value, safe="")}
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        forms.add(encode(raw).decode().rstrip("="))
        for offset, skip in ((0, 0), (1, 2), (2, 3)):  # inside a longer text (``Bearer <key>``): each alignment
            core = encode(bytes(offset) + raw).decode()[skip:(offset + len(raw)) // 3 * 4]
            if len(core) >= ANYWHERE_MASK_LENGTH:  # the characters made of the value's bytes alone
                forms.add(core)
    return forms


#: a run of this many characters of a secret (case ignored) is masked wherever it stands (``mask_pieces``)
PIECE_LENGTH = 16
_RUN = re.compile(r"[A-Za-z0-9_\-+/=.~%]+")


def mask_pieces(text: str, values: Any) -> str:
    """``text`` with each run of token characters (letters, digits, ``_-+/=.~%``) that holds ``PIECE_LENGTH``
    consecutive characters of one of ``values``, case ignored, replaced by ``***``: a key a server echoes cut short
    (``sk-proj-abc...`` without its tail), upper-cased or glued to other text. Slower than ``Masker``: for error
    texts. A word holding an encoding no ``Masker`` lists (every byte ``%XX``, ``\\u`` escapes, HTML references,
    hex, zero-width characters between letters) is read decoded too (``mask_decoded``)."""
    known = {v.lower() for v in (x.reveal() if isinstance(x, Secret) else x for x in values)
             if isinstance(v, str) and len(v) >= MIN_MASK_LENGTH and not (len(v) < WORD_MASK_LENGTH and v.isalpha())}
    text = _mask_runs(text, [v for v in known if len(v) >= PIECE_LENGTH])
    return mask_decoded(text, known, PIECE_LENGTH, MASK) if known and ENCODED.search(text) else text


def _mask_runs(text: str, values: list[str]) -> str:
    from bisect import bisect_left

    lowered = text.lower()
    found: set[int] = set()  # where a piece starts
    for value in values:
        for i in range(len(value) - PIECE_LENGTH + 1):
            piece, at = value[i:i + PIECE_LENGTH], 0
            while (at := lowered.find(piece, at)) >= 0:
                found.add(at)
                at += 1
    if not found:
        return text
    starts = sorted(found)
    out, last = [], 0
    for run in _RUN.finditer(text):
        i = bisect_left(starts, run.start())
        if i < len(starts) and starts[i] + PIECE_LENGTH <= run.end():
            out += [text[last:run.start()], MASK]
            last = run.end()
    return "".join([*out, text[last:]])


#: a word holding one of these may be an echo encoded as no ``Masker`` lists (``mask_decoded``): ``%XX``,
#: ``\uXXXX``/``\xXX``, HTML references, zero-width characters between letters, 32+ hex digits (16 bytes), also as a
#: hex dump (``73 6b 2d``, ``73:6b:2d``, ``736b 2d72``)
ENCODED = re.compile(r"%[0-9A-Fa-f]{2}|\\[uUx][0-9A-Fa-f]{2}|&#[xX]?[0-9A-Fa-f]+;?"
                     r"|[\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]|[0-9A-Fa-f]{2}(?:[ :-]?[0-9A-Fa-f]{2}){15}")
#: a hex dump of 16 bytes or more: byte pairs, each maybe after one space, colon or dash
_DUMP = re.compile(r"[0-9A-Fa-f]{2}(?:[ :-]?[0-9A-Fa-f]{2}){15,}")
#: a word: what lies between spaces, quotes, brackets and commas (none of which an encoding above writes)
_WORD = re.compile(r"[^\s\"'<>,(){}\[\]|`]+")
_INVISIBLE = re.compile(r"[\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]")
_ESCAPE = re.compile(r"\\(?:[uU]([0-9A-Fa-f]{4})|x([0-9A-Fa-f]{2}))")
_HEX = re.compile(r"[0-9A-Fa-f]{32,}")
_TOKEN = "A-Za-z0-9_\\-"


def mask_decoded(text: str, values: Any, piece: int, mask: str) -> str:
    """``text`` with each word that, decoded, holds one of ``values`` (lower-cased; ``piece`` characters of a long
    one) replaced by ``mask``; ``text`` itself when no word holds an encoding."""
    if not ENCODED.search(text):
        return text
    longs = {v[i:i + piece] for v in values if len(v) >= piece for i in range(len(v) - piece + 1)}
    shorts = [re.compile(f"(?<![{_TOKEN}]){re.escape(v)}(?![{_TOKEN}])") for v in values if len(v) < piece]
    if not (longs or shorts):
        return text

    def one(word: "re.Match[str]") -> str:
        found = word.group(0)
        if not ENCODED.search(found):
            return found
        for decoded in decodings(found):
            if any(p in decoded for p in longs) or any(s.search(decoded) for s in shorts):
                return mask
        return found

    def dump(run: "re.Match[str]") -> str:  # across words: ``73 6b 2d ...``
        decoded = _undumped(run.group(0))
        return mask if any(p in decoded for p in longs) or any(s.search(decoded) for s in shorts) else run.group(0)

    return _WORD.sub(one, _DUMP.sub(dump, text) if " " in text else text)


def _undumped(run: str) -> str:
    """A hex dump's bytes as text (lower-cased), its separators dropped."""
    return bytes.fromhex(re.sub(r"[ :-]", "", run)).decode("latin-1").lower()


def decodings(word: str) -> list[str]:
    """``word`` decoded every way ``ENCODED`` names (lower-cased): escapes, references and ``%XX`` undone and
    invisible characters dropped; each long hex run read as bytes, from its first and its second digit, and each hex
    dump (pairs with separators)."""
    import html
    from urllib.parse import unquote

    text = _INVISIBLE.sub("", word)
    if "\\" in text:
        text = _ESCAPE.sub(lambda m: chr(int(m[1] or m[2], 16)), text)
    if "&#" in text:
        text = html.unescape(text)
    for _ in range(2):  # percent-encoded twice too (``%2573``: a URL quoted inside a URL)
        if "%" in text:
            text = unquote(text, errors="replace")
    out = [text.lower()]
    for run in _HEX.findall(text):
        for start in (0, 1):
            digits = run[start:len(run) - (len(run) - start) % 2]
            out.append(bytes.fromhex(digits).decode("latin-1").lower())
    out += [_undumped(run) for run in _DUMP.findall(text) if not _HEX.fullmatch(run)]
    return out


class Masker:
    """``Masker(values)(text)``: ``text`` with the known secret ``values`` (and their encoded forms:
    ``encoded_forms``) and URL userinfo replaced by ``***``, longest first (lengths: see the constants above)."""

    __slots__ = ("values", "_patterns")

    def __init__(self, values: Any = ()):
        forms: set[str] = set()
        for v in values:
            if isinstance(v, Secret):
                v = v.reveal()
            if not isinstance(v, str) or len(v) < MIN_MASK_LENGTH or (len(v) < WORD_MASK_LENGTH and v.isalpha()):
                continue
            forms.update(encoded_forms(v))
        self.values = tuple(sorted(forms, key=len, reverse=True))
        self._patterns = tuple(
            None if len(v) >= ANYWHERE_MASK_LENGTH
            else re.compile(f"(?<![{_TOKEN_CHARS}]){re.escape(v)}(?![{_TOKEN_CHARS}])")
            for v in self.values)

    def __call__(self, text: str) -> str:
        text = mask_userinfo(text)
        for v, pattern in zip(self.values, self._patterns):
            if v in text:
                text = text.replace(v, MASK) if pattern is None else pattern.sub(MASK, text)
        return text

    def __bool__(self) -> bool:
        return bool(self.values)

    def __repr__(self) -> str:
        return f"<Masker {len(self.values)} value(s)>"
