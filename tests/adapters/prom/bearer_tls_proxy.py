#!/usr/bin/env python3
# A TLS-terminating reverse proxy for tests (tests/adapters/prom/monitoring_stack.h): it answers
# on 127.0.0.1:PORT with the certificate and key given, refuses (401) every request whose
# Authorization header is not exactly "Bearer <the value of $TOKEN_ENV>", and forwards the
# others to a plain-HTTP upstream on 127.0.0.1. It stands in front of Alertmanager because
# Prometheus and Alertmanager (web config) check basic auth, never a bearer token. It prints
# "bearer-tls-proxy: listening" once it accepts connections and counts refused requests in
# the file named by its last argument.
#   bearer_tls_proxy.py PORT UPSTREAM_PORT CERT KEY TOKEN_ENV REFUSALS_FILE
import http.server
import os
import ssl
import sys
import urllib.error
import urllib.request

port, upstream, cert, key, token_env, refusals = sys.argv[1:7]
expected = "Bearer " + os.environ[token_env]


class Proxy(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):  # no access log: it would hold request headers
        pass

    def forward(self):
        if self.headers.get("Authorization") != expected:
            with open(refusals, "a") as out:
                out.write("refused\n")
            self.send_response(401)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        request = urllib.request.Request(
            "http://127.0.0.1:%s%s" % (upstream, self.path), data=body, method=self.command)
        if self.headers.get("Content-Type"):
            request.add_header("Content-Type", self.headers["Content-Type"])
        try:
            with urllib.request.urlopen(request, timeout=5) as answer:
                status, payload = answer.status, answer.read()
        except urllib.error.HTTPError as error:
            status, payload = error.code, error.read()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_DELETE = forward


server = http.server.ThreadingHTTPServer(("127.0.0.1", int(port)), Proxy)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)
server.socket = context.wrap_socket(server.socket, server_side=True)
print("bearer-tls-proxy: listening", flush=True)
server.serve_forever()
