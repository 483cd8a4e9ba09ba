import Foundation
import HeraldJSON
import HeraldTestSupport
import Testing

/// Herald's parser against Foundation's `JSONSerialization` on the same generated inputs.
///
/// They must agree on what is JSON and on its values, except where Herald is deliberately
/// stricter or keeps more; each such place is named in `DeliberateDifference`.
@Suite("JSON differential against JSONSerialization", .ownThreads)
struct JSONDifferentialTests {
    enum DeliberateDifference: String {
        /// Foundation on Linux accepts `[1,]` and `{"a":1,}`; RFC 8259 does not.
        case trailingComma
        /// Foundation accepts a byte order mark and UTF-16/32 input; JSON on the wire is UTF-8.
        case byteOrderMarkOrEncoding
        /// Foundation rejects numbers beyond `Double` (`1e400`); Herald keeps their text.
        case unrepresentableNumber
    }

    static func foundationParse(_ bytes: [UInt8]) -> Result<Any, NSError> {
        do {
            return .success(try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]))
        } catch {
            return .failure(error as NSError)
        }
    }

    /// Why the two parsers may disagree on acceptance of `bytes`, or `nil` if they must agree.
    static func allowedDifference(_ bytes: [UInt8], herald: Result<JSONDocument, JSONParseError>, foundation: Result<Any, NSError>) -> DeliberateDifference? {
        switch (herald, foundation) {
        case (.failure(let error), .success):
            if error.message.contains("trailing comma") { return .trailingComma }
            if case .byteOrderMark = error.reason { return .byteOrderMarkOrEncoding }
            // Foundation sniffs UTF-16/32 from zero bytes in the first four.
            if bytes.prefix(4).contains(0) { return .byteOrderMarkOrEncoding }
            return nil
        case (.success, .failure(let error)):
            let debug = (error.userInfo[NSDebugDescriptionErrorKey] as? String) ?? ""
            if debug.contains("not representable") { return .unrepresentableNumber }
            return nil
        default:
            return nil
        }
    }

    /// Whether a Herald value and a Foundation value say the same thing (last duplicate key wins,
    /// as it does in an `NSDictionary`).
    static func agree(_ herald: JSONValue, _ foundation: Any) -> Bool {
        switch herald {
        case .null:
            return foundation is NSNull
        case .bool(let flag):
            return (foundation as? Bool) == flag
        case .number(let number):
            if foundation is NSDecimalNumber, let decimal = foundation as? Decimal {
                // Foundation on Linux returns long fractions as decimals; compare them as such.
                return Decimal(string: number.text, locale: Locale(identifier: "en_US_POSIX")) == decimal
            }
            guard let other = foundation as? NSNumber else { return false }
            if let integer = number.int64Value, integer.magnitude < 1 << 53 {
                return other.doubleValue == Double(integer)
            }
            let lhs = number.doubleValue
            let rhs = other.doubleValue
            return lhs == rhs || abs(lhs - rhs) <= abs(lhs) * 1e-15
        case .string(let text):
            return (foundation as? String) == text
        case .array(let elements):
            guard let others = foundation as? [Any], others.count == elements.count else { return false }
            return zip(elements, others).allSatisfy { agree($0, $1) }
        case .object(let object):
            guard let others = foundation as? [String: Any] else { return false }
            guard Set(object.keys) == Set(others.keys) else { return false }
            return others.allSatisfy { key, value in agree(object[key]!, value) }
        }
    }

    @Test("valid generated documents: both accept, values agree", arguments: 0..<20)
    func validDocuments(seed: Int) throws {
        var random = RandomJSON(seed: UInt64(seed) &+ 77)
        for _ in 0..<100 {
            let value = random.value()
            let bytes = Array(random.render(value).utf8)
            let document = try JSONDocument(parsing: bytes)
            switch Self.foundationParse(bytes) {
            case .success(let object):
                #expect(Self.agree(document.root.value, object), "\(String(decoding: bytes, as: UTF8.self))")
            case .failure(let error):
                if Self.allowedDifference(bytes, herald: .success(document), foundation: .failure(error)) == nil {
                    Issue.record("Foundation rejected valid \(String(decoding: bytes, as: UTF8.self)): \(error)")
                }
            }
        }
    }

    @Test("damaged documents: accept/reject agree except the named differences", arguments: 0..<40)
    func damagedDocuments(seed: Int) {
        var random = RandomJSON(seed: UInt64(seed) &+ 9000)
        var differences: [DeliberateDifference: Int] = [:]
        for _ in 0..<250 {
            let bytes = random.mutate(Array(random.render(random.value()).utf8))
            let herald = Result { () throws(JSONParseError) in try JSONDocument(parsing: bytes) }
            let foundation = Self.foundationParse(bytes)
            switch (herald, foundation) {
            case (.success(let document), .success(let object)):
                #expect(Self.agree(document.root.value, object), "\(bytes)")
            case (.failure, .failure):
                continue
            default:
                if let difference = Self.allowedDifference(bytes, herald: herald, foundation: foundation) {
                    differences[difference, default: 0] += 1
                } else {
                    Issue.record("disagreement on \(bytes) (\(String(decoding: bytes, as: UTF8.self))): Herald \(herald), Foundation \(foundation)")
                }
            }
        }
    }

    @Test("the named differences really are differences")
    func namedDifferences() {
        let cases: [([UInt8], DeliberateDifference)] = [
            (Array("[1,]".utf8), .trailingComma),
            (Array("{\"a\":1,}".utf8), .trailingComma),
            ([0xEF, 0xBB, 0xBF] + Array("[1]".utf8), .byteOrderMarkOrEncoding),
            ([0x5B, 0x00, 0x31, 0x00, 0x5D, 0x00], .byteOrderMarkOrEncoding),
            (Array("[1e400]".utf8), .unrepresentableNumber),
        ]
        for (bytes, expected) in cases {
            let herald = Result { () throws(JSONParseError) in try JSONDocument(parsing: bytes) }
            let foundation = Self.foundationParse(bytes)
            #expect(Self.allowedDifference(bytes, herald: herald, foundation: foundation) == expected, "\(bytes)")
        }
    }
}
