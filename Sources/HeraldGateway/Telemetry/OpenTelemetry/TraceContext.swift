/// Where a span sits in a trace: the W3C Trace Context of a request (`traceparent`), of the
/// span that handles it, and of the spans under it.
///
/// A trace id is 16 bytes, a span id 8, neither all zeros; `sampled` is the `traceparent`'s
/// flag: a trace its caller does not sample is carried on (its ids go on with it) but not
/// recorded. Herald honours a caller's `traceparent` so that the trace of a notification starts
/// in the sender's backend ("Trace Context", W3C Recommendation).
struct TraceContext: Sendable, Hashable {
    var traceID: TraceID
    var spanID: SpanID
    var sampled: Bool = true

    init(traceID: TraceID, spanID: SpanID, sampled: Bool = true) {
        self.traceID = traceID
        self.spanID = spanID
        self.sampled = sampled
    }

    /// The span a request, a commit or an attempt runs in (task-local): the parent of the spans
    /// it starts, and the ids its log lines carry.
    @TaskLocal static var current: TraceContext?

    /// A new trace's first span.
    static func newTrace() -> TraceContext { TraceContext(traceID: .random(), spanID: .random()) }

    /// A span under this one: the same trace, a new span id.
    func child() -> TraceContext { TraceContext(traceID: traceID, spanID: .random(), sampled: sampled) }

    /// Parses a `traceparent` header: `00-<32 hex>-<16 hex>-<2 hex>` (lower case). A later
    /// version's header is read by the same fields when it is at least as long and its fields
    /// are followed by `-`; anything else (version `ff`, ids of zeros, upper case, wrong lengths)
    /// is `nil`, and the request starts a trace of its own.
    init?(traceparent: some StringProtocol) {
        let bytes = Array(traceparent.utf8)
        guard bytes.count >= 55, bytes[2] == UInt8(ascii: "-"), bytes[35] == UInt8(ascii: "-"), bytes[52] == UInt8(ascii: "-"),
              let version = Self.hex(bytes[0..<2]), version != 0xFF,
              let flags = Self.hex(bytes[53..<55]),
              let high = Self.hex(bytes[3..<19]), let low = Self.hex(bytes[19..<35]), let span = Self.hex(bytes[36..<52])
        else { return nil }
        // Version 00 is exactly 55 characters; a later version may add fields after a dash.
        if version == 0 ? bytes.count != 55 : (bytes.count > 55 && bytes[55] != UInt8(ascii: "-")) { return nil }
        guard high != 0 || low != 0, span != 0 else { return nil }
        self.init(traceID: TraceID(high: high, low: low), spanID: SpanID(value: span), sampled: flags & 1 == 1)
    }

    /// The `traceparent` header of this span (version 00).
    var traceparent: String { "00-\(traceID.hex)-\(spanID.hex)-\(sampled ? "01" : "00")" }

    /// A fixed-length lower-case hex field's value; `nil` for any other character.
    private static func hex(_ digits: ArraySlice<UInt8>) -> UInt64? {
        var value: UInt64 = 0
        for digit in digits {
            let nibble: UInt8
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = digit - UInt8(ascii: "a") + 10
            default: return nil
            }
            value = value << 4 | UInt64(nibble)
        }
        return value
    }
}

/// A trace's 16-byte id.
struct TraceID: Sendable, Hashable {
    var high: UInt64
    var low: UInt64

    static func random() -> TraceID {
        var generator = SystemRandomNumberGenerator()
        while true {
            let id = TraceID(high: generator.next(), low: generator.next())
            if id.high != 0 || id.low != 0 { return id }
        }
    }

    /// Big-endian bytes, as OTLP carries them.
    var bytes: [UInt8] { bigEndianBytes(high) + bigEndianBytes(low) }
    /// 32 lower-case hex digits.
    var hex: String { hexDigits(high) + hexDigits(low) }
}

/// A span's 8-byte id.
struct SpanID: Sendable, Hashable {
    var value: UInt64

    static func random() -> SpanID {
        var generator = SystemRandomNumberGenerator()
        while true {
            let value: UInt64 = generator.next()
            if value != 0 { return SpanID(value: value) }
        }
    }

    var bytes: [UInt8] { bigEndianBytes(value) }
    /// 16 lower-case hex digits.
    var hex: String { hexDigits(value) }
}

private func bigEndianBytes(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) } }

private func hexDigits(_ value: UInt64) -> String {
    let text = String(value, radix: 16)
    return String(repeating: "0", count: 16 - text.count) + text
}
