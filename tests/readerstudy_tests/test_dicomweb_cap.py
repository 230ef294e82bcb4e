"""The DICOMweb size cap holds without Content-Length (issue 25, finding 5): a chunked 200 MB
answer under a 1 MB cap was read whole. A local server streams chunked answers, plain and
gzip-compressed; the client stops at the cap and the server sees the connection go."""

import gzip
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from readerstudy.dicomweb import DicomwebClient, DicomwebConfig, DicomwebError, InstanceRef

CAP = 1024 * 1024
TOTAL = 64 * 1024 * 1024
CHUNK = 64 * 1024


class _Handler(BaseHTTPRequestHandler):
    written = 0
    gzip_body = False

    def log_message(self, *args):  # quiet
        pass

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", 'multipart/related; type="application/dicom"; boundary=b')
        self.send_header("Transfer-Encoding", "chunked")
        if self.gzip_body:
            self.send_header("Content-Encoding", "gzip")
        self.end_headers()
        payload = gzip.compress(b"\0" * TOTAL) if self.gzip_body else None
        try:
            if payload is not None:
                self._chunk(payload)
            else:
                for _ in range(TOTAL // CHUNK):
                    self._chunk(b"x" * CHUNK)
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        type(self).written += len(data)


@pytest.fixture
def server(request):
    handler = type("Handler", (_Handler,), {"written": 0, "gzip_body": request.param})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd, handler
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize("server", [False, True], ids=["chunked", "chunked-gzip"], indirect=True)
def test_a_chunked_answer_over_the_cap_is_refused_while_streaming(server):
    httpd, handler = server
    host, port = httpd.server_address
    config = DicomwebConfig(
        f"http://{host}:{port}/dicom-web", retries=0, timeout=10, max_instance_bytes=CAP
    )
    with pytest.raises(DicomwebError, match="more than the limit of 1048576 bytes"):
        DicomwebClient(config).fetch(InstanceRef("1.2", "1.2.3", "1.2.3.4"))
    if not handler.gzip_body:
        # The client stopped reading: the server could not push the whole answer (socket
        # buffers take a few MB at most).
        assert handler.written < TOTAL // 4, handler.written
