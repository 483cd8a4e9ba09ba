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
final class MockMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private struct Key: Hashable {
        var kind: NotificationRecord.Kind
        var status: Int?
        var reason: String?
    }

    private let requestCounters = Mutex<[Key: CoreMetrics.Counter]>([:])
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
