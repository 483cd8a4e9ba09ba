import CoreMetrics
import HeraldClient
import HeraldProtocol
import Metrics
import Prometheus

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
/// - `herald_mock_streams_not_processed_total`: streams clients opened above a GOAWAY's
///   last-stream-id (lost unless the client sends them again).
final class MockMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private let requests: CounterFamily
    private let connectionEvents: CounterFamily
    let resetsOfAnsweredStreams: CoreMetrics.Counter
    let resetsOfOpenStreams: CoreMetrics.Counter
    let connectionsOpened: CoreMetrics.Counter
    let streamsNotProcessed: CoreMetrics.Counter
    let connectionsOpen: CoreMetrics.Meter
    let devices: CoreMetrics.Gauge
    let records: CoreMetrics.Gauge

    init() {
        factory = PrometheusMetricsFactory(registry: registry)
        connectionsOpened = CoreMetrics.Counter(label: "herald_mock_connections_total", factory: factory)
        streamsNotProcessed = CoreMetrics.Counter(label: "herald_mock_streams_not_processed_total", factory: factory)
        connectionsOpen = CoreMetrics.Meter(label: "herald_mock_connections_open", factory: factory)
        devices = CoreMetrics.Gauge(label: "herald_mock_devices", factory: factory)
        records = CoreMetrics.Gauge(label: "herald_mock_records", factory: factory)
        resetsOfAnsweredStreams = CoreMetrics.Counter(label: "herald_mock_resets_received_total", dimensions: [("stream", "answered")], factory: factory)
        resetsOfOpenStreams = CoreMetrics.Counter(label: "herald_mock_resets_received_total", dimensions: [("stream", "open")], factory: factory)
        requests = CounterFamily("herald_mock_requests_total", dimensions: ["kind", "status", "reason"], factory: factory)
        connectionEvents = CounterFamily("herald_mock_connection_events_total", dimensions: ["kind", "code"], factory: factory)
    }

    func count(_ event: ConnectionEvent) { connectionEvents.increment(event.kind.rawValue, event.code ?? "") }

    /// The `herald_mock_requests_total` counter a record counts in.
    func requestCounter(for record: NotificationRecord) -> CoreMetrics.Counter {
        requests.counter(record.kind.rawValue, record.status.map(String.init) ?? "none", record.reason?.rawValue ?? "")
    }

    /// One connection's own index of the request counters it has counted in, so that counting a
    /// request takes no lock and makes no strings: the family's look-up made the status's text
    /// and hashed three strings under a lock both event loops share, for every request.
    struct RequestCounters: Sendable {
        private struct Key: Hashable {
            var kind: NotificationRecord.Kind
            var status: Int?
            var reason: APNsReason?
        }

        /// At most one per kind, status and reason the mock answers with.
        private var counters: [Key: CoreMetrics.Counter] = [:]

        /// Counts `record` in `metrics`' counter for its kind, status and reason.
        mutating func count(_ record: NotificationRecord, in metrics: MockMetrics) {
            let key = Key(kind: record.kind, status: record.status, reason: record.reason)
            if let counter = counters[key] { return counter.increment() }
            let counter = metrics.requestCounter(for: record)
            counters[key] = counter
            counter.increment()
        }
    }

    /// The text exposition format.
    func exposition(devices deviceCount: Int, records recordCount: Int) -> [UInt8] {
        devices.record(deviceCount)
        records.record(recordCount)
        return registry.emitToBuffer()
    }
}
