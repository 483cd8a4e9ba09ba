/// Spans as OTLP's protobuf message `ExportTraceServiceRequest`
/// (opentelemetry/proto/collector/trace/v1), what an OTLP/HTTP collector takes at `/v1/traces`
/// with `Content-Type: application/x-protobuf` ("OTLP Specification", OpenTelemetry).
///
/// Only the fields the gateway's spans use are written; a field left out is its default in
/// protobuf, so the collector reads the rest as unset.
enum OTLPEncoding {
    /// One request: the spans of one resource (this process) and one instrumentation scope.
    static func exportRequest(_ spans: [Span], resource: [Span.Attribute], scope: (name: String, version: String)) -> [UInt8] {
        envelope(spans.map(encode), resource: resource, scope: scope)
    }

    /// What both requests are: field 1, one `ResourceSpans` (or `ResourceMetrics`) holding the
    /// `Resource` (1) and one `ScopeSpans` (or `ScopeMetrics`, 2) of the scope (1) and `items`
    /// (2, each an encoded `Span` or `Metric`).
    private static func envelope(_ items: [[UInt8]], resource: [Span.Attribute], scope: (name: String, version: String)) -> [UInt8] {
        var resourceMessage = Writer()
        for attribute in resource { resourceMessage.message(1, keyValue(attribute)) }
        var scopeMessage = Writer()
        scopeMessage.string(1, scope.name)
        scopeMessage.string(2, scope.version)
        var scoped = Writer()
        scoped.message(1, scopeMessage.bytes)
        for item in items { scoped.message(2, item) }
        var resourceItems = Writer()
        resourceItems.message(1, resourceMessage.bytes)
        resourceItems.message(2, scoped.bytes)
        var request = Writer()
        request.message(1, resourceItems.bytes)
        return request.bytes
    }

    /// A `Span` message.
    static func encode(_ span: Span) -> [UInt8] {
        var out = Writer()
        out.bytesField(1, span.context.traceID.bytes)
        out.bytesField(2, span.context.spanID.bytes)
        if let parent = span.parentSpanID { out.bytesField(4, parent.bytes) }
        out.string(5, span.name)
        out.varintField(6, UInt64(span.kind.rawValue))
        out.fixed64(7, span.start)
        out.fixed64(8, span.end)
        for attribute in span.attributes { out.message(9, keyValue(attribute)) }
        if case .error(let message) = span.status {
            var status = Writer()
            status.string(2, message)
            status.varintField(3, 2)  // STATUS_CODE_ERROR
            out.message(15, status.bytes)
        }
        return out.bytes
    }

    /// A `KeyValue` message.
    static func keyValue(_ attribute: Span.Attribute) -> [UInt8] {
        var value = Writer()
        switch attribute.value {
        case .string(let text): value.string(1, text, always: true)
        case .bool(let flag): value.varintField(2, flag ? 1 : 0, always: true)
        case .int(let number): value.varintField(3, UInt64(bitPattern: number), always: true)
        }
        var out = Writer()
        out.string(1, attribute.key)
        out.message(2, value.bytes)
        return out.bytes
    }

    /// Protobuf's wire format: tags, varints, fixed 64-bit values, length-delimited fields.
    struct Writer {
        var bytes: [UInt8] = []

        mutating func varint(_ value: UInt64) {
            var value = value
            while value >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
        }

        mutating func tag(_ field: Int, _ wireType: UInt64) { varint(UInt64(field) << 3 | wireType) }

        /// A varint field; a zero is left out (proto3's default) unless `always` (inside a
        /// `oneof`, where presence is the value).
        mutating func varintField(_ field: Int, _ value: UInt64, always: Bool = false) {
            guard value != 0 || always else { return }
            tag(field, 0)
            varint(value)
        }

        mutating func fixed64(_ field: Int, _ value: UInt64) {
            tag(field, 1)
            rawFixed64(value)
        }

        /// Eight bytes, little-endian (a fixed64, sfixed64 or double without its tag).
        mutating func rawFixed64(_ value: UInt64) {
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        }

        mutating func bytesField(_ field: Int, _ value: [UInt8]) {
            tag(field, 2)
            varint(UInt64(value.count))
            bytes += value
        }

        mutating func string(_ field: Int, _ value: String, always: Bool = false) {
            guard !value.isEmpty || always else { return }
            bytesField(field, Array(value.utf8))
        }

        mutating func message(_ field: Int, _ value: [UInt8]) { bytesField(field, value) }
    }
}

extension OTLPEncoding {
    /// Metric families as `ExportMetricsServiceRequest` (opentelemetry/proto/collector/metrics/v1):
    /// counters as monotonic cumulative `Sum`s, gauges as `Gauge`s, histograms as cumulative
    /// explicit-bucket `Histogram`s; other types are left out. `start` and `now` are Unix
    /// nanoseconds.
    static func metricsRequest(
        _ families: [PrometheusText.Family], resource: [Span.Attribute], scope: (name: String, version: String), start: UInt64, now: UInt64
    ) -> [UInt8] {
        envelope(families.compactMap { metric($0, start: start, now: now) }, resource: resource, scope: scope)
    }

    private static let cumulative: UInt64 = 2  // AGGREGATION_TEMPORALITY_CUMULATIVE

    private static func metric(_ family: PrometheusText.Family, start: UInt64, now: UInt64) -> [UInt8]? {
        var data = Writer()
        let field: Int
        switch family.type {
        case "counter", "gauge":
            for sample in family.samples {
                var point = Writer()
                for (key, value) in sample.labels { point.message(7, keyValue(.init(key: key, value: .string(value)))) }
                if family.type == "counter" { point.fixed64(2, start) }
                point.fixed64(3, now)
                if sample.value.rounded() == sample.value, abs(sample.value) < 9.0e15 {
                    point.tag(6, 1)  // as_int, sfixed64
                    point.rawFixed64(UInt64(bitPattern: Int64(sample.value)))
                } else {
                    point.tag(4, 1)  // as_double
                    point.rawFixed64(sample.value.bitPattern)
                }
                data.message(1, point.bytes)
            }
            if family.type == "counter" {
                data.varintField(2, cumulative)
                data.varintField(3, 1)  // is_monotonic
                field = 7
            } else {
                field = 5
            }
        case "histogram":
            // One point per label set (without `le`): its buckets' cumulative counts become
            // per-bucket counts, the last one above the highest bound.
            var order: [[String]] = []
            var points: [[String]: (labels: [(String, String)], buckets: [(Double, Double)], sum: Double, count: Double)] = [:]
            for sample in family.samples {
                let labels = sample.labels.filter { $0.0 != "le" }
                let key = labels.flatMap { [$0.0, $0.1] }
                if points[key] == nil {
                    order.append(key)
                    points[key] = (labels, [], 0, 0)
                }
                if sample.name.hasSuffix("_bucket"), let bound = sample.labels.first(where: { $0.0 == "le" }).map({ $0.1 == "+Inf" ? Double.infinity : Double($0.1) }), let bound {
                    points[key]?.buckets.append((bound, sample.value))
                } else if sample.name.hasSuffix("_sum") {
                    points[key]?.sum = sample.value
                } else if sample.name.hasSuffix("_count") {
                    points[key]?.count = sample.value
                }
            }
            for key in order {
                guard let entry = points[key] else { continue }
                let buckets = entry.buckets.sorted { $0.0 < $1.0 }
                var point = Writer()
                for (key, value) in entry.labels { point.message(9, keyValue(.init(key: key, value: .string(value)))) }
                point.fixed64(2, start)
                point.fixed64(3, now)
                point.fixed64(4, UInt64(max(0, entry.count)))
                point.tag(5, 1)
                point.rawFixed64(entry.sum.bitPattern)
                var counts = Writer(), bounds = Writer()
                var previous = 0.0
                for (bound, cumulativeCount) in buckets {
                    counts.rawFixed64(UInt64(max(0, cumulativeCount - previous)))
                    previous = cumulativeCount
                    if bound.isFinite { bounds.rawFixed64(bound.bitPattern) }
                }
                if buckets.last?.0.isFinite ?? true { counts.rawFixed64(UInt64(max(0, entry.count - previous))) }
                point.bytesField(6, counts.bytes)  // packed fixed64
                point.bytesField(7, bounds.bytes)  // packed double
                data.message(1, point.bytes)
            }
            data.varintField(2, cumulative)
            field = 9
        default:
            return nil
        }
        var metric = Writer()
        metric.string(1, family.name)
        metric.string(2, family.help)
        metric.message(field, data.bytes)
        return metric.bytes
    }
}
