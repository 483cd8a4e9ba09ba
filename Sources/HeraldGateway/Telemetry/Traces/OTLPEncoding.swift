/// Spans as OTLP's protobuf message `ExportTraceServiceRequest`
/// (opentelemetry/proto/collector/trace/v1), what an OTLP/HTTP collector takes at `/v1/traces`
/// with `Content-Type: application/x-protobuf` ("OTLP Specification", OpenTelemetry).
///
/// Only the fields the gateway's spans use are written; a field left out is its default in
/// protobuf, so the collector reads the rest as unset.
enum OTLPEncoding {
    /// One request: the spans of one resource (this process) and one instrumentation scope.
    static func exportRequest(_ spans: [Span], resource: [Span.Attribute], scope: (name: String, version: String)) -> [UInt8] {
        var resourceMessage = Writer()
        for attribute in resource { resourceMessage.message(1, keyValue(attribute)) }
        var scopeMessage = Writer()
        scopeMessage.string(1, scope.name)
        scopeMessage.string(2, scope.version)
        var scopeSpans = Writer()
        scopeSpans.message(1, scopeMessage.bytes)
        for span in spans { scopeSpans.message(2, encode(span)) }
        var resourceSpans = Writer()
        resourceSpans.message(1, resourceMessage.bytes)
        resourceSpans.message(2, scopeSpans.bytes)
        var request = Writer()
        request.message(1, resourceSpans.bytes)
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
    private static func keyValue(_ attribute: Span.Attribute) -> [UInt8] {
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
