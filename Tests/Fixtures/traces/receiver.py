#!/usr/bin/env python3
"""An OTLP/HTTP trace receiver for Herald's tests: decodes each POST /v1/traces body with
OpenTelemetry's own protobuf types (opentelemetry-proto) and appends every span, as one JSON
line, to FILE.

    receiver.py FILE [--hang] [--status CODE]

Prints `listening on PORT` once bound to 127.0.0.1. --hang accepts connections and reads the
requests but never answers (a collector that hangs); --status answers every export with CODE.
Runs until it is stopped (SIGTERM).
"""
import json, socket, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

path = sys.argv[1]
hang = "--hang" in sys.argv
status = int(sys.argv[sys.argv.index("--status") + 1]) if "--status" in sys.argv else 200
lock = threading.Lock()


def value(any_value):
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


def attributes(items):
    return {item.key: value(item.value) for item in items}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if hang:
            threading.Event().wait(3600)
            return
        lines = []
        problem = None
        if self.path != "/v1/traces":
            problem = f"path {self.path}"
        elif self.headers.get("Content-Type") != "application/x-protobuf":
            problem = f"content type {self.headers.get('Content-Type')}"
        else:
            request = trace_service_pb2.ExportTraceServiceRequest()
            try:
                request.ParseFromString(body)
            except Exception as error:  # a body protobuf cannot read is the test's failure
                problem = f"undecodable body: {error}"
            else:
                for resource_spans in request.resource_spans:
                    resource = attributes(resource_spans.resource.attributes)
                    for scope_spans in resource_spans.scope_spans:
                        for span in scope_spans.spans:
                            lines.append(json.dumps({
                                "traceId": span.trace_id.hex(), "spanId": span.span_id.hex(),
                                "parentSpanId": span.parent_span_id.hex(), "name": span.name, "kind": span.kind,
                                "start": span.start_time_unix_nano, "end": span.end_time_unix_nano,
                                "attributes": attributes(span.attributes), "status": span.status.code,
                                "statusMessage": span.status.message, "resource": resource,
                                "scope": scope_spans.scope.name,
                            }))
        if problem:
            lines.append(json.dumps({"problem": problem}))
        with lock, open(path, "a") as out:
            for line in lines:
                out.write(line + "\n")
        answer = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
        self.send_response(status if not problem else 400)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
threading.Thread(target=server.serve_forever, daemon=True).start()
print(f"listening on {server.server_address[1]}", flush=True)
threading.Event().wait()
