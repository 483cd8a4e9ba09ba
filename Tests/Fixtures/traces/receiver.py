#!/usr/bin/env python3
"""An OTLP/HTTP receiver for Herald's tests: decodes each POST /v1/traces and /v1/metrics body
with OpenTelemetry's own protobuf types (opentelemetry-proto) and appends every span, and every
metric of a metrics export, as one JSON line to FILE (a metric's line has "metric" and "export",
the export's number).

    receiver.py FILE [--hang] [--status CODE]

Prints `listening on PORT` once bound to 127.0.0.1. --hang accepts connections and reads the
requests but never answers (a collector that hangs); --status answers every export with CODE.
Runs until it is stopped (SIGTERM).
"""
import json, socket, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

path = sys.argv[1]
hang = "--hang" in sys.argv
status = int(sys.argv[sys.argv.index("--status") + 1]) if "--status" in sys.argv else 200
lock = threading.Lock()
exports = [0]


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
        answer = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
        if self.path not in ("/v1/traces", "/v1/metrics"):
            problem = f"path {self.path}"
        elif self.headers.get("Content-Type") != "application/x-protobuf":
            problem = f"content type {self.headers.get('Content-Type')}"
        elif self.path == "/v1/metrics":
            request = metrics_service_pb2.ExportMetricsServiceRequest()
            try:
                request.ParseFromString(body)
            except Exception as error:
                problem = f"undecodable body: {error}"
            else:
                with lock:
                    exports[0] += 1
                    number = exports[0]
                for resource_metrics in request.resource_metrics:
                    resource = attributes(resource_metrics.resource.attributes)
                    for scope_metrics in resource_metrics.scope_metrics:
                        for metric in scope_metrics.metrics:
                            kind = metric.WhichOneof("data")
                            data = getattr(metric, kind)
                            points = []
                            for point in data.data_points:
                                entry = {"attributes": attributes(point.attributes), "start": point.start_time_unix_nano, "time": point.time_unix_nano}
                                if kind == "histogram":
                                    entry.update(count=point.count, sum=point.sum, bucketCounts=list(point.bucket_counts), bounds=list(point.explicit_bounds))
                                else:
                                    entry["value"] = getattr(point, point.WhichOneof("value"))
                                    entry["valueType"] = point.WhichOneof("value")
                                points.append(entry)
                            lines.append(json.dumps({
                                "export": number, "metric": metric.name, "description": metric.description, "type": kind,
                                "monotonic": getattr(data, "is_monotonic", None), "temporality": getattr(data, "aggregation_temporality", None),
                                "points": points, "resource": resource,
                            }))
            answer = metrics_service_pb2.ExportMetricsServiceResponse().SerializeToString()
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
