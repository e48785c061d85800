"""A labelled corpus for the secret gate: realistic fake secrets in sentences, and
risky-looking text that is not secret (hashes, ids, URLs without credentials,
placeholders, prose about passwords and tokens).

Every fake secret is made here from a seeded generator in the shape its
provider documents, so no real credential is in the repository and the
corpus is the same on every run. ``CORPUS`` is a list of (text, is_secret,
label). Used by tests/test_secrets.py (thresholds) and
benchmarks/secrets.py (the figures in benchmarks/README.md).
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid

_rng = random.Random(20261125)
UPPER_DIGITS = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"


def _r(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def _b64url(obj: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()


def _jwt() -> str:
    header = _b64url({"alg": "HS256", "typ": "JWT"})
    body = _b64url({"sub": _r(string.digits, 8), "name": "Ada", "iat": 1700000000})
    return f"{header}.{body}.{_r(URLSAFE, 43)}"


def _pem(kind: str) -> str:
    lines = "\n".join(_r(ALNUM + "+/", 64) for _ in range(3))
    return f"-----BEGIN {kind}-----\n{lines}\n-----END {kind}-----"


def _secrets() -> list[tuple[str, str]]:
    aws = lambda: "AKIA" + _r(UPPER_DIGITS, 16)  # noqa: E731
    aws_secret = lambda: _r(ALNUM + "+/", 40)  # noqa: E731
    gh = lambda: "ghp_" + _r(ALNUM, 36)  # noqa: E731
    out: list[tuple[str, str]] = [
        (f"The deploy user's key id is {aws()} for the staging account.", "aws"),
        (f"export AWS_ACCESS_KEY_ID={aws()}", "aws"),
        (f"aws_secret_access_key = {aws_secret()}", "aws-secret"),
        (f"Use AWS_SECRET_ACCESS_KEY={aws_secret()} when the CI role fails.", "aws-secret"),
        (f"Temporary STS credentials: ASIA{_r(UPPER_DIGITS, 16)} expire at noon.", "aws"),
        (f"My GitHub token is {gh()} - use it for the release script.", "github"),
        (f"GITHUB_TOKEN={gh()}", "github"),
        (f"gho_{_r(ALNUM, 36)} is the OAuth token the app got back.", "github"),
        (f"Fine-grained PAT: github_pat_{_r(ALNUM + '_', 82)}", "github"),
        (f"CI pushes with ghs_{_r(ALNUM, 36)} from the app installation.", "github"),
        (f"The GitLab runner uses glpat-{_r(URLSAFE, 20)} to clone.", "gitlab"),
        (
            f"Slack bot token: xoxb-{_r(string.digits, 12)}-{_r(string.digits, 13)}-"
            f"{_r(ALNUM, 24)}",
            "slack",
        ),
        (
            f"user token xoxp-{_r(string.digits, 11)}-{_r(string.digits, 12)}-{_r(ALNUM, 32)}",
            "slack",
        ),
        (
            f"Post alerts to https://hooks.slack.com/services/T{_r(UPPER_DIGITS, 8)}/"
            f"B{_r(UPPER_DIGITS, 10)}/{_r(ALNUM, 24)}",
            "slack-webhook",
        ),
        (f"Stripe live key sk_live_{_r(ALNUM, 24)} is in the vault now.", "stripe"),
        (f"STRIPE_SECRET_KEY=sk_test_{_r(ALNUM, 24)}", "stripe"),
        (f"restricted key rk_live_{_r(ALNUM, 24)} for the reporting job", "stripe"),
        (f"OPENAI_API_KEY=sk-proj-{_r(URLSAFE, 48)}", "openai"),
        (f"The old OpenAI key sk-{_r(ALNUM, 20)}T3BlbkFJ{_r(ALNUM, 20)} still works.", "openai"),
        (f"Anthropic: sk-ant-api03-{_r(URLSAFE, 93)}AA", "anthropic"),
        (
            f"Set ANTHROPIC_API_KEY to sk-ant-admin01-{_r(URLSAFE, 80)} for admin calls.",
            "anthropic",
        ),
        (f"Maps key AIza{_r(URLSAFE, 35)} is restricted to our domain.", "google"),
        (f"GOOGLE_CLIENT_SECRET=GOCSPX-{_r(URLSAFE, 28)}", "google-oauth"),
        (f"SendGrid SG.{_r(URLSAFE, 22)}.{_r(URLSAFE, 43)} sends the invoices.", "sendgrid"),
        (f"//registry.npmjs.org/:_authToken=npm_{_r(ALNUM, 36)}", "npm"),
        (f"Upload with the PyPI token pypi-AgEIcHlwaS5vcmc{_r(URLSAFE, 60)}", "pypi"),
        (f"HF_TOKEN=hf_{_r(ALNUM, 34)}", "huggingface"),
        (f"Twilio API key SK{_r(HEX, 32)} belongs to the SMS service.", "twilio"),
        (f"DigitalOcean: dop_v1_{_r(HEX, 64)}", "digitalocean"),
        (f"The Telegram bot token is {_r(string.digits, 10)}:AA{_r(URLSAFE, 33)}", "telegram"),
        (_pem("RSA PRIVATE KEY"), "private-key"),
        (f"Here is the deploy key:\n{_pem('OPENSSH PRIVATE KEY')}", "private-key"),
        (_pem("EC PRIVATE KEY"), "private-key"),
        (_pem("PRIVATE KEY"), "private-key"),
        (f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n{_r(ALNUM, 64)}", "private-key"),
        (f"Session cookie: {_jwt()}", "jwt"),
        (f"Authorization: Bearer {_jwt()}", "jwt"),
        (f"the refresh token {_jwt()} lasts 30 days", "jwt"),
        (f"postgres://app:{_r(ALNUM, 14)}@db.internal:5432/prod is the primary.", "url"),
        (f"DATABASE_URL=mysql://root:{_r(ALNUM, 12)}@127.0.0.1:3306/app", "url"),
        (f"Clone from https://deploy:{_r(ALNUM, 20)}@git.example.org/team/repo.git", "url"),
        (f"redis://default:{_r(ALNUM, 16)}@cache:6379/0", "url"),
        (f"amqp://guest:{_r(ALNUM, 10)}@rabbit:5672/", "url"),
        (f"ftp://backup:{_r(ALNUM, 9)}!@files.lan/nightly", "url"),
        (f"password={_r(ALNUM, 12)}", "password"),
        (f"DB_PASSWORD: {_r(ALNUM, 16)}", "password"),
        (f"The admin password is {_r(ALNUM, 10)}9!", "password"),
        (f"my wifi password is Tr0ub4dor&{_r(string.digits, 2)}", "password"),
        (f'"password": "{_r(ALNUM, 14)}"', "password"),
        (f"mysql -u root --password={_r(ALNUM, 12)} app", "password"),
        (f"The root passwd was set to {_r(ALNUM, 8)}42", "password"),
        (f"passphrase: {_r(ALNUM, 20)}", "password"),
        (f"PGPASSWORD={_r(ALNUM, 12)} psql -h db", "password"),
        (f"pwd = '{_r(ALNUM, 10)}#1'", "password"),
        (f'api_key = "{_r(HEX, 40)}"', "assigned"),
        (f"MAILGUN_API_KEY={_r(HEX, 32)}-{_r(HEX, 8)}-{_r(HEX, 8)}", "assigned"),
        (f"The client_secret is {_r(URLSAFE, 32)}", "assigned"),
        (f"SECRET_KEY='{_r(ALNUM + '!@#%^&*', 50)}'", "assigned"),
        (f"auth_token: {_r(HEX, 32)}", "assigned"),
        (f"Set the webhook secret to whsec_{_r(ALNUM, 32)}", "assigned"),
        (f"access_key={_r(ALNUM, 20)}", "assigned"),
        (f"X_API_KEY: {_r(ALNUM, 32)}", "assigned"),
        (f"the signing_key is {_r(HEX, 64)}", "assigned"),
        (f"session_key = {_r(ALNUM + '+/', 44)}", "assigned"),
        (f"JWT_SECRET={_r(ALNUM, 48)}", "assigned"),
        (f"datadog api key: {_r(HEX, 32)}", "assigned"),
        (f"credentials: {_r(ALNUM + '/+', 40)}", "assigned"),
        (f'private_key = "{_r(ALNUM + "+/", 64)}"', "assigned"),
        (f"token={_r(ALNUM, 40)}", "assigned"),
        (f"curl -H 'Authorization: Bearer {_r(ALNUM, 40)}' https://api.internal/v1", "bearer"),
        (
            f"Heroku API token is {_r(HEX, 8)}-{_r(HEX, 4)}-{_r(HEX, 4)}-{_r(HEX, 4)}-"
            f"{_r(HEX, 12)}",
            "assigned",
        ),
        (f"vault token: hvs.{_r(URLSAFE, 24)}", "assigned"),
        (f"CLOUDFLARE_API_TOKEN={_r(URLSAFE, 40)}", "assigned"),
        (f"the bot's secret is {_r(ALNUM, 24)} (do not share)", "assigned"),
        (f"AZURE_STORAGE_KEY={_r(ALNUM + '+/', 86)}==", "assigned"),
        (f"firebase apiKey: AIza{_r(URLSAFE, 35)}", "google"),
        (f"Remember: prod token is {_r(ALNUM, 32)}", "assigned"),
        (f"ssh-keygen wrote {_pem('OPENSSH PRIVATE KEY')}", "private-key"),
        (f"In .env: SENTRY_AUTH_TOKEN={_r(HEX, 64)}", "assigned"),
        (f"netrc: machine api.heroku.com login me password {_r(ALNUM, 12)}7", "password"),
    ]
    return out


def _non_secrets() -> list[tuple[str, str]]:
    sha = lambda: hashlib.sha1(_r(ALNUM, 12).encode()).hexdigest()  # noqa: E731
    b3 = lambda: "b3:" + hashlib.sha256(_r(ALNUM, 12).encode()).hexdigest()  # noqa: E731
    return [
        (f"Fixed in commit {sha()} on main.", "git-sha"),
        (f"git cherry-pick {sha()[:12]}", "git-sha"),
        (f"The release tag points at {sha()}.", "git-sha"),
        (f"Reverted {sha()} because it broke the build", "git-sha"),
        (f"commit: {sha()}", "git-sha"),
        (f"Chain head {b3()} at seq 1042", "blake3"),
        (f"content hash {b3()}", "blake3"),
        (f"The checkpoint root was {b3()[3:]}.", "blake3"),
        (f"prev: {b3()}", "blake3"),
        (f"sha256sum gave {hashlib.sha256(b'x').hexdigest()} for the tarball", "sha256"),
        (f"Request id {uuid.UUID(int=_rng.getrandbits(128), version=4)} failed with 502.", "uuid"),
        (f"tenant_id: {uuid.UUID(int=_rng.getrandbits(128), version=4)}", "uuid"),
        (f"The user id is {uuid.UUID(int=_rng.getrandbits(128), version=4)}", "uuid"),
        (f"trace {uuid.UUID(int=_rng.getrandbits(128), version=4).hex}", "uuid"),
        ("Docs live at https://docs.example.com/guide/setup#install", "url"),
        ("Clone https://github.com/acme/widgets.git and run make", "url"),
        ("postgres://localhost:5432/app_dev is the dev database", "url"),
        ("Staging API: https://api.staging.acme.io/v2/users?limit=50", "url"),
        ("ssh git@github.com:acme/widgets.git works with the deploy key", "url"),
        ("The health check is http://127.0.0.1:8080/healthz", "url"),
        ("mailto:ops@acme.io for incidents", "url"),
        ("redis://cache:6379/0 holds the sessions", "url"),
        ("https://user@bitbucket.org/team/repo.git (no password, uses SSH agent)", "url"),
        ("postgres://app:${DB_PASSWORD}@db:5432/prod reads the password from the env", "url"),
        ("api_key = YOUR_API_KEY_HERE", "placeholder"),
        ("OPENAI_API_KEY=<your key>", "placeholder"),
        ("password=changeme is the default; change it on first login", "placeholder"),
        ("token: ${GITHUB_TOKEN}", "placeholder"),
        ("SECRET_KEY=xxxxxxxxxxxxxxxxxxxxxxxx", "placeholder"),
        ("export AWS_SECRET_ACCESS_KEY=<redacted>", "placeholder"),
        ("client_secret: '{{ vault.client_secret }}'", "placeholder"),
        ("password: ********", "placeholder"),
        ("api_key = os.environ['API_KEY']", "placeholder"),
        ("DB_PASSWORD=$DB_PASSWORD", "placeholder"),
        ("STRIPE_KEY=sk_test_... (ask finance)", "placeholder"),
        ("The password is required for the admin panel.", "prose"),
        ("Never store the password in the repo.", "prose"),
        ("The token expires after 24 hours; refresh it with the CLI.", "prose"),
        ("Rotate the API key every 90 days.", "prose"),
        ("Secrets live in 1Password under 'Infra'.", "prose"),
        ("The password was reset yesterday by Alice.", "prose"),
        ("A private key never leaves the HSM.", "prose"),
        ("Use a bearer token for the internal API.", "prose"),
        ("Password is correct but 2FA fails on Safari.", "prose"),
        ("The auth service issues short-lived tokens.", "prose"),
        ("Temporary token abc123", "prose"),
        ("The secret is that nobody reads the docs.", "prose"),
        ("password reset links expire in 15 minutes", "prose"),
        ("token count: 2000 per session", "prose"),
        ("max_tokens = 4096", "config"),
        ("token_budget: 2000", "config"),
        ("secret_rotation_days: 90", "config"),
        ("api_key_header = X-Api-Key", "config"),
        ("password_min_length=12", "config"),
        ("auth_token_ttl: 3600", "config"),
        ("The staging database runs on port 5433", "fact"),
        ("Use pnpm, not npm", "fact"),
        ("Deploys go out on Tuesdays", "fact"),
        ("User prefers short answers", "fact"),
        ("The main branch is main, not master", "fact"),
        ("ECONNREFUSED on 5432 means local Postgres is not running", "fact"),
        ("Run tests with `pnpm test -- --filter=@acme/core`", "fact"),
        ("Timezone: America/Los_Angeles", "fact"),
        ("Node 20.11.1, Python 3.11.7, Postgres 15.4", "versions"),
        ("The build id is 20261125.3 and the artifact is app-1.4.2-linux-x64.tar.gz", "versions"),
        (
            "ed25519:3b6a27bcceb6a42d62a3a8d02a6f0d73653215771de243a63ac048a18b59da29 "
            "is the agent key",
            "public-key",
        ),
        (
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGQ1dGVzdGtleWZvcnRoZWNvcnB1cw ops@laptop",
            "public-key",
        ),
        ("-----BEGIN PUBLIC KEY----- is how the verifier's key starts", "public-key"),
        ("-----BEGIN CERTIFICATE----- blocks go in certs/", "public-key"),
        (
            "The chain id is b3:9f2c4e5a1b7d3c8e6f0a2b4c6d8e0f1a3b5c7d9e1f3a5b7c9d1e3f5a7b9c1d3e5",
            "blake3",
        ),
        (
            "0x5FbDB2315678afecb367f032d93F642f64180aa3 is the registry address on anvil",
            "evm-address",
        ),
        ("tx 0x" + _r(HEX, 64) + " anchored checkpoint 12", "evm-tx"),
        (
            "base64 of the logo: iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
            "base64",
        ),
        ("The docker image is sha256:" + _r(HEX, 64), "digest"),
        ("npm integrity sha512-" + _r(ALNUM + "+/", 86) + "==", "digest"),
        ("Order #A7F3-99K2-LL01 shipped", "id"),
        ("The S3 bucket is acme-prod-assets-eu-west-1", "id"),
        ("The AWS account is 123456789012 in eu-west-1", "id"),
        ("Twilio account sid AC" + _r(HEX, 32) + " is ours (the sid is not a secret)", "id"),
        ("Slack channel C024BE91L is #deploys", "id"),
        ("The Google project is acme-prod-314159", "id"),
        ("Use `git log --format=%H` to list hashes", "command"),
        ("Run `openssl rand -hex 32` to make a new secret", "command"),
        ("kubectl get secret app-secrets -o yaml", "command"),
        ("gpg --list-secret-keys --keyid-format=long", "command"),
        ("The function hash_password(pw, salt) uses argon2id", "code"),
        ("token = tokenizer.encode(text)", "code"),
        ("if password == confirm: save()", "code"),
        ("secret_name = f'{app}-{env}-db'", "code"),
        ("def get_api_key(): return os.getenv('API_KEY')", "code"),
        ("The phrase 'sk-' prefixes OpenAI keys, which we never log.", "prose"),
        ("AKIA is the prefix of long-term AWS key ids.", "prose"),
        ("ghp_ tokens are classic GitHub PATs; prefer fine-grained ones.", "prose"),
        ("JWTs start with eyJ because of the base64 of '{\"'.", "prose"),
    ]


CORPUS: list[tuple[str, bool, str]] = [(t, True, k) for t, k in _secrets()] + [
    (t, False, k) for t, k in _non_secrets()
]
