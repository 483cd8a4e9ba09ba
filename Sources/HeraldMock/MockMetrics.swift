import CoreMetrics
import Metrics
import Prometheus
import Synchronization

/// The mock's Prometheus metrics, recorded through swift-metrics into a registry of its own (so
/// several mocks in one test process keep separate figures).
///
/// - `herald_mock_requests_total{kind, status, reason}`: requests answered (or not: status `none`).
/// - `herald_mock_connections_total` and `herald_mock_connections_open`.
/// - `herald_mock_devices`, `herald_mock_records`: devices simulated and requests stored.
/// - `herald_mock_connection_events_total{kind, code}`: GOAWAYs sent and received, resets
///   received on unanswered streams and sent, protocol errors, closes (the connection log).
/// - `herald_mock_resets_received_total{stream}`: every RST_STREAM a client sent, on a stream
///   already `answered` (harmless: AsyncHTTPClient resets streams whose body it did not read) or
///   still `open` (what the rapid-reset defence counts).
final class MockMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private struct Key: Hashable {
        var kind: NotificationRecord.Kind
        var status: Int?
        var reason: String?
    }

    private let requestCounters = Mutex<[Key: CoreMetrics.Counter]>([:])
    private let eventCounters = Mutex<[String: CoreMetrics.Counter]>([:])
    let resetsOfAnsweredStreams: CoreMetrics.Counter
    let resetsOfOpenStreams: CoreMetrics.Counter
    let connectionsOpened: CoreMetrics.Counter
    let connectionsOpen: CoreMetrics.Meter
    let devices: CoreMetrics.Gauge
    let records: CoreMetrics.Gauge

    init() {
        factory = PrometheusMetricsFactory(registry: registry)
        connectionsOpened = CoreMetrics.Counter(label: "herald_mock_connections_total", factory: factory)
        connectionsOpen = CoreMetrics.Meter(label: "herald_mock_connections_open", factory: factory)
        devices = CoreMetrics.Gauge(label: "herald_mock_devices", factory: factory)
        records = CoreMetrics.Gauge(label: "herald_mock_records", factory: factory)
        resetsOfAnsweredStreams = CoreMetrics.Counter(label: "herald_mock_resets_received_total", dimensions: [("stream", "answered")], factory: factory)
        resetsOfOpenStreams = CoreMetrics.Counter(label: "herald_mock_resets_received_total", dimensions: [("stream", "open")], factory: factory)
    }

    func count(_ event: ConnectionEvent) {
        let key = event.kind.rawValue + "|" + (event.code ?? "")
        let counter = eventCounters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = CoreMetrics.Counter(
                label: "herald_mock_connection_events_total", dimensions: [("kind", event.kind.rawValue), ("code", event.code ?? "")], factory: factory)
            counters[key] = counter
            return counter
        }
        counter.increment()
    }

    func count(_ record: NotificationRecord) {
        let key = Key(kind: record.kind, status: record.status, reason: record.reason?.rawValue)
        let counter = requestCounters.withLock { counters in
            if let counter = counters[key] { return counter }
            let status = record.status.map(String.init) ?? "none"
            let reason = record.reason?.rawValue ?? ""
            let counter = CoreMetrics.Counter(
                label: "herald_mock_requests_total",
                dimensions: [("kind", record.kind.rawValue), ("status", status), ("reason", reason)], factory: factory)
            counters[key] = counter
            return counter
        }
        counter.increment()
    }

    /// The text exposition format.
    func exposition(devices deviceCount: Int, records recordCount: Int) -> [UInt8] {
        devices.record(deviceCount)
        records.record(recordCount)
        return registry.emitToBuffer()
    }
}
