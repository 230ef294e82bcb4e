"""A throw-away local Orthanc PACS for the tests and `make demo-pacs` (never for production).

Debian's `orthanc` and `orthanc-dicomweb` packages, started from a generated configuration:
loopback only (RemoteAccessAllowed false), HTTP Basic auth with one user, the DICOMweb plugin
on under /dicom-web/, storage in a folder of our own, the DICOM (DIMSE) server off, and free
ports, so it never collides with a system Orthanc on 8042/4242.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

import requests

ORTHANC_BINARY = "/usr/sbin/Orthanc"
DICOMWEB_PLUGIN = "/usr/share/orthanc/plugins/libOrthancDicomWeb.so"
INSTALL_HINT = "apt-get install orthanc orthanc-dicomweb"


class OrthancError(RuntimeError):
    pass


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def unavailable_reason(binary: str = ORTHANC_BINARY, plugin: str = DICOMWEB_PLUGIN) -> str:
    """Why a local Orthanc cannot run here ("" when it can)."""
    if not (Path(binary).is_file() or shutil.which(binary)):
        return f"{binary} not found ({INSTALL_HINT})"
    if not Path(plugin).exists():
        return f"the DICOMweb plugin {plugin} is not installed ({INSTALL_HINT})"
    return ""


class LocalOrthanc:
    def __init__(
        self,
        workdir: Path,
        *,
        user: str = "readerstudy",
        password: str = "local-test-password",
        http_port: int | None = None,
        binary: str = ORTHANC_BINARY,
        plugin: str = DICOMWEB_PLUGIN,
    ):
        self.workdir = Path(workdir)
        self.user, self.password = user, password
        self.http_port = http_port or free_port()
        self.binary, self.plugin = binary, plugin
        self.process: subprocess.Popen | None = None
        self.config_path = self.workdir / "orthanc.json"
        self.log_path = self.workdir / "orthanc.log"
        self.pid_path = self.workdir / "orthanc.pid"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def dicomweb_url(self) -> str:
        return f"{self.base_url}/dicom-web"

    def write_config(self) -> None:
        storage = self.workdir / "storage"
        storage.mkdir(parents=True, exist_ok=True)
        config = {
            "Name": "ReaderStudyLocal",
            "StorageDirectory": str(storage),
            "IndexDirectory": str(storage),
            "HttpPort": self.http_port,
            "HttpServerEnabled": True,
            "RemoteAccessAllowed": False,
            "AuthenticationEnabled": True,
            "RegisteredUsers": {self.user: self.password},
            "DicomServerEnabled": False,
            "DicomPort": free_port(),
            "Plugins": [self.plugin],
            "DicomWeb": {"Enable": True, "Root": "/dicom-web/", "EnableWado": False},
            "StableAge": 1,
        }
        self.config_path.write_text(json.dumps(config, indent=2))

    def start(self, timeout: float = 30.0) -> None:
        reason = unavailable_reason(self.binary, self.plugin)
        if reason:
            raise OrthancError(reason)
        if self.process is not None and self.process.poll() is None:
            return
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.write_config()
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [self.binary, str(self.config_path)],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.workdir,
                start_new_session=True,
            )
        self.pid_path.write_text(str(self.process.pid))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise OrthancError(
                    f"Orthanc exited at start-up; see {self.log_path}:\n{self._tail()}"
                )
            try:
                answer = requests.get(
                    f"{self.base_url}/system", auth=(self.user, self.password), timeout=2
                )
                if answer.status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.2)
        self.stop()
        raise OrthancError(f"Orthanc did not answer within {timeout:g} s:\n{self._tail()}")

    def _tail(self) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-15:])
        except OSError:
            return ""

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self.process = None
        self.pid_path.unlink(missing_ok=True)

    def store(self, files: Iterable[Path | str | object]) -> int:
        """Load DICOM files (paths or pydicom datasets) by STOW-RS; return how many."""
        import pydicom
        from dicomweb_client.api import DICOMwebClient

        session = requests.Session()
        session.auth = (self.user, self.password)
        client = DICOMwebClient(self.dicomweb_url, session=session, timeout=60)
        datasets = [f if isinstance(f, pydicom.Dataset) else pydicom.dcmread(f) for f in files]
        for dataset in datasets:  # one request per instance keeps each body small
            client.store_instances([dataset])
        return len(datasets)
