"""Command-line options for a DICOMweb image source (import_rexvqa, import_questions)."""

from __future__ import annotations

import os
from pathlib import Path

from django.conf import settings
from django.core.management.base import CommandError

from readerstudy.dicomweb import DicomwebConfig, DicomwebError


def add_image_source_arguments(parser, *, root_help: str | None = None) -> None:
    """--images-root DIR (when root_help is given) or --dicomweb URL, and the credentials."""
    source = parser.add_mutually_exclusive_group() if root_help else parser
    if root_help:
        source.add_argument("--images-root", type=Path, default=None, help=root_help)
    source.add_argument(
        "--dicomweb",
        metavar="URL",
        help="Fetch the images from this DICOMweb service (WADO-RS/QIDO-RS base URL), "
        "e.g. http://pacs:8042/dicom-web.",
    )
    parser.add_argument("--dicomweb-user", default="", help="User name for HTTP Basic auth.")
    parser.add_argument(
        "--dicomweb-password-env",
        metavar="VAR",
        default="",
        help="Name of the environment variable holding the password (never on the command line).",
    )
    parser.add_argument(
        "--dicomweb-token-env",
        metavar="VAR",
        default="",
        help="Name of the environment variable holding an OAuth bearer token "
        "(cloud healthcare APIs).",
    )


def _secret(variable: str, what: str) -> str:
    if not variable:
        return ""
    value = os.environ.get(variable)
    if not value:
        raise CommandError(f"the environment variable {variable} (the {what}) is not set")
    return value


def dicomweb_config(opts: dict) -> DicomwebConfig | None:
    """The DICOMweb configuration the options ask for, or None for a folder of files."""
    if not opts.get("dicomweb"):
        for flag in ("dicomweb_user", "dicomweb_password_env", "dicomweb_token_env"):
            if opts.get(flag):
                raise CommandError(f"--{flag.replace('_', '-')} needs --dicomweb URL")
        return None
    password = _secret(opts["dicomweb_password_env"], "DICOMweb password")
    if password and not opts["dicomweb_user"]:
        raise CommandError("--dicomweb-password-env needs --dicomweb-user")
    try:
        return DicomwebConfig(
            url=opts["dicomweb"],
            username=opts["dicomweb_user"],
            password=password,
            token=_secret(opts["dicomweb_token_env"], "DICOMweb token"),
            timeout=settings.DICOMWEB_TIMEOUT,
            retries=settings.DICOMWEB_RETRIES,
            backoff=settings.DICOMWEB_BACKOFF,
            max_instance_bytes=settings.DICOMWEB_MAX_INSTANCE_BYTES,
        )
    except DicomwebError as exc:
        raise CommandError(str(exc)) from exc
