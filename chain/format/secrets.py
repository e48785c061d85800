"""The secret gate: nothing that looks like a credential enters the chain or the workspace.

The chain is permanent and the workspace is injected into agents' prompts,
so a key that slips in cannot be taken back. ``scan(text)`` returns what
looks like a secret, with its kind and position (never its value);
``check(text)`` raises SecretError on the first finding. The rules, in the
order they are tried (specs/WORKSPACE.md section 8 lists them):

1. provider tokens with a fixed shape: AWS access key ids, GitHub, GitLab,
   Slack, Stripe, OpenAI/Anthropic, Google, SendGrid, npm, PyPI, Hugging
   Face, Twilio, DigitalOcean and Telegram bot tokens, Slack webhooks;
2. private key blocks (``-----BEGIN ... PRIVATE KEY-----``);
3. JSON Web Tokens (three base64url parts, the first two JSON objects);
4. URLs with a password (``scheme://user:password@host``);
5. password assignments (``password=...``, ``passwd: ...``, ``my password
   is ...``), unless the value is a placeholder or, in prose, a plain word;
6. high-entropy values assigned to a key, token or secret name
   (``api_key = ...``, ``SECRET_TOKEN: ...``).

Hashes, UUIDs, commit ids and URLs without credentials are not secrets on
their own: only rule 6 looks at entropy, and only for a value assigned to a
secret-like name. This module is pure (no I/O) and imports only ``re`` and
``math``, so the add path pays nothing for it but the scan.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Final

from .errors import InputError

__all__ = ["Finding", "SecretError", "check", "scan"]


class SecretError(InputError):
    """Input that looks like a secret (exit 2; nothing is written)."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing that looks like a secret: its kind and where (0-based characters)."""

    kind: str
    start: int
    end: int

    def where(self, text: str) -> str:
        """``line L, column C`` (1-based) of the finding in ``text``."""
        line = text.count("\n", 0, self.start) + 1
        column = self.start - (text.rfind("\n", 0, self.start) + 1) + 1
        return f"line {line}, column {column}"


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


#: (kind, pattern) of tokens whose shape alone gives them away.
PROVIDER_RULES: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("AWS access key id", _rx(r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![A-Z0-9])")),
    ("GitHub token", _rx(r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{36,255}(?![A-Za-z0-9_])")),
    ("GitHub token", _rx(r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{50,255}")),
    ("GitLab token", _rx(r"(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,}")),
    ("Slack token", _rx(r"(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}")),
    ("Slack webhook", _rx(r"hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{16,}")),
    ("Stripe key", _rx(r"(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("Anthropic key", _rx(r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,}")),
    (
        "OpenAI key",
        _rx(
            r"(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}"
        ),
    ),
    ("Google API key", _rx(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])")),
    ("Google OAuth secret", _rx(r"(?<![A-Za-z0-9_-])GOCSPX-[A-Za-z0-9_-]{28}")),
    ("SendGrid key", _rx(r"(?<![A-Za-z0-9])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}")),
    ("npm token", _rx(r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])")),
    ("PyPI token", _rx(r"(?<![A-Za-z0-9_-])pypi-[A-Za-z0-9_-]{50,}")),
    ("Hugging Face token", _rx(r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{34,}(?![A-Za-z0-9])")),
    ("Twilio key", _rx(r"(?<![A-Za-z0-9])SK[0-9a-f]{32}(?![A-Za-z0-9])")),
    ("DigitalOcean token", _rx(r"(?<![A-Za-z0-9_])do[opr]_v1_[a-f0-9]{64}")),
    ("Telegram bot token", _rx(r"(?<![0-9])[0-9]{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])")),
)

_PRIVATE_KEY: Final = _rx(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_JWT: Final = _rx(
    r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
)
_URL_CREDENTIALS: Final = _rx(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@\"'<>]+:([^\s@/\"'<>]+)@[^\s]")
#: ``password = value`` (assignment) or ``password is value`` (prose).
_PASSWORD: Final = _rx(
    r"(?i)\b[a-z0-9_.-]*?(?:pass(?:word|wd|phrase)?|pwd)\b[\"']?"
    r"(?:\s*(:=|=>|[:=])\s*|\s+(?:(?:is set to|was set to|is|was)\s+)?)"
    r"[\"'`]?([^\s\"'`,;]+)"
)
#: A secret-like name, then an assignment, then a value.
_ASSIGNED: Final = _rx(
    r"(?i)\b([a-z0-9_.-]*(?:api[_ -]?key|apikey|secret|token|access[_-]?key|private[_-]?key|"
    r"auth[_-]?key|client[_-]?secret|credentials?|signing[_-]?key|session[_-]?key|bearer|"
    r"[a-z0-9]_key)[a-z0-9_.-]*)\b[\"']?\s*(?::=|=>|[:=]|\s(?:is|was|to)\s)\s*[\"'`]?"
    r"(?:bearer\s+)?([A-Za-z0-9+/=_.~-]{16,})"
)
#: A name _ASSIGNED accepts holds one of these (lowercased).
_ASSIGNED_WORDS: Final = ("key", "secret", "token", "credential", "bearer")
_BEARER: Final = _rx(r"(?i)\bauthorization:\s*bearer\s+([A-Za-z0-9+/=_.~-]{16,})")

_PLACEHOLDER_WORDS: Final = (
    "your",
    "example",
    "placeholder",
    "changeme",
    "change_me",
    "replace",
    "redacted",
    "dummy",
    "sample",
    "xxxx",
    "****",
    "...",
    "<",
    ">",
    "${",
    "{{",
    "%(",
)
_PLAIN_WORD: Final = _rx(r"[a-z]+")


def _placeholder(value: str) -> bool:
    low = value.lower()
    if any(w in low for w in _PLACEHOLDER_WORDS):
        return True
    if value.startswith("$") or len(set(value)) <= 2:
        return True
    return low in {"none", "null", "true", "false", "empty", "unset", "required", "optional"}


def entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character."""
    if not value:
        return 0.0
    n = len(value)
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    return -sum(c / n * math.log2(c / n) for c in counts.values())


#: Rule 6: an assigned value at least this long, with this much entropy ...
MIN_ASSIGNED_CHARS: Final = 16
MIN_ASSIGNED_ENTROPY: Final = 3.0


def _secret_value(value: str) -> bool:
    value = value.rstrip(".")
    if len(value) < MIN_ASSIGNED_CHARS or _placeholder(value):
        return False
    # ... with letters and digits mixed (a word, a dotted name or a number alone
    # is not a key), or of very high entropy.
    h = entropy(value)
    mixed = any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    return h >= MIN_ASSIGNED_ENTROPY and (mixed or h >= 4.0)


def _password_value(value: str, prose: bool) -> bool:
    value = value.rstrip(".")
    if _placeholder(value) or len(value) < 6 or "://" in value or value.startswith("/"):
        return False
    if prose:
        # "the password is required" is prose; "the password is Tr0ub4dor&3" is not.
        return _PLAIN_WORD.fullmatch(value) is None
    return True


def scan(text: str) -> list[Finding]:
    """Everything in ``text`` that looks like a secret, in order of position."""
    found: list[Finding] = []
    # search() first: a rule that finds nothing costs one C call, no generator.
    for kind, rx in (*PROVIDER_RULES, ("private key", _PRIVATE_KEY), ("JSON web token", _JWT)):
        if rx.search(text) is not None:
            found.extend(Finding(kind, m.start(), m.end()) for m in rx.finditer(text))
    # The rules below need a word that most texts lack; each gate is implied by its pattern.
    low = text.casefold()  # as wide as the patterns' (?i): "ſ" folds to "s"
    if "://" in text:
        for m in _URL_CREDENTIALS.finditer(text):
            if not _placeholder(m.group(1)):
                found.append(Finding("password in a URL", m.start(1), m.end(1)))
    if "pass" in low or "pwd" in low:
        for m in _PASSWORD.finditer(text):
            if _password_value(m.group(2), prose=m.group(1) is None):
                found.append(Finding("password", m.start(2), m.end(2)))
    if any(w in low for w in _ASSIGNED_WORDS):
        for m in _ASSIGNED.finditer(text):
            if _secret_value(m.group(2)):
                name = f"secret assigned to {m.group(1)!s:.40}"
                found.append(Finding(name, m.start(2), m.end(2)))
    if "bearer" in low:
        for m in _BEARER.finditer(text):
            if _secret_value(m.group(1)):
                found.append(Finding("bearer token", m.start(1), m.end(1)))
    found.sort(key=lambda f: (f.start, f.end))
    # One finding per span: the first rule that matched a place names it.
    out: list[Finding] = []
    for f in found:
        if out and f.start < out[-1].end:
            continue
        out.append(f)
    return out


def check(
    text: str,
    *,
    what: str = "content",
    allow: bool = False,
    hint: str = "remove it (store where to find the secret, not the secret)",
) -> None:
    """Raise SecretError if ``text`` looks like it holds a secret (unless ``allow``)."""
    if allow:
        return
    findings = scan(text)
    if findings:
        f = findings[0]
        more = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
        raise SecretError(
            f"{what} looks like it holds a secret: {f.kind} at {f.where(text)}{more}; "
            "nothing was written",
            hint=hint,
        )
