import HeraldJSON
import HeraldPayload

/// The contracts Herald's parsers keep on any input, shared by the libFuzzer targets (which crash
/// on a violation) and the regression tests (which replay saved inputs). Each returns the
/// violations found; an empty list means the input passed.
public enum PropertyChecks {
    static let options = JSONParser.Options(maximumDepth: 64)

    /// JSON: `diagnose` agrees with `parse`; for valid input the compact form is a fixed point,
    /// the pretty form means the same, and node pointers resolve.
    public static func json(_ bytes: [UInt8]) -> [String] {
        var violations: [String] = []
        let parser = JSONParser(options: options)
        let (recovered, diagnostics) = parser.parseRecovering(bytes)
        guard let document = try? parser.parse(bytes) else {
            if diagnostics.isEmpty { violations.append("parse failed but diagnose found nothing") }
            if let recovered {
                // A recovered document is for reading: every value and pointer must be reachable.
                _ = recovered.root.value
                for index in 0..<min(64, recovered.valueCount * 2) {
                    if let node = recovered.node(at: index) { _ = recovered.pointer(to: node); _ = node.location }
                }
            }
            for diagnostic in diagnostics where diagnostic.location.offset > bytes.count {
                violations.append("error location \(diagnostic.location) is past the end")
            }
            return violations
        }
        if !diagnostics.isEmpty { violations.append("parse succeeded but diagnose reported \(diagnostics)") }
        let compact = document.compactBytes()
        if compact.count != document.compactByteCount { violations.append("compactByteCount disagrees with the bytes") }
        guard let again = try? JSONDocument(parsing: compact, options: options) else {
            return violations + ["the compact form does not parse"]
        }
        if again.compactBytes() != compact { violations.append("the compact form is not a fixed point") }
        if again.root.value != document.root.value { violations.append("the compact form changed the value") }
        if (try? JSONDocument(parsing: document.prettyBytes(), options: options))?.compactBytes() != compact {
            violations.append("the pretty form changed the value")
        }
        for index in 0..<min(64, document.valueCount * 2) {
            guard let node = document.node(at: index) else { continue }
            let pointer = document.pointer(to: node)
            if let resolved = document.resolve(pointer), document.pointer(to: resolved) != pointer {
                violations.append("pointer \(pointer) resolves elsewhere")
            }
        }
        return violations
    }

    /// Payload: a payload that decodes encodes, decodes back equal, and means the same JSON.
    public static func payload(_ bytes: [UInt8]) -> [String] {
        guard let payload = try? Payload(decoding: bytes, options: options) else { return [] }
        guard let encoded = try? payload.encode() else { return ["a decoded payload failed to encode"] }
        var violations: [String] = []
        if (try? payload.encodedSize()) != encoded.count { violations.append("encodedSize disagrees with the bytes") }
        if (try? Payload(decoding: encoded)) != payload { violations.append("encode then decode changed the payload") }
        if let original = try? JSONDocument(parsing: bytes, options: options).root.value,
           let written = try? JSONDocument(parsing: encoded).root.value, !written.isEquivalent(to: original) {
            violations.append("decode then encode changed the JSON")
        }
        return violations
    }
}
