"""make check-links-external, against a local server with live, dead and redirecting URLs."""

import http.server
import threading

import pytest

from mlbook.tools import extlinks

pytestmark = pytest.mark.slow


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (the http.server API)
        if self.path.startswith("/live"):
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"ok")
        elif self.path.startswith("/moved"):
            self.send_response(301)
            self.send_header("Location", "/live")
            self.end_headers()
        else:
            self.send_response(404)
            self.end_headers()

    do_HEAD = do_GET

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()
    thread.join()


def test_dead_and_redirected_links_are_reported_with_file_and_line(server, tmp_path, capsys):
    docs = tmp_path / "book"
    (docs / "part").mkdir(parents=True)
    (docs / "part" / "a.md").write_text(
        f"# A\n\nFine [live]({server}/live).\nGone [dead]({server}/dead).\n\n"
        f"```text\nnot a link {server}/dead-in-code\n```\n\nOld <{server}/moved>.\n"
    )
    code = extlinks.main([str(docs), "--timeout", "5", "--retries", "1"])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert out == [
        f"book/part/a.md:4: dead link: {server}/dead (404 Not Found); fix or remove the link",
        f"book/part/a.md:10: redirected link: {server}/moved now redirects to {server}/live; link the final address",
    ]


def test_all_live_exits_zero(server, tmp_path):
    docs = tmp_path / "book"
    docs.mkdir()
    (docs / "a.md").write_text(f"# A\n\n[live]({server}/live)\n")
    assert extlinks.main([str(docs), "--timeout", "5"]) == 0
