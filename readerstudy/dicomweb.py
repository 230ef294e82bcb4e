"""Images from a DICOMweb server (a PACS): WADO-RS to fetch instances, QIDO-RS to list a study.

Design: each instance is fetched once, during the import's checking pass, into a
content-addressed cache under MEDIA_ROOT (`sources/<sha256[:2]>/<sha256>.dcm`). The Image row
points at that file (`source_path`) like any file import, and records where it came from
(`source_uri`: the server URL and the three UIDs, never a credential). Everything downstream
(create_study deriving display PNGs, the reading pages) is unchanged and needs no network.
Files this import wrote are removed again when the import fails, so a failed import leaves
neither rows nor files behind. A re-import finds already-imported instances by `source_uri`
and does not fetch them again (as long as their cached file is still there).

Transport: `dicomweb-client` over a `requests` session with a timeout, and retries with
exponential backoff (urllib3 `Retry`) for connection failures, read errors and 429/502/503/504;
the library's own retrying is switched off so that there is one retry policy. Errors are
turned into one sentence a PI can act on; the importer adds the question id.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests
from dicomweb_client.api import DICOMwebClient
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from readerstudy.rexvqa import ParsedImage, RexvqaError
from readerstudy.source_check import SourceCheckError, check_dicom_source

# ".../studies/<uid>/series/<uid>/instances/<uid>[.png|.dcm]" as in ReXVQA's ImagePath.
_UID = r"[0-9]+(?:\.[0-9]+)*"
_RESOURCE = re.compile(
    rf"studies/(?P<study>{_UID})/series/(?P<series>{_UID})/instances/(?P<sop>{_UID})"
    r"(?:\.(?:png|dcm|dicom|jpe?g))?/?$",
    re.IGNORECASE,
)
_RETRY_STATUSES = (429, 502, 503, 504)
# SOP classes a study may hold beside its images, skipped when a whole study is listed:
# structured reports and key objects, presentation states, encapsulated documents, waveforms,
# raw data, spatial registration/fiducials, RT objects.
NON_IMAGE_SOP_CLASS_PREFIXES = (
    "1.2.840.10008.5.1.4.1.1.88.",
    "1.2.840.10008.5.1.4.1.1.11.",
    "1.2.840.10008.5.1.4.1.1.104.",
    "1.2.840.10008.5.1.4.1.1.9.",
    "1.2.840.10008.5.1.4.1.1.66",
    "1.2.840.10008.5.1.4.1.1.481.",
)


class DicomwebError(Exception):
    """A fetch or search failed; the message says why in terms a PI can act on."""


@dataclass(frozen=True)
class DicomwebConfig:
    url: str
    username: str = ""
    password: str = field(default="", repr=False)
    token: str = field(default="", repr=False)  # OAuth bearer token (cloud healthcare APIs)
    timeout: float = 30.0  # seconds, for connecting and for each read
    retries: int = 3
    backoff: float = 0.5  # seconds; doubles with each retry
    max_instance_bytes: int = 512 * 1024 * 1024

    def __post_init__(self) -> None:
        parts = urlsplit(self.url)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise DicomwebError(f"{self.url!r} is not an http(s) URL of a DICOMweb service")
        if parts.username or parts.password:
            raise DicomwebError(
                "put the credentials in --dicomweb-user and --dicomweb-password-env, not in the URL"
            )
        object.__setattr__(self, "url", self.url.rstrip("/"))


@dataclass(frozen=True)
class InstanceRef:
    study: str
    series: str
    sop: str


def parse_resource(path: str) -> InstanceRef | None:
    """Study, series and instance UIDs from a ReXVQA ImagePath (".../studies/.../instances/...")."""
    match = _RESOURCE.search(path.strip().replace("\\", "/"))
    if not match or any(len(uid) > 64 for uid in match.groupdict().values()):
        return None
    return InstanceRef(match["study"], match["series"], match["sop"])


def _reason(exc: Exception) -> str:
    text = str(exc)
    for needle, reason in (
        ("Connection refused", "connection refused"),
        ("Name or service not known", "unknown host name"),
        ("No route to host", "no route to host"),
        ("Connection reset", "connection reset"),
        ("RemoteDisconnected", "the server closed the connection"),
        ("CERTIFICATE_VERIFY_FAILED", "its TLS certificate is not trusted"),
    ):
        if needle in text:
            return reason
    return type(exc).__name__


class _CappedBody:
    """A response body that raises DicomwebError once more than `cap` bytes (after content
    decoding, so a compressed bomb counts at its real size) have been read from it.

    requests reads `raw.stream()` when it exists, else `raw.read()`: both go through `read`.
    """

    def __init__(self, raw: Any, cap: int):
        self._raw = raw
        self._cap = cap
        self._seen = 0

    def read(self, amt: int | None = None, *args: Any, **kwargs: Any) -> bytes:
        want = self._cap + 1 - self._seen if amt is None else min(amt, self._cap + 1 - self._seen)
        chunk = self._raw.read(max(want, 1), decode_content=True)
        self._seen += len(chunk)
        if self._seen > self._cap:
            self._raw.close()
            raise DicomwebError(
                f"the server sent more than the limit of {self._cap} bytes "
                "(DICOMWEB_MAX_INSTANCE_BYTES); stopped reading"
            )
        return chunk

    def stream(self, amt: int = 2**16, decode_content: bool | None = None):
        while chunk := self.read(amt):
            yield chunk

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


class DicomwebClient:
    """The few DICOMweb transactions the importer needs, with timeouts, retries, clear errors."""

    def __init__(self, config: DicomwebConfig):
        self.config = config
        session = requests.Session()
        retry = Retry(
            total=config.retries,
            connect=config.retries,
            read=config.retries,
            status=config.retries,
            backoff_factor=config.backoff,
            status_forcelist=_RETRY_STATUSES,
            allowed_methods=frozenset({"GET"}),
            raise_on_status=False,
        )
        adapter = HTTPAdapter(max_retries=retry)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        if config.username:
            session.auth = (config.username, config.password)
        headers = {"Authorization": f"Bearer {config.token}"} if config.token else None
        self._client = DICOMwebClient(
            config.url,
            session=session,
            headers=headers,
            timeout=config.timeout,
            callback=self._refuse_oversized,
        )
        self._client.set_http_retry_params(retry=False)

    def _refuse_oversized(self, response: requests.Response, *args: Any, **kwargs: Any):
        """Every response: refused at once when Content-Length is over the limit, and its body
        read through a counter that stops at the limit, for answers that send no length
        (chunked: a 200 MB answer under a 1 MB cap is not read whole)."""
        cap = self.config.max_instance_bytes
        length = response.headers.get("Content-Length", "")
        if length.isdigit() and int(length) > cap:
            response.close()
            raise DicomwebError(
                f"the server sent {int(length)} bytes, more than the limit of "
                f"{cap} (DICOMWEB_MAX_INSTANCE_BYTES)"
            )
        response.raw = _CappedBody(response.raw, cap)
        return response

    def instance_uri(self, ref: InstanceRef) -> str:
        return f"{self.config.url}/studies/{ref.study}/series/{ref.series}/instances/{ref.sop}"

    def _call(self, what: str, function: Callable[[], Any]) -> Any:
        url = self.config.url
        try:
            return function()
        except DicomwebError:
            raise
        except requests.exceptions.Timeout as exc:
            raise DicomwebError(
                f"the DICOMweb server {url} did not answer within {self.config.timeout:g} s "
                f"({what}; tried {self.config.retries + 1} times)"
            ) from exc
        except requests.exceptions.ConnectionError as exc:
            raise DicomwebError(
                f"cannot reach the DICOMweb server {url}: {_reason(exc)} "
                f"({what}; tried {self.config.retries + 1} times)"
            ) from exc
        except requests.exceptions.HTTPError as exc:
            status = exc.response.status_code if exc.response is not None else 0
            if status == 401:
                raise DicomwebError(
                    f"the DICOMweb server {url} refused the credentials (HTTP 401); "
                    "check --dicomweb-user and the password variable"
                ) from exc
            if status == 403:
                raise DicomwebError(
                    f"the DICOMweb server {url} does not allow this user to read {what} (HTTP 403)"
                ) from exc
            if status == 404:
                raise DicomwebError(
                    f"{what} is not on the DICOMweb server {url} (HTTP 404)"
                ) from exc
            raise DicomwebError(
                f"the DICOMweb server {url} answered HTTP {status} for {what}"
            ) from exc
        except requests.exceptions.RequestException as exc:
            raise DicomwebError(
                f"the connection to the DICOMweb server {url} failed while reading {what}: "
                f"{_reason(exc)}"
            ) from exc
        except Exception as exc:  # a malformed multipart body or DICOM part
            raise DicomwebError(
                f"the DICOMweb server {url} sent an unreadable answer for {what} ({exc})"
            ) from exc

    def fetch(self, ref: InstanceRef) -> bytes:
        """The instance as a DICOM Part-10 file, in the transfer syntax the server stores."""
        what = f"instance {ref.sop} (study {ref.study}, series {ref.series})"

        def retrieve() -> bytes:
            dataset = self._client.retrieve_instance(ref.study, ref.series, ref.sop)
            buffer = io.BytesIO()
            dataset.save_as(buffer, enforce_file_format=True)
            return buffer.getvalue()

        data = self._call(what, retrieve)
        if len(data) > self.config.max_instance_bytes:
            raise DicomwebError(
                f"{what} is {len(data)} bytes, more than the limit of "
                f"{self.config.max_instance_bytes} (DICOMWEB_MAX_INSTANCE_BYTES)"
            )
        return data

    def study_instances(self, study_uid: str) -> list[InstanceRef]:
        """The instances of a study (QIDO-RS), in series then instance number order."""
        what = f"study {study_uid}"
        rows = self._call(
            what,
            lambda: self._client.search_for_instances(
                study_instance_uid=study_uid,
                fields=["SeriesNumber", "InstanceNumber"],
                get_remaining=True,
            ),
        )

        def value(row: dict, tag: str) -> Any:
            values = (row.get(tag) or {}).get("Value") or [None]
            return values[0]

        refs = []
        for row in rows or []:
            series, sop = value(row, "0020000E"), value(row, "00080018")
            if not series or not sop or is_non_image(str(value(row, "00080016") or "")):
                continue
            order = (
                _number(value(row, "00200011")),
                _number(value(row, "00200013")),
                series,
                sop,
            )
            refs.append((order, InstanceRef(study_uid, str(series), str(sop))))
        if not refs:
            raise DicomwebError(
                f"{what} has no image instances on the DICOMweb server {self.config.url}"
            )
        return [ref for _, ref in sorted(refs)]


def is_non_image(sop_class_uid: str) -> bool:
    return sop_class_uid.startswith(NON_IMAGE_SOP_CLASS_PREFIXES)


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("inf")


class SourceCache:
    """Content-addressed local copies of fetched instances; forgets what a failed import wrote."""

    def __init__(self, media_root: Path):
        self.root = Path(media_root) / "sources"
        self.written: list[Path] = []

    def put(self, data: bytes) -> Path:
        digest = hashlib.sha256(data).hexdigest()
        target = self.root / digest[:2] / f"{digest}.dcm"
        if target.exists():
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, tmp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.written.append(target)
        return target

    def discard(self, keep: Callable[[str], bool] = lambda path: False) -> None:
        """Remove the files written so far, except those `keep` says are still referenced."""
        for path in self.written:
            if not keep(str(path)):
                path.unlink(missing_ok=True)
        self.written.clear()


class DicomwebSource:
    """An image source for the validation core: references in a record -> checked local files."""

    paths_required = False

    def __init__(
        self,
        client: DicomwebClient,
        cache: SourceCache,
        *,
        known: Mapping[str, str] | None = None,
        on_fetch: Callable[[InstanceRef], None] | None = None,
    ):
        self.client = client
        self.cache = cache
        self.known = dict(known or {})  # source_uri -> cached path, from earlier imports
        self.on_fetch = on_fetch
        self._done: dict[str, ParsedImage] = {}

    def image(self, raw: Any, qid: str) -> ParsedImage:
        if not isinstance(raw, str):
            raise RexvqaError(
                f"expected a path, got {type(raw).__name__}", question_id=qid, field="ImagePath"
            )
        if not raw.strip():
            raise RexvqaError("empty image path", question_id=qid, field="ImagePath")
        ref = parse_resource(raw)
        if ref is None:
            raise RexvqaError(
                f"{raw!r} does not name a DICOMweb instance; expected "
                "'.../studies/<uid>/series/<uid>/instances/<uid>'",
                question_id=qid,
                field="ImagePath",
            )
        return self._get(ref, qid, "ImagePath")

    def study_images(self, study_uid: str, qid: str) -> list[ParsedImage]:
        try:
            refs = self.client.study_instances(study_uid)
        except DicomwebError as exc:
            raise RexvqaError(str(exc), question_id=qid, field="StudyInstanceUid") from exc
        return [self._get(ref, qid, "StudyInstanceUid") for ref in refs]

    def _get(self, ref: InstanceRef, qid: str, field_name: str) -> ParsedImage:
        uri = self.client.instance_uri(ref)
        if uri in self._done:
            return self._done[uri]
        path = self.known.get(uri)
        if path is None or not Path(path).is_file():
            try:
                data = self.client.fetch(ref)
            except DicomwebError as exc:
                raise RexvqaError(str(exc), question_id=qid, field=field_name) from exc
            path = str(self.cache.put(data))
            if self.on_fetch is not None:
                self.on_fetch(ref)
        try:
            info = check_dicom_source(Path(path))
        except SourceCheckError as exc:
            raise RexvqaError(
                f"instance {ref.sop} from the DICOMweb server: {exc}",
                question_id=qid,
                field=field_name,
            ) from exc
        image = ParsedImage(path, info.view_position, info.modality, uri)
        self._done[uri] = image
        return image
