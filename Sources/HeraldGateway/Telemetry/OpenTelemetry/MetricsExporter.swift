import HeraldAsync
import HeraldProtocol
import Logging
import Synchronization

/// Exports the gateway's metrics to an OTLP/HTTP collector every interval: the same registry
/// `/metrics` shows, read from its text exposition, as OpenTelemetry metrics (counters as
/// monotonic cumulative sums, gauges as gauges, histograms as explicit-bucket histograms), so
/// both ways of collecting say the same numbers.
final class MetricsExporter: Sendable {
    let endpoint: String
    private let interval: Duration
    private let resource: [Span.Attribute]
    private let sender: OTLPSender
    private let metrics: GatewayMetrics
    /// When the counters started (this process's start), for each point's start time.
    private let started = Span.now()
    private let stopping = Atomic<Bool>(false)
    private let wake = Signal()

    init(settings: GatewayConfiguration.OpenTelemetry, endpoint: String, worker: String, metrics: GatewayMetrics, logger: Logger) throws {
        self.endpoint = endpoint
        self.metrics = metrics
        interval = settings.metricsInterval
        sender = try OTLPSender(items: "metric snapshots", timeout: settings.timeout, logger: logger)
        resource = OTLPSender.resource(serviceName: settings.serviceName, worker: worker)
    }

    /// Exports every interval until ``stop()``, then once more (the last values).
    func run() async {
        while true {
            await wake.wait(timeout: interval)
            _ = await export()
            if stopping.load(ordering: .relaxed) { return }
        }
    }

    func stop() {
        stopping.store(true, ordering: .relaxed)
        wake.signal()
    }

    /// One snapshot, now; whether the collector took it.
    func export() async -> Bool {
        let families = PrometheusText.parse(String(decoding: metrics.exposition(), as: UTF8.self))
        let body = OTLPEncoding.metricsRequest(families, resource: resource, scope: ("herald.gateway", HeraldVersion.semantic), start: started, now: Span.now())
        return await sender.send(body, to: endpoint, count: 1)
    }
}

/// The Prometheus text exposition format, read back: families with their type, help and samples
/// ("Exposition formats", Prometheus). Only what the gateway's registry writes is needed, but
/// label values are unescaped as the format says (an app's id may hold any character).
enum PrometheusText {
    struct Sample: Sendable, Equatable {
        var name: String
        var labels: [(String, String)]
        var value: Double

        static func == (a: Sample, b: Sample) -> Bool {
            a.name == b.name && a.value == b.value && a.labels.elementsEqual(b.labels) { $0 == $1 }
        }
    }

    struct Family: Sendable, Equatable {
        var name: String
        var type: String
        var help: String = ""
        var samples: [Sample] = []
    }

    static func parse(_ text: String) -> [Family] {
        var families: [Family] = []
        var index: [String: Int] = [:]
        var help: [String: String] = [:]
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# HELP ") {
                let rest = line.dropFirst(7)
                let name = rest.prefix { $0 != " " }
                help[String(name)] = String(rest.dropFirst(name.count).drop { $0 == " " })
            } else if line.hasPrefix("# TYPE ") {
                let parts = line.dropFirst(7).split(separator: " ")
                guard parts.count == 2 else { continue }
                let name = String(parts[0])
                index[name] = families.count
                families.append(Family(name: name, type: String(parts[1]), help: help[name] ?? ""))
            } else if !line.hasPrefix("#"), let sample = sample(line) {
                // A histogram's samples carry a suffix on the family's name.
                var family = sample.name
                for suffix in ["_bucket", "_sum", "_count"] where index[family] == nil && family.hasSuffix(suffix) {
                    family.removeLast(suffix.count)
                }
                guard let at = index[family] else { continue }
                families[at].samples.append(sample)
            }
        }
        return families
    }

    /// `name{label="value",…} 1.5` (a timestamp after the value is ignored).
    static func sample(_ line: Substring) -> Sample? {
        var characters = line[...]
        let name = characters.prefix { $0 != "{" && $0 != " " }
        characters = characters.dropFirst(name.count)
        var labels: [(String, String)] = []
        if characters.first == "{" {
            characters = characters.dropFirst()
            while let first = characters.first, first != "}" {
                if first == "," || first == " " {
                    characters = characters.dropFirst()
                    continue
                }
                let label = characters.prefix { $0 != "=" }
                characters = characters.dropFirst(label.count)
                guard characters.first == "=" else { return nil }
                characters = characters.dropFirst()
                guard characters.first == "\"" else { return nil }
                characters = characters.dropFirst()
                var value = ""
                while let character = characters.first, character != "\"" {
                    characters = characters.dropFirst()
                    if character == "\\", let escaped = characters.first {
                        characters = characters.dropFirst()
                        value.append(escaped == "n" ? "\n" : escaped)
                    } else {
                        value.append(character)
                    }
                }
                guard characters.first == "\"" else { return nil }
                characters = characters.dropFirst()
                labels.append((String(label), value))
            }
            guard characters.first == "}" else { return nil }
            characters = characters.dropFirst()
        }
        let fields = characters.split(separator: " ")
        guard let text = fields.first else { return nil }
        let value: Double?
        switch text {
        case "+Inf": value = .infinity
        case "-Inf": value = -.infinity
        case "NaN": value = .nan
        default: value = Double(text)
        }
        guard let value, !name.isEmpty else { return nil }
        return Sample(name: String(name), labels: labels, value: value)
    }
}
