"""``python -m http.server`` with HTTP range requests (206 Partial Content), for the tests of
``sieve-lite get``'s resume. (The standard library's server of Python 3.11 ignores ``Range``
and always sends the whole file, which ``get`` must handle too: see test_get.py.)

    python tests/range_http.py PORT DIRECTORY
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import sys


class RangeHandler(http.server.SimpleHTTPRequestHandler):
    def send_head(self):  # type: ignore[override]
        m = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range", ""))
        path = self.translate_path(self.path)
        if not m or not os.path.isfile(path):
            return super().send_head()
        f = open(path, "rb")  # noqa: SIM115 - the base class closes it after copying
        st = os.fstat(f.fileno())
        modified = self.date_time_string(int(st.st_mtime))
        if self.headers.get("If-Range") not in (None, modified):
            f.close()
            return super().send_head()  # the file changed: all of it, 200
        start = int(m.group(1))
        if start >= st.st_size:
            f.close()
            self.send_error(416, "Range Not Satisfiable")
            return None
        self.send_response(206)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Range", f"bytes {start}-{st.st_size - 1}/{st.st_size}")
        self.send_header("Content-Length", str(st.st_size - start))
        self.send_header("Last-Modified", modified)
        self.end_headers()
        f.seek(start)
        return f


if __name__ == "__main__":
    port, directory = int(sys.argv[1]), sys.argv[2]
    handler = functools.partial(RangeHandler, directory=directory)
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        server.serve_forever()
