import HeraldJSON

/// A small deterministic generator (SplitMix64), so a failing case can be replayed from its seed.
public struct SeededGenerator: RandomNumberGenerator {
    public var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Generates JSON values, and source texts for them with varied whitespace and escape spellings.
public struct RandomJSON {
    public var rng: SeededGenerator

    public init(seed: UInt64) { rng = SeededGenerator(seed: seed) }

    public mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &rng) < percent }

    public mutating func value(depth: Int = 0) -> JSONValue {
        let roll = Int.random(in: 0..<(depth >= 4 ? 5 : 7), using: &rng)
        switch roll {
        case 0: return .null
        case 1: return .bool(chance(50))
        case 2: return .number(number())
        case 3, 4: return .string(string())
        case 5:
            return .array((0..<Int.random(in: 0...4, using: &rng)).map { _ in value(depth: depth + 1) })
        default:
            var members: [JSONObject.Member] = []
            for _ in 0..<Int.random(in: 0...4, using: &rng) {
                // Occasionally repeat a key: duplicates must survive.
                let key = (chance(10) && !members.isEmpty) ? members[0].key : string(maxLength: 8)
                members.append(.init(key: key, value: value(depth: depth + 1)))
            }
            return .object(JSONObject(members: members))
        }
    }

    public mutating func number() -> JSONNumber {
        switch Int.random(in: 0..<8, using: &rng) {
        case 0: return JSONNumber(Int.random(in: -10...10, using: &rng))
        case 1: return JSONNumber(Int64.random(in: .min ... .max, using: &rng))
        case 2: return JSONNumber(Double.random(in: -1e6...1e6, using: &rng))!
        case 3: return JSONNumber(text: "\(Int.random(in: 0...99, using: &rng)).\(Int.random(in: 0...999, using: &rng))0")!
        case 4: return JSONNumber(text: "\(chance(50) ? "-" : "")\(Int.random(in: 1...9, using: &rng))e\(["", "+", "-"].randomElement(using: &rng)!)\(Int.random(in: 0...30, using: &rng))")!
        case 5: return JSONNumber(text: chance(50) ? "-0" : "0.0")!
        case 6: return JSONNumber(Double.random(in: 0...1, using: &rng))!
        default: return JSONNumber(Int.random(in: 0...1_000_000, using: &rng))
        }
    }

    public static let alphabet: [Unicode.Scalar] = [
        "a", "b", "Z", "0", " ", "-", "_", "\"", "\\", "/", "\n", "\t", "\u{01}", "\u{1F}", "\u{7F}", "é", "ß",
        "안", "녕", "😀", "𝝁", "\u{2028}", "~", "“",
    ]

    public mutating func string(maxLength: Int = 12) -> String {
        var scalars = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...maxLength, using: &rng) {
            scalars.append(Self.alphabet.randomElement(using: &rng)!)
        }
        return String(scalars)
    }

    /// A source text for `value`: random whitespace, and each character spelled raw or escaped
    /// in any way JSON allows.
    public mutating func render(_ value: JSONValue) -> String {
        var out = ""
        render(value, into: &out)
        return out
    }

    private mutating func whitespace() -> String {
        guard chance(30) else { return "" }
        return [" ", "\n", "\t", "\r\n", "  "].randomElement(using: &rng)!
    }

    private mutating func render(_ value: JSONValue, into out: inout String) {
        out += whitespace()
        switch value {
        case .null: out += "null"
        case .bool(let flag): out += flag ? "true" : "false"
        case .number(let number): out += number.text
        case .string(let text): renderString(text, into: &out)
        case .array(let elements):
            out += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { out += "," }
                render(element, into: &out)
            }
            out += whitespace() + "]"
        case .object(let object):
            out += "{"
            for (index, member) in object.members.enumerated() {
                if index > 0 { out += "," }
                out += whitespace()
                renderString(member.key, into: &out)
                out += whitespace() + ":"
                render(member.value, into: &out)
            }
            out += whitespace() + "}"
        }
        out += whitespace()
    }

    private mutating func renderString(_ text: String, into out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += chance(50) ? "\\n" : "\\u000A"
            case "\t": out += chance(50) ? "\\t" : "\\u0009"
            case "/": out += chance(50) ? "\\/" : "/"
            default:
                if scalar.value < 0x20 {
                    out += "\\u" + hex(UInt16(scalar.value))
                } else if chance(20) {
                    if scalar.value > 0xFFFF {
                        let v = scalar.value - 0x10000
                        out += "\\u" + hex(UInt16(0xD800 + (v >> 10))) + "\\u" + hex(UInt16(0xDC00 + (v & 0x3FF)))
                    } else {
                        out += "\\u" + (chance(50) ? hex(UInt16(scalar.value)) : hex(UInt16(scalar.value)).lowercased())
                    }
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }

    private func hex(_ unit: UInt16) -> String {
        var digits = String(unit, radix: 16, uppercase: true)
        while digits.count < 4 { digits = "0" + digits }
        return digits
    }

    /// Damages a text: deletes, inserts or replaces a few bytes, or cuts it short.
    public mutating func mutate(_ bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        let interesting: [UInt8] = Array("{}[],:\"\\ -.0123456789eEtfnu/*'".utf8) + [0x00, 0x01, 0x0A, 0x7F, 0x80, 0xC3, 0xE2, 0xED, 0xF0, 0xFF]
        for _ in 0..<Int.random(in: 1...3, using: &rng) {
            guard !bytes.isEmpty else {
                bytes.append(interesting.randomElement(using: &rng)!)
                continue
            }
            let position = Int.random(in: 0..<bytes.count, using: &rng)
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: bytes.remove(at: position)
            case 1: bytes.insert(interesting.randomElement(using: &rng)!, at: position)
            case 2: bytes[position] = interesting.randomElement(using: &rng)!
            default: bytes.removeLast(Int.random(in: 0...min(3, bytes.count), using: &rng))
            }
        }
        return bytes
    }
}

extension JSONValue {
    /// Whether any object in the value has a key twice.
    public var containsDuplicateKeys: Bool {
        switch self {
        case .array(let elements): return elements.contains { $0.containsDuplicateKeys }
        case .object(let object):
            return !object.duplicateKeys.isEmpty || object.members.contains { $0.value.containsDuplicateKeys }
        default: return false
        }
    }
}
