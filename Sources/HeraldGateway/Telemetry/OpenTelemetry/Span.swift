#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One operation of a trace, as OpenTelemetry records it: a request the API answered
/// (`server`), a submission's commit (`internal`), a delivery's attempt (`client`).
struct Span: Sendable {
    enum Kind: Int, Sendable {
        case `internal` = 1, server = 2, client = 3
    }

    /// A span's outcome: unset, or an error with its description.
    enum Status: Sendable, Equatable {
        case unset
        case error(String)
    }

    /// An attribute's value: the types the gateway's spans use.
    enum Value: Sendable, Equatable {
        case string(String)
        case int(Int64)
        case bool(Bool)
    }

    struct Attribute: Sendable, Equatable {
        var key: String
        var value: Value
    }

    var context: TraceContext
    var parentSpanID: SpanID?
    var name: String
    var kind: Kind
    /// Unix time in nanoseconds.
    var start: UInt64
    var end: UInt64 = 0
    var attributes: [Attribute] = []
    var status: Status = .unset

    /// A span starting now: under `parent` (the same trace), or the first of a new trace.
    init(_ name: String, kind: Kind, parent: TraceContext?) {
        context = parent?.child() ?? .newTrace()
        parentSpanID = parent?.spanID
        self.name = name
        self.kind = kind
        start = Self.now()
    }

    mutating func set(_ key: String, _ value: String) { attributes.append(Attribute(key: key, value: .string(value))) }
    mutating func set(_ key: String, _ value: Int) { attributes.append(Attribute(key: key, value: .int(Int64(value)))) }
    mutating func set(_ key: String, _ value: Bool) { attributes.append(Attribute(key: key, value: .bool(value))) }

    /// Now, in Unix nanoseconds (the real-time clock: spans are placed on the collector's
    /// timeline, whatever clock the gateway's logic is given).
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}

import HeraldClient

extension Span {
    /// APNs' answer to an attempt: its status and reason, or the client's failure.
    mutating func note(_ result: Result<APNsResponse, APNsClientError>) {
        switch result {
        case .success(let response):
            set("http.response.status_code", response.status)
        case .failure(let failure):
            if let status = failure.status { set("http.response.status_code", status) }
            if let reason = failure.reason { set("apns.reason", reason.rawValue) }
            set("error.type", "\(failure.kind)")
            status = .error(failure.message)
        }
    }

    /// What the attempt's delivery became: `accepted`, `rejected`, `retry` or `expired`, with
    /// the reason the gateway records.
    mutating func note(_ outcome: DeliveryOutcome.Result) {
        switch outcome {
        case .accepted:
            set("herald.outcome", "accepted")
        case .rejected(_, let reason, _, _):
            set("herald.outcome", "rejected")
            if let reason { set("herald.reason", reason) }
        case .retry(_, let reason):
            set("herald.outcome", "retry")
            if let reason { set("herald.reason", reason) }
        case .expired(let reason):
            set("herald.outcome", "expired")
            if let reason { set("herald.reason", reason) }
        }
    }
}
