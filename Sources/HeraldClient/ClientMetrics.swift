import Dispatch
import HeraldProtocol
import Metrics
import NIOCore
import Synchronization

/// The client's swift-metrics instruments: requests sent, accepted, rejected by reason,
/// retries, latency, open connections, connection attempts and failures, and requests in flight.
final class ClientMetrics: Sendable {
    let sent: Counter
    let accepted: Counter
    let retries: Counter
    let failed: Counter
    let latency: Metrics.Timer
    let connections: Gauge
    /// Connections tried, and those that could not be opened (refused, TLS, no settings).
    let connectionAttempts: Counter
    let connectionFailures: Counter
    let inFlight: Gauge
    private let rejectedByReason: CounterFamily
    private let openConnections = Atomic<Int>(0)
    private let requestsInFlight = Atomic<Int>(0)

    init(prefix: String, factory: any MetricsFactory) {
        sent = Counter(label: "\(prefix)_sent_total", factory: factory)
        accepted = Counter(label: "\(prefix)_accepted_total", factory: factory)
        retries = Counter(label: "\(prefix)_retries_total", factory: factory)
        failed = Counter(label: "\(prefix)_failed_total", factory: factory)
        latency = Metrics.Timer(label: "\(prefix)_latency_seconds", factory: factory)
        connections = Gauge(label: "\(prefix)_connections", factory: factory)
        connectionAttempts = Counter(label: "\(prefix)_connection_attempts_total", factory: factory)
        connectionFailures = Counter(label: "\(prefix)_connection_failures_total", factory: factory)
        inFlight = Gauge(label: "\(prefix)_requests_in_flight", factory: factory)
        rejectedByReason = CounterFamily("\(prefix)_rejected_total", dimensions: ["reason"], factory: factory)
    }

    func rejected(_ reason: APNsReason) { rejectedByReason.increment(reason.rawValue) }

    /// A request takes (or gives back) its place among those in flight.
    func requestStarted() { inFlight.record(requestsInFlight.add(1, ordering: .relaxed).newValue) }
    func requestEnded() { inFlight.record(requestsInFlight.subtract(1, ordering: .relaxed).newValue) }

    func connectionOpened() { connections.record(openConnections.add(1, ordering: .relaxed).newValue) }
    func connectionClosed() { connections.record(openConnections.subtract(1, ordering: .relaxed).newValue) }
}
