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
    let settings: GatewayConfiguration.Traces
    private let resource: [Span.Attribute]
    private let poster: JSONPoster
    private let metrics: GatewayMetrics
    private let logger: Logger
    private let state = Mutex<State>(State())
    private let wake = Signal()

    private struct State {
        var spans: [Span] = []
        var stopping = false
        /// Lost since the last warning, and when that was.
        var lostSinceWarning = 0
        var warnedAt: ContinuousClock.Instant?
    }

    init(settings: GatewayConfiguration.Traces, worker: String, metrics: GatewayMetrics, logger: Logger) throws {
        self.settings = settings
        self.metrics = metrics
        self.logger = logger
        poster = try JSONPoster(userAgent: "herald-gateway/\(HeraldVersion.semantic)")
        let host = ProcessInfo.processInfo.hostName
        resource = [
            .init(key: "service.name", value: .string(settings.serviceName)),
            .init(key: "service.version", value: .string(HeraldVersion.semantic)),
            .init(key: "service.instance.id", value: .string(worker)),
            .init(key: "host.name", value: .string(host)),
            .init(key: "process.pid", value: .int(Int64(ProcessInfo.processInfo.processIdentifier))),
        ]
    }

    /// Adds a finished span; drops it (counted) when the buffer is full.
    func record(_ span: Span) {
        let held = state.withLock { state -> Int? in
            guard state.spans.count < settings.bufferLimit else {
                state.lostSinceWarning += 1
                return nil
            }
            state.spans.append(span)
            return state.spans.count
        }
        guard let held else { return metrics.traceSpans("dropped") }
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
                await wake.wait(timeout: settings.interval)
                continue
            }
            await export(batch)
            // A part batch: the next waits for more spans (or the interval).
            if batch.count < Self.batchSize, !stopping { await wake.wait(timeout: settings.interval) }
        }
    }

    /// Exports what is buffered and ends ``run()``.
    func stop() {
        state.withLock { $0.stopping = true }
        wake.signal()
    }

    private func export(_ batch: [Span]) async {
        let body = OTLPEncoding.exportRequest(batch, resource: resource, scope: ("herald.gateway", HeraldVersion.semantic))
        let failure: String
        do {
            let answer = try await poster.post(
                settings.endpoint, body: body, headers: [], contentType: "application/x-protobuf", timeout: settings.timeout)
            if (200..<300).contains(answer.status) {
                metrics.traceSpans("exported", count: batch.count)
                return
            }
            failure = "the collector answered \(answer.status): \(String(decoding: answer.prefix, as: UTF8.self))"
        } catch {
            failure = "\(error)"
        }
        metrics.traceSpans("failed", count: batch.count)
        // At most one warning a minute, with what was lost since the last.
        let report = state.withLock { state -> Int? in
            state.lostSinceWarning += batch.count
            if let warned = state.warnedAt, ContinuousClock.now - warned < .seconds(60) { return nil }
            state.warnedAt = .now
            defer { state.lostSinceWarning = 0 }
            return state.lostSinceWarning
        }
        if let report {
            logger.warning("traces could not be exported; their spans are dropped (sending goes on)", metadata: [
                "endpoint": "\(settings.endpoint)", "error": "\(failure)", "spans_lost": "\(report)",
            ])
        }
    }
}
