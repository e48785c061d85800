"""The secret gate: nothing that looks like a credential enters the chain or the workspace.

The chain is permanent and the workspace is injected into agents' prompts,
so a key that slips in cannot be taken back. ``scan(text)`` returns what
looks like a secret, with its kind and position (never its value);
``check(text)`` raises SecretError on the first finding.

It decides on structure, not on lead phrases (specs/WORKSPACE.md section 8
lists the rules):

1. **shapes that give themselves away**: provider tokens with a fixed
   prefix (about forty: cloud, code hosts, chat services, payment, AI,
   observability), private key blocks, JSON Web Tokens, webhook URLs that
   carry their secret;
2. **credentials in transport**: a URL of any scheme with a password
   (``scheme://user:password@``, the user may be empty), HTTP Basic
   authorization (a base64 value that decodes to ``user:password``), a
   bearer token, ``curl -u user:password``;
3. **a secret name near a value of secret shape**: a name that means
   password, key, token, secret or credential, in one of twenty-odd
   languages or as an identifier (``DB_PASSWORD``, ``apiKey``,
   ``AccountKey``, ``--api-key``), followed within the same clause by a
   value. How close, and what shape the value must have, depends on how
   it is tied to the name: right after an assignment or a copula ("is",
   "=", ":", "est", "ist", "是", ...), quoted or bracketed, or last in the
   clause, a value needs only to look made up (letters with digits or
   symbols); anywhere else in the clause it must look random (16+
   characters, high entropy, mixed classes). A value may also come before
   the name ("use X as the api token", "X (the router password)");
4. **a password-shaped token** anywhere: upper and lower case, digits and
   a symbol, 8 to 40 characters;
5. **credentials in structure**: ``user / password`` pairs, key files,
   PINs, CSV columns, SQL ``VALUES``, cookies, tools' password arguments;
6. **credentials in code and program output**: a login call's positional
   password, ``user:password@host`` DSNs, a value alone on the line after
   one that names a secret (``vault kv get -field=password``), recovery
   codes.

What is not a secret: placeholders (``<your key>``, ``${VAR}``, ``$VAR``,
``xxxx``, ``changeme``, documentation's ``EXAMPLE`` keys), environment and
code references (``os.environ[...]``, ``getpass()``, ``{{ vault.x }}``),
digests, UUIDs and addresses that no secret name claims, public keys, and
prose about passwords with no value in it. This module is pure (no I/O)
and imports only ``re``, ``math`` and ``base64``.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from bisect import bisect_left
from dataclasses import dataclass
from itertools import islice
from typing import Any, Final

from .errors import InputError
from .patterns import lazy

__all__ = ["Finding", "SecretError", "check", "entropy", "scan"]


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


#: Patterns are compiled at their first use: the module's hundred or so took 17 ms to
#: compile at import, paid by every command that imports the writer (the session-start
#: hook among them) though only a write scans.
_rx = lazy


def _words(text: str) -> list[str]:
    """The words of ``text`` (lists of words written as prose, one per line of source)."""
    return text.split()


# -- 1. shapes ------------------------------------------------------------------------------

_B: Final = r"(?<![A-Za-z0-9_-])"  # the token starts here, not inside a longer word
_E: Final = r"(?![A-Za-z0-9_-])"

#: (kind, pattern) of tokens whose shape alone gives them away.
PROVIDER_RULES: Final[tuple[tuple[str, re.Pattern[str]], ...]] = tuple(
    (kind, _rx(pattern))
    for kind, pattern in (
        ("AWS access key id", r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![A-Z0-9])"),
        ("GitHub token", _B + r"gh[pousr]_[A-Za-z0-9]{36,255}" + _E),
        ("GitHub token", _B + r"github_pat_[A-Za-z0-9_]{50,255}"),
        ("GitLab token", _B + r"gl(?:pat|dt|rt|ptt|cbt|soat|ft)-[A-Za-z0-9_-]{20,}"),
        ("Slack token", r"(?<![A-Za-z0-9])xox[abposre]-[A-Za-z0-9-]{10,}"),
        ("Slack token", r"(?<![A-Za-z0-9])xapp-\d-[A-Z0-9]+-\d+-[a-f0-9]{32,}"),
        (
            "Slack webhook",
            r"hooks\.slack\.com/(?:services|workflows|triggers)/T[A-Z0-9]+/[A-Za-z0-9/]{20,}",
        ),
        ("Discord webhook", r"discord(?:app)?\.com/api/webhooks/\d{5,}/[A-Za-z0-9_-]{30,}"),
        ("Teams webhook", r"\.webhook\.office\.com/webhookb2/[A-Za-z0-9@/-]{40,}"),
        (
            "Discord bot token",
            _B + r"[MNO][A-Za-z0-9_-]{22,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}" + _E,
        ),
        ("Telegram bot token", r"(?<![0-9])[0-9]{8,10}:AA[A-Za-z0-9_-]{33}" + _E),
        ("Stripe key", _B + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
        ("Stripe webhook secret", _B + r"whsec_[A-Za-z0-9]{24,}"),
        ("Square token", _B + r"sq0(?:atp|csp|idp)-[A-Za-z0-9_-]{22,}"),
        ("Shopify token", _B + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _E),
        ("Anthropic key", _B + r"sk-ant-[A-Za-z0-9_-]{20,}"),
        ("OpenAI key", _B + r"sk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}"),
        ("Google API key", _B + r"AIza[0-9A-Za-z_-]{35}" + _E),
        ("Google OAuth secret", _B + r"GOCSPX-[A-Za-z0-9_-]{28}"),
        ("Google OAuth token", _B + r"ya29\.[A-Za-z0-9_-]{30,}"),
        ("SendGrid key", r"(?<![A-Za-z0-9])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"),
        ("Mailgun key", _B + r"key-[a-f0-9]{32}" + _E),
        ("Mailchimp key", r"(?<![A-Za-z0-9])[a-f0-9]{32}-us[0-9]{1,2}" + _E),
        ("npm token", _B + r"npm_[A-Za-z0-9]{36}" + _E),
        ("PyPI token", _B + r"pypi-[A-Za-z0-9_-]{50,}"),
        ("RubyGems key", _B + r"rubygems_[a-f0-9]{48}" + _E),
        ("Hugging Face token", _B + r"hf_[A-Za-z0-9]{34,}" + _E),
        ("Replicate token", _B + r"r8_[A-Za-z0-9]{37}" + _E),
        ("Groq key", _B + r"gsk_[A-Za-z0-9]{48,}" + _E),
        ("Twilio key", r"(?<![A-Za-z0-9])SK[0-9a-f]{32}" + _E),
        ("DigitalOcean token", _B + r"do[opr]_v1_[a-f0-9]{64}"),
        ("Atlassian token", _B + r"ATATT3[A-Za-z0-9_=-]{50,}"),
        ("Linear key", _B + r"lin_(?:api|oauth)_[A-Za-z0-9]{40}" + _E),
        ("Notion token", _B + r"(?:ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})" + _E),
        ("Postman key", _B + r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}" + _E),
        (
            "Grafana token",
            _B + r"(?:glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2})",
        ),
        ("Vault token", _B + r"hv[sbr]\.[A-Za-z0-9_-]{24,}"),
        ("Doppler token", _B + r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}"),
        ("Databricks token", _B + r"dapi[a-f0-9]{32}(?:-\d)?" + _E),
        ("Pulumi token", _B + r"pul-[a-f0-9]{40}" + _E),
        ("Supabase token", _B + r"sbp_[a-f0-9]{40}" + _E),
        ("New Relic key", _B + r"NR(?:AK|AA|II)-[A-Z0-9]{27}" + _E),
        ("Sentry token", _B + r"sntr[ys]s?_[A-Za-z0-9_=-]{40,}"),
        ("age secret key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
        ("Heroku key", _B + r"HRKU-[A-Za-z0-9_-]{40,}"),
        ("Figma token", _B + r"figd_[A-Za-z0-9_-]{40,}"),
        ("Fly.io token", _B + r"fo1_[A-Za-z0-9_-]{40,}"),
        ("Terraform Cloud token", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}"),
        ("Alibaba key id", r"(?<![A-Za-z0-9])LTAI[A-Za-z0-9]{12,20}" + _E),
        ("Azure storage key", r"(?i:AccountKey)=[A-Za-z0-9+/]{80,}={0,2}"),
        ("Azure AD client secret", _B + r"[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}" + _E),
    )
)

_PRIVATE_KEY: Final = _rx(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_JWT: Final = _rx(
    r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
)

# -- 2. transport ---------------------------------------------------------------------------

#: ``scheme://[user]:password@host``: the user part may be empty (``redis://:pw@``).
_URL_CREDENTIALS: Final = _rx(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@\"'<>]*:([^\s@/\"'<>]+)@[^\s]")
#: ``https://TOKEN@host``: a token standing as the URL's user (a Sentry DSN, a git remote).
_URL_TOKEN: Final = _rx(r"\b[A-Za-z][A-Za-z0-9+.-]*://([A-Za-z0-9_.~-]{16,})@[^\s]")
#: A Sentry DSN's key stands as the user, and Sentry documents it as public.
_PUBLIC_DSN_HOSTS: Final = ("sentry.io",)
_HOST: Final = _rx(r"[A-Za-z0-9.-]+")
_BASIC: Final = _rx(r"(?i)\bbasic\s+([A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])")
_BEARER: Final = _rx(r"(?i)\b(?:authorization:\s*)?bearer\s+([A-Za-z0-9+/=_.~-]{16,})")
#: An Azure shared access signature (or any signed URL's) ``sig=`` query value.
_SAS_SIG: Final = _rx(r"[?&](?:sig|X-Amz-Signature|Signature)=([A-Za-z0-9%+/=_-]{20,})")
_CURL_USER: Final = _rx(r"(?:^|\s)(?:-u|--user)(?:\s+|=)?[\"']?([^\s:\"'$]+):([^\s\"']+)")

# -- 3. names and values --------------------------------------------------------------------

#: Words (any case) that name a password, in the languages people write to agents.
_PASSWORD_WORDS: Final = (
    r"pass(?:word|wd|phrase|code)s?|pwd|(?-i:PIN)|pin[ -]?code|"
    r"passw(?:o|ö)rt(?:e?s)?|kennwort|mot de passe|mots de passe|contrase(?:ñ|n)a|"
    r"claves?|senha|palavra[- ]passe|psk|wpa[ -]?key|(?:recovery|backup)[ -]codes?|"
    r"wachtwoord|l(?:ö|o)senord(?:et)?|passord(?:et)?|adgangskode(?:n)?|"
    r"salasana|has(?:ł|l)o|heslo|jelsz(?:ó|o)|parola|parolă|пароль|паролем|пароля|"
    r"κωδικός|(?:ş|s)ifre(?:m|si|niz)?|mật khẩu|kata sandi|sandi|كلمة المرور|סיסמה|पासवर्ड"
)
#: Words that name a key, token, secret or credential.
_KEY_WORDS: Final = (
    r"(?:api|access|secret|private|auth|signing|session|client|master|encryption|deploy|"
    r"app|bot|admin|service|account|license|licence|webhook|refresh|personal access|"
    r"bearer|oauth)[ _-]?(?:key|token|secret)s?|"
    r"tokens?|secrets?|credentials?|creds|keys?|api[ -]?keys?|"
    r"(?-i:PATs?)|(?:access|unlock|door|alarm|entry|security|verification|gate)[ -]codes?|"
    r"seed(?: phrase)?|mnemonic|recovery phrase|otp secret|totp secret|"
    r"jetons?|cl(?:é|e)s?|chaves?|schl(?:ü|u)ssel|sleutel|nyckel(?:n)?|n(?:ø|o)gle|"
    r"avain|klucz|kl(?:í|i)č|kulcs|chiave|ключ|токен|секрет|secreto|segredo|geheimnis|"
    r"segreto|sekret"
)
#: Scripts written without spaces: the name may touch the words around it.
_CJK_WORDS: Final = (
    r"パスワード|暗証番号|密码|密碼|口令|비밀번호|암호|秘密鍵|秘密|密钥|令牌|キー|トークン|"
    r"シークレット|토큰|비밀키|API\s?キー|API\s?密钥"
)
#: Words that name a password only when a value is tied to them ("pass: x", "pw is x").
_WEAK_WORDS: Final = r"pass|pw|login|creds|logins"
#: Scripts where an article or preposition joins the word: the name may follow a letter.
_JOINED_WORDS: Final = r"סיסמ(?:ה|א|ת)|סיסמאות|كلمة المرور|كلمة السر|رمز المرور"
_PROSE_NAME: Final = _rx(
    rf"(?i)(?<![\w?&=/.$])(?P<pw>{_PASSWORD_WORDS})(?![\w-])"
    rf"|(?<![\w?&=/.$])(?P<key>{_KEY_WORDS})(?![\w-])"
    rf"|(?<![\w?&=/.$-])(?P<weak>{_WEAK_WORDS})(?![\w-])"
    rf"|(?P<cjk>{_CJK_WORDS}|{_JOINED_WORDS})"
)
#: ``public key``, ``publishable key``: named, and not secret.
_PUBLIC_BEFORE: Final = _rx(r"(?i)(?:public|publishable|verify|verification|host|gpg)[ _-]?$")

#: An identifier assigned a value: ``DB_PASSWORD=``, ``"apiKey": ``, ``AccountKey=``.
_ASSIGNMENT: Final = _rx(
    r"(?<![\w.-])(?P<name>[A-Za-z_][A-Za-z0-9_.-]{1,63})[\"']?\]?[ \t]*"
    r"(?P<op>:=|=>|=(?!=)|:(?![/:]))[ \t]*"
)
#: A command-line flag with its value: ``--password X``, ``--api-key=X``, ``-pX`` (mysql).
_FLAG: Final = _rx(
    r"(?<![\w-])(?:--(?P<long>[A-Za-z][A-Za-z0-9-]{1,40})(?:=|[ \t]+)|-p(?=[^\s-]))"
    r"(?P<value>[^\s]+)"
)
#: ``echo 'X' | sudo -S ...``: a value piped into a command that reads a password.
_PIPED: Final = _rx(
    r"\b(?:echo|printf)\s+(?:-n\s+)?(?P<value>'[^'\n]+'|\"[^\"\n]+\"|\S+)\s*\|\s*[^\n|]*?"
    r"(?:\bsudo\s+-S\b|--password-stdin\b|--stdin\b|\bchpasswd\b|\bpasswd\b)"
)
_MYSQL_LIKE: Final = _rx(r"(?i)\b(?:mysql|mysqldump|mariadb|mysqladmin)\b")
_DOCKER_P: Final = _rx(r"(?i)\blogin\b[^\n]*?\s-p[ \t]+(?P<value>[^\s]+)")

#: Words that tie a name to its value ("the password IS x"), by language.
_COPULAS: Final = frozenset(
    _words(
        "is was are were be = : := => -> → — – - ist lautet war sind est était es era son é "
        "era são è sono är var er var on oli jest je je je van vagy olur dır dir это был была "
        "является 是 为 為 は 는 은 이 가 です là adalah ialah היא הוא है هي هو είναι ni ay "
        "este sunt it's it’s its"
    )
)
#: A value is not taken from these (technical words with digits, not secrets).
_BENIGN_VALUES: Final = frozenset(
    _words(
        "1password 2fa mfa totp oauth2 sha1 sha-1 sha256 sha-256 sha512 sha-512 md5 argon2 "
        "argon2id pbkdf2 bcrypt scrypt hmac-sha256 aes128 aes256 aes-256 aes-256-gcm rsa2048 "
        "rsa4096 ed25519 x25519 base64 base32 utf-8 utf8 ipv4 ipv6 http2 http/2 x509 x.509 "
        "pkcs12 pkcs8 s3 ec2 k8s v1 v2 v3 tls1.2 tls1.3"
    )
)

_PLACEHOLDER_WORDS: Final = (
    "your",
    "example",
    "placeholder",
    "changeme",
    "change_me",
    "change-me",
    "replace",
    "redacted",
    "dummy",
    "sample",
    "xxxx",
    "****",
    "...",
    "…",
    "<",
    ">",
    "${",
    "{{",
    "%(",
    "fake",
    "foobar",
    "secret_here",
    "key_here",
    "token_here",
    "hidden",
    "masked",
    "omitted",
    "removed",
    "n/a",
    "tbd",
    "todo",
    "replace_me",
)
_PLAIN_WORD: Final = _rx(r"[^\W\d_]+")
_NO_SPACE: Final = _rx(r"[^\s`|]+")
_ENV_NAME: Final = _rx(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_CODE: Final = _rx(
    r"[(){}\[\]`]|^(?:self|this|os|env|process|config|settings|cfg|var|local|module|data|"
    r"vars|params|args|inputs|secrets|steps|needs|matrix|ctx|context|props|opts|options|"
    r"values|Values|each)\.|\.get$|^[A-Za-z_][A-Za-z_]*(?:\.[A-Za-z_][A-Za-z_]*){1,5}$"
)
#: Trimmed off a value's ends: quotes, brackets, and sentence punctuation.
_TRIM_LEFT: Final = "\"'`([{<«“‘=:：*"
_TRIM_RIGHT: Final = "\"'`)]}>»”’,;.:!?*"
_QUOTES: Final = "\"'[«“‘"  # a backtick is code, a parenthesis an aside


def _placeholder(value: str) -> bool:
    low = value.lower()
    if any(w in low for w in _PLACEHOLDER_WORDS):
        return True
    if value.startswith(("$", "%", "@")) or len(set(value)) <= 2:
        return True
    return low in _NOT_VALUES


#: Words that stand where a value would (``user:password@``, ``password: required``).
_NOT_VALUES: Final = frozenset(
    _words(
        "none null nil true false empty unset required optional password passwd pass pwd pw "
        "secret token key apikey api_key user username value string str int bytes passphrase "
        "passcode credentials creds"
    )
)


def entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character."""
    if not value:
        return 0.0
    n = len(value)
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    return -sum(c / n * math.log2(c / n) for c in counts.values())


#: A random-looking value: at least this long, with this much entropy ...
MIN_ASSIGNED_CHARS: Final = 16
MIN_ASSIGNED_ENTROPY: Final = 3.0
_RANDOM_CHARS: Final = _rx(r"[A-Za-z0-9+/=_.~%:-]+")
#: A path or a file name (~/.ssh/id, logs/2026/11/, key.pem), not a value.
_PATHISH: Final = _rx(
    r"(?:~|\.{1,2})?/.*|.*\.(?:pem|key|pub|txt|json|ya?ml|toml|env|conf|cfg|ini|md|crt|p12|pfx)"
    r"|[a-z0-9_-]+(?:/[a-z0-9_.-]*)+"
)
#: Versions and quantities (v2.4.1, 1.2.3-rc1, 32-byte), never a secret value.
_VERSIONISH: Final = _rx(
    r"v?\d+(?:\.\d+)+[a-z0-9.+-]*|\d+[-_]?(?:[a-z]{1,6}|[A-Z]{1,6})"
    r"|\d+(?:\.\d+)?[a-zA-Z%]{0,3}/[a-zA-Z]{1,4}"
)


def _random_value(value: str) -> bool:
    """16+ characters of a key's alphabet, high entropy, letters and digits mixed."""
    value = value.rstrip(".")
    if len(value) < MIN_ASSIGNED_CHARS or _placeholder(value) or not _RANDOM_CHARS.fullmatch(value):
        return False
    if value.lower().startswith(_PUBLIC_PREFIXES + _REFERENCES) or _EMAIL.fullmatch(value):
        return False
    if "://" in value or _PATHISH.fullmatch(value) or "=" in value.rstrip("="):
        return False  # a path, a URL, or name=value: not one value
    if _WORDS_AND_NUMBERS.fullmatch(value) and not _WORDS_NUMBER.fullmatch(value):
        return False  # 64-hex-character, max-retries-3: words (maple-cobalt-151 is a passphrase)
    h = entropy(value)
    if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
        return h >= MIN_ASSIGNED_ENTROPY
    # no digits: only a long mixed-case run with no path or name structure
    return (
        len(value) >= 24
        and h >= 4.0
        and any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and not any(c in "./" for c in value)
    )


#: Values that point at a secret kept elsewhere (env:NAME, vault:path, op://...).
_WORDS_NUMBER: Final = _rx(r"[a-z]{3,}(?:[-_.][a-z]{3,})+[-_.]?\d{2,}")
_WORDS_AND_NUMBERS: Final = _rx(r"(?:[a-z]+|\d+)(?:[-_.](?:[a-z]+|\d+))+")
_REFERENCES: Final = tuple(
    _words(
        "env: vault: secret: secrets: file: ref+ op:// aws-sm: gcp-sm: azure-kv: keyring: "
        "sops: cmd: exec:"
    )
)
_EMAIL: Final = _rx(r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}")

#: Values that start so are digests, public keys, addresses or ids, not secrets.
_PUBLIC_PREFIXES: Final = (
    "ed25519:",
    "b3:",
    "sha1:",
    "sha256:",
    "sha512:",
    "sha256-",
    "sha384-",
    "sha512-",
    "md5:",
    "ssh-",
    "ecdsa-",
    "age1",
    "npub",
    "did:",
    "urn:",
    "arn:",
    "sha256=",
    "blake3:",
)


def _made_up(value: str, *, quoted: bool = False) -> bool:
    """A value someone chose as a password: not a plain word, a name, code or a reference."""
    if value.lower() in _BENIGN_VALUES:
        return False
    if len(value) < 6 or _placeholder(value):
        return (
            quoted
            and len(value) >= 4
            and not _placeholder(value)
            and _NO_SPACE.fullmatch(value) is not None
        )
    if "://" in value or value.startswith(("/", "~/", "./", "-")) or _CODE.search(value):
        return False
    if value.lower().startswith(_PUBLIC_PREFIXES + _REFERENCES) or _EMAIL.fullmatch(value):
        return False
    if _PATHISH.fullmatch(value) or _VERSIONISH.fullmatch(value):
        return False
    if "=" in value.rstrip("=") or ":" in value:
        return False  # type=password, a:b: an attribute or a pair, not one value
    if _ENV_NAME.fullmatch(value):
        return False
    if any(c.isspace() for c in value):
        return False
    letters = any(c.isalpha() for c in value)
    digits = any(c.isdigit() for c in value)
    symbols = any(not c.isalnum() and c not in "-_./'’" for c in value)
    if quoted:
        return not value.replace("_", "").isdigit() or len(value) >= 6
    if letters and (digits or symbols):
        return True
    # no letters: a long run of digits and symbols is a passcode; a number alone is not.
    return not letters and symbols and digits and len(value) >= 8


_UNIT_OR_VERSION: Final = _rx(
    r"\d+[-_]?(?:[a-z]{1,6}|[A-Z]{1,6})|[a-z]{1,8}(?:-[a-z]{1,8})*[-_]?\d{1,4}[a-z]?"
    r"|[A-Z]{1,8}[-_]?\d{1,4}[A-Z]?"
    r"|0x[0-9a-fA-F]+"
)


def _technical(value: str) -> bool:
    """A word with digits that names a thing: 32-byte, sha256, arm64, 0x0A, 2FA."""
    return value.lower() in _BENIGN_VALUES or _UNIT_OR_VERSION.fullmatch(value) is not None


def _pin(value: str) -> bool:
    return value.isdigit() and 4 <= len(value) <= 8


#: An identifier ending so describes a secret (its length, lifetime, where it is), or
#: names something else: it does not hold one.
_NOT_SECRET_SUFFIXES: Final = tuple(
    _words(
        "_name name _id _ttl _length _len _days _size _header _type _file _path _url _env "
        "_var _count _policy _format _helper _store _hint _prompt _algorithm _hash _mode "
        "_strategy _provider _backend _scheme _kind _method _version _required _enabled "
        "_minutes _seconds _expiry _timeout _dir _rotation _reset_token _stdin _cmd _command "
        "_from _source"
    )
)


#: An identifier starting so is a setting about a secret (``--ask-password``,
#: ``no_password``, ``max_token``), not a secret.
_NOT_SECRET_PREFIXES: Final = tuple(
    _words(
        "public publishable max_ min_ num_ ask_ no_ prompt_ use_ require_ requires_ enable_ "
        "disable_ allow_ show_ is_ has_ read_ get_ gen_ generate_ reset_ forgot_ "
        "forgotten_ change_"
    )
)


_PASSWORD_STEM: Final = _rx("password|passwd|passphrase|passcode")
_KEY_STEM: Final = _rx(
    "secret|token|apikey|accesskey|privatekey|credential|signingkey|authkey|sessionkey|bearer"
)


def _ident_kind(name: str) -> str | None:
    """ "password", "key" or None: what an identifier names (DB_PASSWORD, apiKey, sig)."""
    low = name.lower().replace("-", "_")
    if low.endswith(_NOT_SECRET_SUFFIXES):
        return None
    if low.startswith(_NOT_SECRET_PREFIXES):
        return None
    flat = low.replace("_", "").replace(".", "")
    if (
        _PASSWORD_STEM.search(flat)
        or flat in ("pass", "pwd", "pw", "dbpass", "pin")
        or flat.endswith("psk")
        or flat.endswith(("pass", "pwd"))
    ):
        return "password"
    if _KEY_STEM.search(flat):
        return "key"
    if flat.endswith(("key", "auth")):
        return "key"
    return None


def _wide(c: str) -> bool:
    """A character of a script written without spaces (it ends an ASCII value)."""
    return "\u3000" <= c <= "\ud7af" or "\uff01" <= c <= "\uff60"


def _value_at(text: str, start: int, stop: int | None = None) -> tuple[str, int, int, bool]:
    """(value, start, end, quoted) of the value that begins at ``start`` (before ``stop``)."""
    stop = len(text) if stop is None else stop
    i = start
    quoted = False
    while i < stop and text[i] in _TRIM_LEFT:
        if text[i] in "<{":
            return "", start, start, False  # <your token>, {{ vault.x }}: a placeholder
        quoted = quoted or text[i] in _QUOTES
        i += 1
    if quoted and i > start and text[i - 1] in "\"'`«“‘":
        close = {"«": "»", "“": "”", "‘": "’"}.get(text[i - 1], text[i - 1])
        j = text.find(close, i, stop)
        if j != -1 and "\n" not in text[i:j]:
            return text[i:j], i, j, True
    j = i
    while j < stop and not text[j].isspace() and text[j] not in ";," and not _wide(text[j]):
        j += 1
    while j > i and text[j - 1] in _TRIM_RIGHT:
        j -= 1
    return text[i:j], i, j, quoted


_CLAUSE_END: Final = _rx(r"\n|\||[.!?。！？](?:\s|$)")
#: What separates a clause's words: spaces, and the scripts written without them.
_WORD: Final = _rx(
    r"[^\s\u3000-\u303f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uff01-\uff0f\uff1a-\uff20]+"
)
_WINDOW_WORDS: Final = 8
#: Rule 3 reads a name's clause at most this many characters on either side: a clause
#: that long is not prose around a value, and reading it whole from every name cost
#: O(n^2) on a text naming a secret word throughout (a minified file, a pasted config).
_REACH: Final = 512
_COMPARISONS: Final = frozenset(_words("<= >= == != === !== < >"))
#: Lowercase words joined by hyphens or underscores: a name, never a key.
_WORDS_JOINED: Final = _rx(r"[a-z]+(?:[-_][a-z]+)+")
#: An unquoted value that is a variable or a type: ``passphrase_source``, ``PassphraseSource``.
_IDENTIFIER: Final = _rx(r"_?[a-z]+(?:_[a-z]+)+|[A-Z][a-z]+(?:[A-Z][a-z]+)+")
_LAST_IDENT: Final = _rx(r"[^\w.-]")
_FIELD: Final = _rx(r"[A-Za-z_][\w.-]{1,63}")
#: "changed to x", "is now x": the words before a value that replaced another.
_CHANGED: Final = frozenset(["changed", "set", "reset", "updated", "rotated", "moved", "is", "was"])


#: Names so common in other senses ("the key insight", "the S3 key prefix") that only a
#: random-looking value is taken as theirs.
_GENERIC_KEYS: Final = frozenset(
    _words(
        "key keys clé cle clés cles chave chaves schlüssel schlussel sleutel nyckel nyckeln "
        "nøgle nogle avain klucz klíč klic kulcs chiave ключ キー 키 seed"
    )
)
#: A word between the name and a value that the value belongs to instead ("the secret is
#: stored as a hash: X", "the key id is X"): the clause stops being about the secret.
_OTHER_THING: Final = frozenset(
    _words(
        "hash hashes hashed digest checksum fingerprint id ids uuid prefix name names path "
        "file field uid version hint length format type url endpoint header id: hash: digest: "
        "fingerprint: checksum:"
    )
)
_SEED_WORDS: Final = _rx(r"(?:\s+[a-z]{3,8}){12,24}\b")


class _Marks:
    """Where a pattern's matches are in a text, found once: a rule that looks for the
    clause around each name finds it by bisection, not by searching the text again from
    each name (a text naming a secret word at every line cost O(n^2): 3 s for 20 KB)."""

    __slots__ = ("ends", "starts")

    def __init__(self, pattern: re.Pattern[str], text: str) -> None:
        found = list(pattern.finditer(text))
        self.starts = [m.start() for m in found]
        self.ends = [m.end() for m in found]


def _clause_end(text: str, at: int, marks: _Marks) -> int:
    """Where the clause that goes on at ``at`` ends: ``_CLAUSE_END.search(text, at)``'s
    start, else the text's end."""
    i = bisect_left(marks.starts, at)
    if i and marks.ends[i - 1] > at:  # a mark began before ``at`` and runs past it
        end = _CLAUSE_END.search(text, at)
        return end.start() if end else len(text)
    return marks.starts[i] if i < len(marks.starts) else len(text)


def _named(text: str, found: list[Finding]) -> None:
    """Rule 3 for names in prose (any language): a value of secret shape in the clause."""
    ends: _Marks | None = None  # each found once, when first needed
    starts: _Marks | None = None
    for m in _PROSE_NAME.finditer(text):
        if m.group("key") and _PUBLIC_BEFORE.search(text, max(0, m.start() - 14), m.start()):
            continue
        joined = bool(m.group("cjk"))
        generic = m.group(0).lower() in _GENERIC_KEYS
        if m.group(0).lower() in ("seed phrase", "mnemonic", "recovery phrase", "seed"):
            run = _SEED_WORDS.match(text, _skip_tie(text, m.end()))
            if run is not None:
                found.append(Finding("seed phrase", run.start() + 1, run.end()))
                continue
        weak = bool(m.group("weak"))  # "pass", "pw", "login": only with a value tied to them
        password = bool(m.group("pw")) or weak or (joined and _cjk_password(m.group("cjk")))
        after = text[m.end() : m.end() + 1]
        if after and not (after.isspace() or after in ":=：,)'\"") and not joined:
            continue  # part of a longer thing: token+limits, key.pem, secret/path
        if _DENIED.search(text, max(0, m.start() - 16), m.start()):
            continue
        if not generic:
            starts = starts or _Marks(_CLAUSE_START, text)
            _named_before(text, m, password, found, starts)
        ends = ends or _Marks(_CLAUSE_END, text)
        # the clause goes on to its end mark, and at most _REACH characters
        clause_end = min(_clause_end(text, m.end(), ends), m.end() + _REACH)
        # the words a value may be among, and one more: whether the clause has more
        every = list(islice(_WORD.finditer(text, m.end(), clause_end), _WINDOW_WORDS + 1))
        # tied: a copula or an assignment stands between the name and the next word
        tied = joined or text[m.end() : m.end() + 2].lstrip(" \t")[:1] in (":", "=", "：")
        previous = ""
        for n, w in enumerate(every[:_WINDOW_WORDS]):
            raw = w.group(0)
            low = raw.lower().rstrip(":")
            if (
                low in _COPULAS
                or raw in ("/", "->", "=>")
                or (low in ("to", "now") and previous in _CHANGED)
            ):
                tied, previous = True, low
                continue
            previous = low
            if low.rstrip(":") in _OTHER_THING or raw in _COMPARISONS:
                break
            field = _LAST_IDENT.split(raw[:-1].strip("\"'"))[-1]
            keyish = raw[:1] in "\"'" or "_" in field or field != raw[:-1]
            if n and raw.endswith((":", "=")) and keyish and _FIELD.fullmatch(field):
                break  # the next field's name ("username": ...): its value is not this one's
            if weak and not tied:
                tied = raw.endswith((":", "="))
                continue
            value, vs, ve, quoted = _value_at(text, w.start(), clause_end)
            if not value:
                continue
            # last in the clause and close to the name: "şifrem X", "мой пароль от почты X"
            last = n == len(every) - 1 and n < 4
            if _random_value(value):
                found.append(Finding(_kind(password), vs, ve))
                break
            if generic:
                tied = raw.endswith((":", "="))
                continue  # "the feature flag key is new-checkout-v2": only a random value
            if not password and _WORDS_JOINED.fullmatch(value):
                break  # apiKey: "public-web-key-see-docs": words, not a key
            if quoted and _psql_variable(text, vs):
                break
            if (tied or last or quoted) and (
                _made_up(value, quoted=quoted and tied) or (password and tied and _pin(value))
            ):
                if not tied and (len(value) < 7 or _technical(value)):
                    break  # last in the clause, untied: "temporary token abc123" is prose
                found.append(Finding(_kind(password), vs, ve))
                break
            tied = raw.endswith((":", "="))


def _psql_variable(text: str, at: int) -> bool:
    """psql's ``:'name'`` (a space, a colon touching the quote): a variable, not a value."""
    return text[at - 2 : at] in (":'", ':"') and text[at - 3 : at - 2].isspace()


#: ``Read-Host``, ``Get-Secret``: a PowerShell command, not a value.
_CMDLET: Final = _rx(r"[A-Z][a-z]+-[A-Z][A-Za-z]+")
_FLAG_NEXT: Final = _rx(r"[ \t]+-{1,2}[A-Za-z]")


def _skip_tie(text: str, at: int) -> int:
    """Past a copula or an assignment after a name (``seed phrase is``, ``mnemonic:``)."""
    m = _TIE_AFTER.match(text, at)
    return m.end() if m else at


_TIE_AFTER: Final = _rx(r"(?i)\s*(?:[:=]|is|was|are)(?=\s)")


#: Before a name: "use X as the api token", "X is the password", "X (the router password)".
_CLAUSE_START: Final = _rx(r"\n|[|;]|[.!?。！？](?=\s)")
#: "not secret", "no password": a name that is denied is not naming a value.
_DENIED: Final = _rx(r"(?i)(?:\b(?:not|no|non|never|isn't|aren't|without)\s+(?:an?\s+)?|\bnon-)$")
_BEFORE_TIES: Final = frozenset(_words("is was as are for ( - — : ->"))


def _named_before(
    text: str, m: re.Match[str], password: bool, found: list[Finding], starts: _Marks
) -> None:
    """A value earlier in the clause that the name is said of: ``X is the NAME``."""
    # the clause goes back to the last clause start before the name, and at most _REACH
    # characters (``starts``: _CLAUSE_START's marks in the text)
    start = max(0, m.start() - _REACH)
    for j in range(bisect_left(starts.starts, m.start()) - 1, -1, -1):
        at = starts.starts[j]
        if at < start:
            break
        before = text[text.rfind(" ", start, at) + 1 : at]
        if text[at] in "!?" and not before.isalpha():  # a clause start is one character
            continue  # "s&NZ#hC&fjP! (...)": the mark ends a value, not a sentence
        start = starts.ends[j]
        break
    # its last seven words: looked for in the last 96 characters first, then in the whole
    # clause when fewer than eight are there (the first might be cut, and be needed)
    near = max(start, m.start() - 96)
    words = list(_WORD.finditer(text, near, m.start()))
    if near > start and len(words) < 8:
        words = list(_WORD.finditer(text, start, m.start()))
    words = words[-7:]
    tied = False
    for w in reversed(words):
        raw = w.group(0)
        low = raw.lower().strip("(")
        if low in _BEFORE_TIES or raw.startswith("("):
            tied = True
            if raw == "(" or low in _BEFORE_TIES:
                continue
        if _CODE.search(raw.lstrip("(")):
            continue  # if (!apiKey), getToken(x): code around the name
        value, vs, ve, _ = _value_at(text, w.start(), m.start())
        if not value or value.lower() in ("the", "a", "an", "our", "my", "this"):
            continue
        if any(q in value for q in "\"'"):
            continue  # f"secret, x['a']: code, not a value
        if _random_value(value) or (tied and _made_up(value) and not _technical(value)):
            found.append(Finding(_kind(password), vs, ve))
            return


def _cjk_password(word: str) -> bool:
    """A name of a password in a script without spaces (else it names a key or token)."""
    return word in ("パスワード", "暗証番号", "密码", "密碼", "口令", "비밀번호", "암호") or not (
        word.isascii() or any("\u3000" <= c <= "\ud7af" for c in word)
    )


def _kind(password: bool) -> str:
    return "password" if password else "secret value"


_SPACED: Final = _rx(r"(?<![\w.-])(?P<name>[A-Za-z_:/][A-Za-z0-9_.:/-]{2,63})[ \t]+(?=\S)")


def _spaced(text: str, found: list[Finding]) -> None:
    """An identifier naming a key, then a space and a random value (``config set NAME X``)."""
    for m in _SPACED.finditer(text):
        name = m.group("name").rsplit(":", 1)[-1].rsplit("/", 1)[-1]
        if not name or _ident_kind(name) is None or (name.islower() and "_" not in name):
            continue  # a plain word ("token", "secret") is rule 3's prose case
        value, vs, ve, quoted = _value_at(text, m.end())
        if not value:
            continue
        if _random_value(value) or (
            quoted and _ident_kind(name) == "password" and _made_up(value) and not _technical(value)
        ):
            found.append(Finding(f"secret after {name[:40]}", vs, ve))


_QUERY_END: Final = _rx(r"[&#]")


def _assigned(text: str, found: list[Finding]) -> None:
    """Rule 3 for identifiers: ``name = value``, ``"name": "value"``, ``name: value``."""
    for m in _ASSIGNMENT.finditer(text):
        kind = _ident_kind(m.group("name"))
        if kind is None:
            continue
        value, vs, ve, quoted = _value_at(text, m.end())
        if m.start() and text[m.start() - 1] in "?&;" and not quoted:
            cut = _QUERY_END.search(value)  # ?api_key=X&format=csv: the value ends at &
            if cut is not None:
                value, ve = value[: cut.start()], vs + cut.start()
        if not value or value.startswith(("=", "--")) or (quoted and _psql_variable(text, vs)):
            continue
        if not quoted and (_CMDLET.fullmatch(value) or _FLAG_NEXT.match(text, ve)):
            continue  # $p = Read-Host -AsSecureString: a command that reads it
        if kind == "password":
            ok = (
                _made_up(value, quoted=True)
                if quoted
                else (
                    len(value) >= 6
                    and not _placeholder(value)
                    and not _CODE.search(value)
                    and not _ENV_NAME.fullmatch(value)
                    and "://" not in value
                    and not (value.isdigit() and len(value) < 6)
                    and not (_PLAIN_WORD.fullmatch(value) and value.islower() and len(value) < 8)
                    and not _IDENTIFIER.fullmatch(value)
                )
            )
        else:
            ok = _random_value(value) or (quoted and _random_value(value.strip()))
        if not ok and "(" in value:
            wrapped = _WRAPPED.match(text, m.end())
            if wrapped is not None and _random_value(wrapped.group("v")):
                ok, (vs, ve) = True, wrapped.span("v")
        if ok:
            what = (
                "password" if kind == "password" else f"secret assigned to {m.group('name')[:40]}"
            )
            found.append(Finding(what, vs, ve))


def _flags(text: str, found: list[Finding]) -> None:
    """Rule 3 for command lines: ``--password X``, ``--api-key=X``, ``mysql -pX``."""
    if "-" not in text:
        return
    for m in _FLAG.finditer(text):
        name = m.group("long")
        value, vs, ve, quoted = _value_at(text, m.start("value"))
        if not value or value.startswith(("-", "<", "$")) or _placeholder(value):
            continue
        if "://" in value:
            continue  # --ask-password https://...: the flag takes no value, that is the URL
        if name is None:  # -pVALUE: only after mysql and its kin
            if _MYSQL_LIKE.search(text, 0, m.start()) and _made_up(value, quoted=True):
                found.append(Finding("password on a command line", vs, ve))
            continue
        kind = _ident_kind(name)
        if kind == "password" and (_made_up(value, quoted=True) or len(value) >= 6):
            if not _CODE.search(value):
                found.append(Finding("password on a command line", vs, ve))
        elif kind == "key" and _random_value(value):
            found.append(Finding("secret on a command line", vs, ve))
    if "|" in text:
        for m in _PIPED.finditer(text):
            value, vs, ve, quoted = _value_at(text, m.start("value"))
            if value and _made_up(value, quoted=quoted):
                found.append(Finding("password on a command line", vs, ve))
    for m in _DOCKER_P.finditer(text):
        value, vs, ve, _ = _value_at(text, m.start("value"))
        if value and not value.startswith(("-", "$", "<")) and _made_up(value, quoted=True):
            found.append(Finding("password on a command line", vs, ve))


#: A token with upper and lower case letters, digits and a symbol, 8 to 40 characters:
#: the shape password rules ask people for, and that names, numbers and code rarely take.
_STRONG_CHAR: Final = r"[^\s\"'`(){}\[\],;<>\\]"
_STRONG: Final = _rx(
    rf"(?<![^\s\"'(\[])(?={_STRONG_CHAR}*[A-Z])(?={_STRONG_CHAR}*[a-z])(?={_STRONG_CHAR}*\d)"
    rf"(?={_STRONG_CHAR}*[!#$%&*?^~|]){_STRONG_CHAR}{{8,40}}(?![^\s\"'.,;:!?)])"
)
#: ``name: X_PASSWORD`` then ``value: ...`` (Kubernetes env entries, key/value lists).
_NAME_VALUE: Final = _rx(
    r"(?i)\bname[\"']?\s*[:=]\s*[\"']?(?P<name>[A-Za-z_][\w.-]*)[\"']?\s*[,\n]\s*(?:-\s*)?"
    r"[\"']?value[\"']?\s*[:=][ \t]*"
)


#: ``user / password`` after a word of logging in: ``Admin: ops / X``, ``login root / X``.
_PAIR: Final = _rx(
    r"(?i)\b(?:admin|administrator|login|logins|user|username|account|root|creds|"
    r"credentials|ssh|wifi|wi-fi|sign[ -]?in)\b[^\n/|]{0,40}?(?<!\S)[\w.@+-]{2,64}"
    r"[ \t]+/[ \t]+(?P<value>\S+)"
)
#: A key file said to hold a value: ``config/master.key holds X``, ``secret.txt: X``.
_KEY_FILE: Final = _rx(
    r"(?i)\b[\w./-]*\.(?:key|pem|secret|secrets|p12|pfx|keystore|jks|token)\b"
    r"(?:[ \t]+(?:holds|contains|has|is|reads)|[ \t]*[:=])[ \t]+(?P<value>\S+)"
)
#: A PIN or passcode right after its name: ``admin PIN 412437``, ``passcode 9921``.
_PIN_NUMBER: Final = _rx(r"(?:\bPIN|(?i:\bpass ?code|\bpin[ -]?code))[ \t:#=]*(?P<value>\d{4,8})\b")


#: ``(email, password) VALUES ('a', 'b')``: a column list and the values in its order.
_SQL_VALUES: Final = _rx(r"(?i)\(([^()\n]{1,400})\)\s*VALUES\s*\(([^()\n]{1,2000})\)")
#: A cookie header's pairs: a session cookie is a bearer credential.
_COOKIE: Final = _rx(r"(?im)^\s*(?:set-)?cookie:\s*(.+)$")
#: Short flags that take a password, by tool: ``redis-cli -a X``, ``sshpass -p X``.
_TOOL_FLAGS: Final = _rx(
    r"(?i)\b(?:redis-cli\b[^\n|;]*?\s-a|sshpass\b[^\n|;]*?\s-p|openssl\b[^\n|;]*?\s-k|"
    r"zip\b[^\n|;]*?\s-P|7z\b[^\n|;]*?\s-p)[ \t]*(?P<value>[^\s-]\S*)"
)
#: The password as a command's last argument: ``htpasswd -b`` (batch mode), ``net user N X``.
_LAST_ARG: Final = _rx(
    r"(?im)\b(?:htpasswd\b[^\n|;>]*?\s-[a-z]*b[a-z]*\b[^\n|;>]*|net\s+user\s+\S+)"
    r"\s(?P<value>[^\s\-/*][^\s|;>]*)[ \t]*(?:/add\b[^\n]*)?(?=$|[|;>])"
)
#: ``user:password@host`` without a scheme: a Go or JDBC DSN, a connection string.
_DSN: Final = _rx(
    r"(?<![\w/:.@%-])(?P<user>[A-Za-z_][\w.-]{0,40}):(?P<value>[^\s:@/\"'<>()]{3,128})@"
    r"(?:tcp\(|unix\(|\[|[\w-]+(?:\.[\w-]+)*(?::\d{2,5})?(?=[/\s\"'?,;)]|$))"
)
_NOT_DSN_USERS: Final = frozenset(_words("mailto tel sip sips xmpp im news urn"))
#: A call that logs in, with the credential as a positional string argument:
#: ``new mysqli('h', 'user', 'X')``, ``smtp.login(user, "X")``, ``NetworkCredential(u, "X")``.
_CRED_CALL: Final = _rx(
    r"(?i)(?<![\w$])(?:[\w$]+(?:\.|->|::))*(?P<fn>login|connect|mysqli|mysqli?_connect|"
    r"pg_connect|pdo|networkcredential|passwordcredential|usernamepasswordcredentials?|"
    r"basicauth|httpbasicauth|httpdigestauth|authenticate|auth|simple_bind_s|bind_s|"
    r"set_?password|with_?password|credentials|sqlconnect|ldap_bind)\s*\("
    r"(?P<args>[^()\n]{0,400})\)"
    # requests' auth=("user", "X")
    r"|\bauth\s*=\s*\((?P<tuple>[^()\n]{0,200})\)"
)
_REGION: Final = _rx(r"[a-z]{2}(?:-[a-z]+)+-\d{1,2}")
_CALL_STEM_RX: Final = _rx("login|connect|mysqli|pdo|credential|auth|bind|password")
_LITERAL: Final = _rx(r"(?P<q>[\"'])(?P<v>[^\"'\n]{1,200})(?P=q)")
#: A value wrapped in a call or a bytes literal: ``[]byte("X")``, ``Buffer.from('X')``.
_WRAPPED: Final = _rx(
    r"[\w.\[\]:]{0,30}\(\s*[bBrRuU]?(?P<q>[\"'])(?P<v>[^\"'\n]{8,200})(?P=q)\s*[,)]"
)


def _cells(line: str) -> list[str]:
    sep = "\t" if line.count("\t") > line.count(",") else ","
    return [c.strip().strip("\"'") for c in line.split(sep)]


def _tables(text: str, found: list[Finding]) -> None:
    """A CSV or TSV header naming a secret column, and the rows below it; SQL VALUES."""
    # A header's rows are the lines after it with as many cells; it stops at the first
    # line with another count. So the headers whose rows go on at a line all have that
    # line's count, and one pass keeps the secret columns of all of them (every line was
    # once read again as the header of the lines below it: O(n^2) in lines).
    lines, whole = text.splitlines(), text.splitlines(keepends=True)
    width, columns, at = -1, set[int](), 0
    for row, piece in zip(lines, whole, strict=True):
        cells = _cells(row)
        if len(cells) != width:
            width, columns = len(cells), set()
        for i in sorted(columns):
            v = cells[i]
            if v and (_random_value(v) or _made_up(v, quoted=True)) and not _technical(v):
                start = text.find(v, at)
                found.append(Finding("password", start, start + len(v)))
        if row.count(",") + row.count("\t") >= 1:  # it may head the lines below it
            columns.update(i for i, c in enumerate(cells) if _FIELD.fullmatch(c) and _ident_kind(c))
        at += len(piece)
    for m in _SQL_VALUES.finditer(text):
        names, values = _cells(m.group(1)), _cells(m.group(2))
        if len(names) != len(values):
            continue
        for name, v in zip(names, values, strict=True):
            named = _FIELD.fullmatch(name) is not None and _ident_kind(name) is not None
            bare = v.lstrip("@$")  # a quoted SQL literal: "@" or "$" starts it, not a variable
            made = (
                bool(bare)
                and v.upper() != "NULL"
                and (_random_value(bare) or _made_up(bare, quoted=True))
            )
            if named and made:
                at = text.find(v, m.start(2))
                found.append(Finding("password", at, at + len(v)))


def _cookies_and_tools(text: str, low: str, found: list[Finding]) -> None:
    if "cookie" in low:
        for m in _COOKIE.finditer(text):
            for pair in m.group(1).split(";"):
                _name, eq, v = pair.strip().partition("=")
                if eq and _random_value(v.strip()):
                    at = text.find(v.strip(), m.start(1))
                    found.append(Finding("session cookie", at, at + len(v.strip())))
    if "-" in text:
        for m in (*_TOOL_FLAGS.finditer(text), *_LAST_ARG.finditer(text)):
            value, vs, ve, _ = _value_at(text, m.start(m.lastgroup or 0))
            if (
                value
                and not _placeholder(value)
                and (_random_value(value) or _made_up(value, quoted=True))
            ):
                found.append(Finding("password on a command line", vs, ve))


#: What a program prints before its value: a log prefix (``jenkins  | ``), a prompt, a label.
_LINE_PREFIX: Final = _rx(r"\s*(?:[\w.-]{1,40}\s*\|\s*)?(?:[$>#]\s+)?(?:[\w ]{1,30}:\s+)?")
_CODE_GROUPS: Final = _rx(r"(?:[A-Za-z0-9]{4,5}-?[A-Za-z0-9]{4,5}|\d{6,10})(?:\s+|$)")
_SECRET_LINE: Final = _rx(
    r"(?i)pass(?:word|wort|phrase|wd)|\btokens?\b|secret|api[ _-]?key|credential|"
    r"recovery codes?|backup codes?|mot de passe|contrase|пароль|密码|パスワード"
)


def _next_line(text: str, found: list[Finding]) -> None:
    """A value alone on the line after one that names a secret: what programs print
    (``Use the following password to proceed:`` then the password, a vault read, a
    decoded Kubernetes secret, recovery codes)."""
    lines = text.split("\n")
    at = 0
    for n, line in enumerate(lines[:-1]):
        at += len(line) + 1
        if _SECRET_LINE.search(line) is None:
            continue
        following = lines[n + 1]
        prefix = _LINE_PREFIX.match(following)
        skip = prefix.end() if prefix else 0
        rest, start = following[skip:].rstrip(), at + skip
        if not rest:
            continue
        if "code" in line.lower() and _CODE_GROUPS.match(rest):
            found.append(Finding("recovery codes", start, start + len(rest)))
            continue
        if any(c.isspace() for c in rest):
            continue
        if (
            _random_value(rest)
            or _WORDS_NUMBER.fullmatch(rest)
            or (_made_up(rest) and not _technical(rest))
        ):
            found.append(Finding("secret printed after its name", start, start + len(rest)))


def _code_credentials(text: str, low: str, found: list[Finding]) -> None:
    """``user:X@host`` without a scheme, and a login call's positional password."""
    if "@" in text and ":" in text:
        for m in _DSN.finditer(text):
            value = m.group("value")
            if m.group("user").lower() in _NOT_DSN_USERS or _placeholder(value):
                continue
            if _random_value(value) or (_made_up(value) and not _technical(value)):
                found.append(Finding("password in a connection string", *m.span("value")))
    if "(" not in text or _CALL_STEM_RX.search(low) is None:
        return
    for m in _CRED_CALL.finditer(text):
        args = m.group("args") if m.group("args") is not None else m.group("tuple")
        start = m.start("args") if m.group("args") is not None else m.start("tuple")
        literals = list(_LITERAL.finditer(args))
        every = m.group("fn") is not None and "password" in m.group("fn").lower()
        for lit in literals if every else literals[1:]:
            v = lit.group("v")
            if _placeholder(v) or _EMAIL.fullmatch(v) or _REGION.fullmatch(v):
                continue
            if _technical(v) and not _WORDS_NUMBER.fullmatch(v):
                continue  # utf8mb4, sha256; but river-falcon-179 is a passphrase
            if _random_value(v) or _made_up(v):
                found.append(Finding("password", start + lit.start("v"), start + lit.end("v")))


_KEY_FILE_EXTENSION: Final = _rx(r"\.(?:key|pem|secret|p12|pfx|jks|token)")


def _pairs(text: str, low: str, found: list[Finding]) -> None:
    """A user / password pair, a key file's content, a PIN's digits."""
    key_file = _KEY_FILE_EXTENSION.search(low) is not None
    for rx, gate in ((_PAIR, " / " in text), (_KEY_FILE, key_file)):
        if not gate:
            continue
        for m in rx.finditer(text):
            value, vs, ve, _ = _value_at(text, m.start("value"))
            if value and (_random_value(value) or _made_up(value)):
                found.append(Finding("password", vs, ve))
    if "pin" in low or "code" in low:
        for m in _PIN_NUMBER.finditer(text):
            found.append(Finding("PIN", m.start("value"), m.end("value")))


_CHAR_CLASS: Final = _rx(r"a-z|A-Z|0-9")


#: The symbols rule 4's token must hold one of (with a digit): without them it is not tried.
_STRONG_SYMBOL: Final = _rx(r"[!#$%&*?^~|]")
_DIGIT: Final = _rx(r"\d")


def _strong(text: str, low: str, found: list[Finding]) -> None:
    """A password-shaped token anywhere (``htpasswd -b f admin X``, ``wifi: Guest / X``)."""
    if _STRONG_SYMBOL.search(text) is not None and _DIGIT.search(text) is not None:
        _password_shaped(text, found)
    if "name" in low and "value" in low:
        _name_value(text, found)


def _password_shaped(text: str, found: list[Finding]) -> None:
    for m in _STRONG.finditer(text):
        value = m.group(0).rstrip(".:!?")
        if "://" in value or "/" in value or "@" in value or _placeholder(value):
            continue
        if sum(not c.isalnum() for c in value) > len(value) // 2 or _CHAR_CLASS.search(value):
            continue  # punctuation with a few letters: markup, not a password
        found.append(Finding("password-shaped value", m.start(), m.start() + len(value)))


def _name_value(text: str, found: list[Finding]) -> None:
    for m in _NAME_VALUE.finditer(text):
        kind = _ident_kind(m.group("name"))
        if kind is None:
            continue
        value, vs, ve, quoted = _value_at(text, m.end())
        if value and (
            _random_value(value) or (kind == "password" and _made_up(value, quoted=quoted))
        ):
            found.append(Finding(f"secret assigned to {m.group('name')[:40]}", vs, ve))


def _basic(value: str) -> bool:
    """A base64 value that decodes to ``user:password`` (HTTP Basic authorization)."""
    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
        decoded = raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    _user, sep, password = decoded.partition(":")
    return bool(sep) and bool(password) and decoded.isprintable() and not _placeholder(password)


def _doc_example(value: str) -> bool:
    """Documentation's example keys (AKIAIOSFODNN7EXAMPLE, ghp_xxxx...)."""
    low = value.lower()
    return "example" in low or "xxxxxxxx" in low or "0000000000" in low or len(set(value)) <= 4


#: Every provider token holds a run this long of these characters: without one, the
#: shape rules cannot match and are not tried.
_LONG_RUN: Final = _rx(r"[A-Za-z0-9_.+/=:~-]{20,}")
#: Every name rule 3 knows holds one of these (casefolded); without one it is not tried.
_NAME_STEMS: Final = tuple(
    _words(
        "pass pw pin cod key tok secr cred log auth psk wpa pat seed mnemo bearer sig clav cl "
        "senh wacht senord adgang salasan has hesl jelsz parol jeton chav schl sleut nyckel gle "
        "avain klucz kl kulcs chiav segre geheim sekret sandi kennw contras sifre"
    )
)


def _trie(words: tuple[str, ...]) -> str:
    """A pattern that finds any of ``words``, with shared beginnings written once.

    Only whether one occurs matters (a stem inside a longer one is left
    out), and a branch per first letter is much faster in ``re`` than one
    alternative per word, tried in turn at every position.
    """
    tree: dict[str, Any] = {}
    for word in words:
        if any(other != word and other in word for other in words):
            continue
        node = tree
        for ch in word:
            node = node.setdefault(ch, {})

    def branch(node: dict[str, Any]) -> str:
        alternatives = [re.escape(ch) + branch(sub) for ch, sub in sorted(node.items())]
        if len(alternatives) <= 1:
            return "".join(alternatives)
        return "(?:" + "|".join(alternatives) + ")"

    return branch(tree)


_NAME_STEM_RX: Final = _rx(_trie(_NAME_STEMS))


def _may_name(low: str) -> bool:
    if not low.isascii():
        return True  # the names in other scripts: let the full rule look
    return _NAME_STEM_RX.search(low) is not None


def scan(text: str) -> list[Finding]:
    """Everything in ``text`` that looks like a secret, in order of position."""
    found: list[Finding] = []
    if _LONG_RUN.search(text) is not None:
        # search() first: a rule that finds nothing costs one C call, no generator.
        for kind, rx in (*PROVIDER_RULES, ("JSON web token", _JWT)):
            if rx.search(text) is not None:
                found.extend(
                    Finding(kind, m.start(), m.end())
                    for m in rx.finditer(text)
                    if not _doc_example(m.group(0))
                )
    if "PRIVATE KEY" in text:
        found.extend(
            Finding("private key", m.start(), m.end()) for m in _PRIVATE_KEY.finditer(text)
        )
    if "://" in text:
        for m in _URL_CREDENTIALS.finditer(text):
            if not _placeholder(m.group(1)):
                found.append(Finding("password in a URL", m.start(1), m.end(1)))
        for m in _URL_TOKEN.finditer(text):
            host = _HOST.match(text, m.end(1) + 1)
            public = host is not None and host.group(0).lower().endswith(_PUBLIC_DSN_HOSTS)
            if _random_value(m.group(1)) and not _doc_example(m.group(1)) and not public:
                found.append(Finding("token in a URL", m.start(1), m.end(1)))
        for m in _SAS_SIG.finditer(text):
            found.append(Finding("signed URL", m.start(1), m.end(1)))
    low = text.casefold()
    if "basic" in low:
        for m in _BASIC.finditer(text):
            if _basic(m.group(1)):
                found.append(Finding("HTTP Basic credentials", m.start(1), m.end(1)))
    if "bearer" in low:
        for m in _BEARER.finditer(text):
            if _random_value(m.group(1)):
                found.append(Finding("bearer token", m.start(1), m.end(1)))
    if "-u" in text:
        for m in _CURL_USER.finditer(text):
            if not _placeholder(m.group(2).rstrip("`'\",.;)")) and len(m.group(2)) >= 4:
                found.append(Finding("password on a command line", m.start(2), m.end(2)))
    if _may_name(low):
        if "=" in text or ":" in text:
            _assigned(text, found)
        _spaced(text, found)
        _named(text, found)
    _pairs(text, low, found)
    _code_credentials(text, low, found)
    if "\n" in text and _may_name(low):
        _next_line(text, found)
    if "," in text or "\t" in text:
        _tables(text, found)
    _cookies_and_tools(text, low, found)
    _flags(text, found)
    _strong(text, low, found)
    found.sort(key=lambda f: (f.start, -f.end))
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
