/// An RFC 6901 JSON Pointer, such as `/aps/alert/loc-args/0`.
///
/// Herald names the value a diagnostic or decoding error is about with a pointer; `~` and `/` in
/// keys are written `~0` and `~1`.
public struct JSONPointer: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The reference tokens, unescaped: `["aps", "alert", "loc-args", "0"]`.
    public var tokens: [String]

    /// The pointer to the whole document (`""`).
    public static let root = JSONPointer(tokens: [])

    /// Creates a pointer from unescaped tokens.
    public init(tokens: [String]) {
        self.tokens = tokens
    }

    /// Parses the string form; `nil` if it is neither empty nor starts with `/`, or uses an
    /// escape other than `~0` and `~1`.
    public init?(parsing text: String) {
        if text.isEmpty {
            self.tokens = []
            return
        }
        guard text.first == "/" else { return nil }
        var tokens: [String] = []
        for raw in text.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            var token = ""
            var iterator = raw.makeIterator()
            while let character = iterator.next() {
                if character == "~" {
                    switch iterator.next() {
                    case "0": token.append("~")
                    case "1": token.append("/")
                    default: return nil
                    }
                } else {
                    token.append(character)
                }
            }
            tokens.append(token)
        }
        self.tokens = tokens
    }

    /// Creates a pointer from a literal; an invalid literal is a programming error.
    public init(stringLiteral value: String) {
        guard let pointer = JSONPointer(parsing: value) else { preconditionFailure("invalid JSON Pointer \(value)") }
        self = pointer
    }

    /// The pointer with one more token.
    public func appending(_ token: String) -> JSONPointer {
        JSONPointer(tokens: tokens + [token])
    }

    /// The pointer with an array index appended.
    public func appending(_ index: Int) -> JSONPointer {
        appending(String(index))
    }

    /// The pointer to the containing value, or `nil` for the root.
    public var parent: JSONPointer? {
        tokens.isEmpty ? nil : JSONPointer(tokens: Array(tokens.dropLast()))
    }

    /// The string form: `""` for the root, else `/token/token`.
    public var description: String {
        // By bytes, in one allocation: `~` and `/` are ASCII, so no other character's encoding
        // holds them.
        var total = 0
        for var token in tokens {
            total += 1
            token.withUTF8 { utf8 in
                for byte in utf8 { total += byte == UInt8(ascii: "~") || byte == UInt8(ascii: "/") ? 2 : 1 }
            }
        }
        return String(unsafeUninitializedCapacity: total) { buffer in
            var at = 0
            for var token in tokens {
                buffer[at] = UInt8(ascii: "/")
                at += 1
                token.withUTF8 { utf8 in
                    for byte in utf8 {
                        switch byte {
                        case UInt8(ascii: "~"), UInt8(ascii: "/"):
                            buffer[at] = UInt8(ascii: "~")
                            buffer[at + 1] = byte == UInt8(ascii: "~") ? UInt8(ascii: "0") : UInt8(ascii: "1")
                            at += 2
                        default:
                            buffer[at] = byte
                            at += 1
                        }
                    }
                }
            }
            return at
        }
    }
}

extension JSONDocument {
    /// The value a pointer names, or `nil` if there is none. Where an object has several members
    /// with the key, the last one is taken (as ``Node/subscript(_:)-(String)`` does).
    public func resolve(_ pointer: JSONPointer) -> Node? {
        var node = root
        for token in pointer.tokens {
            switch node.kind {
            case .object:
                guard let next = node[token] else { return nil }
                node = next
            case .array:
                // RFC 6901: an index is "0" or digits without a leading zero.
                guard let index = Int(token), index >= 0, String(index) == token, let next = node[index] else {
                    return nil
                }
                node = next
            default:
                return nil
            }
        }
        return node
    }

    /// The pointer to a node, found by descending from the root.
    public func pointer(to target: Node) -> JSONPointer {
        var tokens: [String] = []
        var current = 0
        let goal = target.index
        descend: while current != goal {
            let entry = tape[current]
            var cursor = current + 1
            switch entry.kind {
            case .array:
                for position in 0..<Int(entry.count) {
                    let next = Int(tape[cursor].next)
                    if goal >= cursor && goal < next {
                        tokens.append(String(position))
                        current = cursor
                        continue descend
                    }
                    cursor = next
                }
            case .object:
                for _ in 0..<Int(entry.count) {
                    let valueIndex = cursor + 1
                    let next = Int(tape[valueIndex].next)
                    if goal == cursor || (goal >= valueIndex && goal < next) {
                        tokens.append(decodeString(tape[cursor]))
                        current = valueIndex
                        if goal == cursor { break descend }
                        continue descend
                    }
                    cursor = next
                }
            default:
                break
            }
            break
        }
        return JSONPointer(tokens: tokens)
    }
}
