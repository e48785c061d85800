"""A published log in an S3-compatible bucket (issue 29): `publish s3://bucket/prefix`.

The objects are the folder's (FORMAT.md 19.3), each put whole; the checkpoint last,
after every tile and bundle it names was acknowledged, with `Cache-Control: no-cache`
(tiles and bundles are immutable and say so), as c2sp.org/tlog-tiles asks. boto3 is
the `s3` extra (`pip install 'memory-chain[s3]'`); credentials, region and endpoint
come from the usual AWS settings (AWS_ACCESS_KEY_ID, AWS_ENDPOINT_URL for a store
that is not AWS, ~/.aws/config).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory_chain.chain.format.errors import InputError, OperationalError

__all__ = ["S3Store", "is_s3_url", "place_of"]

_IMMUTABLE = "public, max-age=31536000, immutable"


def is_s3_url(text: str) -> bool:
    return text.startswith("s3://")


def place_of(text: str) -> S3Store | Path:
    """Where a log is published: s3://bucket/prefix, or else a folder."""
    return S3Store(text) if is_s3_url(text) else Path(text)


class S3Store:
    """The chain/log/tiles.py Store of ``s3://bucket[/prefix]``."""

    def __init__(self, url: str, *, client: Any = None) -> None:
        bucket, _, prefix = url.removeprefix("s3://").partition("/")
        if not is_s3_url(url) or not bucket:
            raise InputError(f"not an s3://bucket/prefix URL: {url!r}")
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        if client is None:
            try:
                import boto3
            except ImportError:
                raise InputError(
                    "publishing to S3 needs boto3",
                    hint="pip install 'memory-chain[s3]'",
                ) from None
            client = boto3.client("s3")
        self.client = client

    def _key(self, rel: str) -> str:
        return f"{self.prefix}/{rel}" if self.prefix else rel

    def _failed(self, exc: Exception, rel: str) -> OperationalError:
        return OperationalError(f"{self.where(rel)}: {exc}")

    @staticmethod
    def _missing(exc: Exception) -> bool:
        response = getattr(exc, "response", None) or {}
        code = str(response.get("Error", {}).get("Code", ""))
        return code in ("NoSuchKey", "404", "NotFound")

    def read(self, rel: str) -> bytes | None:
        try:
            answer = self.client.get_object(Bucket=self.bucket, Key=self._key(rel))
        except Exception as exc:  # botocore's ClientError and its transport errors
            if self._missing(exc):
                return None
            raise self._failed(exc, rel) from None
        data: bytes = answer["Body"].read()
        return data

    def size(self, rel: str) -> int | None:
        try:
            answer = self.client.head_object(Bucket=self.bucket, Key=self._key(rel))
        except Exception as exc:
            if self._missing(exc):
                return None
            raise self._failed(exc, rel) from None
        return int(answer["ContentLength"])

    def write(self, rel: str, data: bytes, *, last: bool = False) -> None:
        checkpoint = rel == "checkpoint"
        try:
            self.client.put_object(
                Bucket=self.bucket,
                Key=self._key(rel),
                Body=data,
                ContentType="text/plain; charset=utf-8"
                if checkpoint or rel.startswith("cosigned/")
                else "application/octet-stream",
                CacheControl="no-cache" if checkpoint else _IMMUTABLE,
            )
        except Exception as exc:
            raise self._failed(exc, rel) from None

    def names(self, prefix: str) -> list[str]:
        start = self._key(prefix).rstrip("/") + "/"
        out: list[str] = []
        try:
            pages = self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=start, Delimiter="/"
            )
            for page in pages:
                out.extend(item["Key"][len(start) :] for item in page.get("Contents", []))
        except Exception as exc:
            raise self._failed(exc, prefix) from None
        return sorted(out)

    def sync(self) -> None:
        """Nothing to do: a put is durable once the store acknowledged it."""

    def where(self, rel: str = "") -> str:
        return (
            f"s3://{self.bucket}/{self._key(rel)}" if rel else f"s3://{self.bucket}/{self.prefix}"
        )
