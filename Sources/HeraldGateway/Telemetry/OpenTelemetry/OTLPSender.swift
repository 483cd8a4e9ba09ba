import Foundation
import HeraldHTTPAPI
import HeraldProtocol
import Logging
import Synchronization

/// Posts OTLP/HTTP requests (protobuf) to a collector, each bounded by the export timeout, and
/// says what was lost in one log line a minute at most: what traces and metrics share.
final class OTLPSender: Sendable {
    /// `spans` or `metric snapshots`: what a lost export held.
    let items: String
    let timeout: Duration
    private let poster: JSONPoster
    private let logger: Logger
    private let warning = Mutex<(lost: Int, at: ContinuousClock.Instant?)>((0, nil))

    init(items: String, timeout: Duration, logger: Logger) throws {
        self.items = items
        self.timeout = timeout
        self.logger = logger
        poster = try JSONPoster(userAgent: "herald-gateway/\(HeraldVersion.semantic)")
    }

    /// What every export says of this process (the OTLP resource).
    static func resource(serviceName: String, worker: String) -> [Span.Attribute] {
        [
            .init(key: "service.name", value: .string(serviceName)),
            .init(key: "service.version", value: .string(HeraldVersion.semantic)),
            .init(key: "service.instance.id", value: .string(worker)),
            .init(key: "host.name", value: .string(ProcessInfo.processInfo.hostName)),
            .init(key: "process.pid", value: .int(Int64(ProcessInfo.processInfo.processIdentifier))),
        ]
    }

    /// Posts `body` (holding `count` items) to `endpoint`; whether the collector took it (2xx).
    func send(_ body: [UInt8], to endpoint: String, count: Int) async -> Bool {
        let failure: String
        do {
            let answer = try await poster.post(endpoint, body: body, headers: [], contentType: "application/x-protobuf", timeout: timeout)
            if (200..<300).contains(answer.status) { return true }
            failure = "the collector answered \(answer.status): \(String(decoding: answer.prefix, as: UTF8.self))"
        } catch {
            failure = "\(error)"
        }
        lost(count, why: failure, endpoint: endpoint)
        return false
    }

    /// Counts `count` items lost (dropped before an export, or in one that failed) and warns at
    /// most once a minute with what was lost since the last warning.
    func lost(_ count: Int, why: String? = nil, endpoint: String? = nil) {
        let report = warning.withLock { warning -> Int? in
            warning.lost += count
            guard why != nil, !(warning.at.map { ContinuousClock.now - $0 < .seconds(60) } ?? false) else { return nil }
            warning.at = .now
            defer { warning.lost = 0 }
            return warning.lost
        }
        if let report, let why {
            logger.warning("OpenTelemetry export failed; what it held is dropped (sending goes on)", metadata: [
                "endpoint": "\(endpoint ?? "")", "error": "\(why)", "lost": "\(report) \(items)",
            ])
        }
    }
}
