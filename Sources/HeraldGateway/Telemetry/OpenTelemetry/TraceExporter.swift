import Foundation
import HeraldAsync
import HeraldHTTPAPI
import HeraldProtocol
import Logging
import Synchronization

/// Sends finished spans to an OTLP/HTTP collector in batches, and never holds sending up: a
/// span is added to a bounded buffer under a lock (no waiting, no allocation beyond the span),
/// one export at a time takes up to ``batchSize`` of them, and while the collector is slow or
/// away the buffer fills and the spans past its bound are dropped and counted
/// (`herald_gateway_trace_spans_total{result="dropped"}`), as are those of a batch the collector
/// refused or did not answer in time (`failed`).
final class TraceExporter: Sendable {
    static let batchSize = 512
    let settings: GatewayConfiguration.OpenTelemetry
    let endpoint: String
    private let resource: [Span.Attribute]
    private let sender: OTLPSender
    private let metrics: GatewayMetrics
    private let state = Mutex<State>(State())
    private let wake = Signal()
    private let dropReason: String

    private struct State {
        var spans: [Span] = []
        var stopping = false
    }

    init(settings: GatewayConfiguration.OpenTelemetry, endpoint: String, worker: String, metrics: GatewayMetrics, logger: Logger) throws {
        self.settings = settings
        self.endpoint = endpoint
        self.metrics = metrics
        sender = try OTLPSender(items: "spans", timeout: settings.timeout, logger: logger)
        resource = OTLPSender.resource(serviceName: settings.serviceName, worker: worker)
        dropReason = "the buffer of \(settings.spanBufferLimit) spans is full: the collector takes them slower than the gateway makes them"
    }

    /// Adds a finished span; drops it (counted) when the buffer is full.
    func record(_ span: Span) {
        let held = state.withLock { state -> Int? in
            guard state.spans.count < settings.spanBufferLimit else { return nil }
            state.spans.append(span)
            return state.spans.count
        }
        guard let held else {
            sender.lost(1, why: dropReason, endpoint: endpoint)
            return metrics.traceSpans("dropped")
        }
        if held == Self.batchSize { wake.signal() }
    }

    /// Spans waiting in the buffer.
    var buffered: Int { state.withLock { $0.spans.count } }

    /// Exports until ``stop()``, then what is left (one batch at a time; the caller bounds how
    /// long it waits).
    func run() async {
        while true {
            let (batch, stopping) = state.withLock { state in
                let count = min(Self.batchSize, state.spans.count)
                let batch = Array(state.spans.prefix(count))
                state.spans.removeFirst(count)
                return (batch, state.stopping)
            }
            if batch.isEmpty {
                if stopping { return }
                await wake.wait(timeout: settings.spanInterval)
                continue
            }
            let body = OTLPEncoding.exportRequest(batch, resource: resource, scope: ("herald.gateway", HeraldVersion.semantic))
            let sent = await sender.send(body, to: endpoint, count: batch.count)
            metrics.traceSpans(sent ? "exported" : "failed", count: batch.count)
            // A part batch: the next waits for more spans (or the interval).
            if batch.count < Self.batchSize, !stopping { await wake.wait(timeout: settings.spanInterval) }
        }
    }

    /// Exports what is buffered and ends ``run()``.
    func stop() {
        state.withLock { $0.stopping = true }
        wake.signal()
    }
}
