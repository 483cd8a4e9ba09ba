/// A format string as `loc-key` values and `Localizable.strings` entries use it: `%@` takes the
/// next `loc-args` element, `%2$@` takes the second, `%%` is a percent sign (reference §8.2).
///
/// The scanner follows the printf grammar NSString uses,
/// `%[position$][flags][width][.precision][length]conversion`, so `%d`, `%ld` or `%s` are
/// recognised (and can be reported: `loc-args` are strings), and it also recognises the
/// `.stringsdict` variable form `%#@name@`.
///
/// ```swift
/// let format = LocalizedFormat("%2$@ and %1$@ have invited you to play Monopoly")
/// format.argumentCount          // 2
/// ```
public struct LocalizedFormat: Sendable, Hashable {
    /// One piece of a format string.
    public enum Segment: Sendable, Hashable {
        /// Text copied as is.
        case literal(String)
        /// `%%`: a percent sign.
        case percent
        /// A conversion that consumes an argument.
        case argument(Specifier)
        /// `%#@name@`: a `.stringsdict` variable, itself consuming an argument.
        case variable(name: String, argumentIndex: Int, explicitPosition: Bool)
        /// A `%` that does not start a valid specifier (`100% sure`, `%y`); shown as written.
        case invalid(String)
    }

    /// One conversion specifier.
    public struct Specifier: Sendable, Hashable {
        /// The 0-based argument it consumes.
        public var argumentIndex: Int
        /// Whether it was written with `n$`.
        public var explicitPosition: Bool
        /// Flags, width and precision as written (`-`, `05`, `.2`, `*`).
        public var modifiers: String
        /// The length modifier (`l`, `ll`, `h`, `q`, `z`, …), empty if none.
        public var length: String
        /// The conversion character: `@`, `d`, `s`, `f`, ….
        public var conversion: Character
        /// The specifier as written.
        public var text: String

        /// `true` for `%@`, the conversion that formats an object such as a `loc-args` string.
        public var isObject: Bool { conversion == "@" }
    }

    /// The string as given.
    public let source: String
    /// Its pieces, in order.
    public let segments: [Segment]

    /// Scans `source`.
    public init(_ source: String) {
        self.source = source
        self.segments = Self.scan(source)
    }

    /// How many arguments the format reads: one more than the highest argument index used.
    public var argumentCount: Int {
        var count = 0
        for segment in segments {
            switch segment {
            case .argument(let specifier): count = max(count, specifier.argumentIndex + 1)
            case .variable(_, let index, _): count = max(count, index + 1)
            default: break
            }
        }
        return count
    }

    /// The conversion specifiers, in order.
    public var specifiers: [Specifier] {
        segments.compactMap { if case .argument(let specifier) = $0 { specifier } else { nil } }
    }

    /// Whether some specifiers use `n$` positions and others do not (undefined in printf).
    public var mixesPositionalAndSequential: Bool {
        var positional = false
        var sequential = false
        for segment in segments {
            switch segment {
            case .argument(let specifier):
                if specifier.explicitPosition { positional = true } else { sequential = true }
            case .variable(_, _, let explicit):
                if explicit { positional = true } else { sequential = true }
            default: break
            }
        }
        return positional && sequential
    }

    /// Whether the string contains any specifier at all (arguments, `%%` or invalid ones).
    public var hasSpecifiers: Bool {
        segments.contains { if case .literal = $0 { false } else { true } }
    }

    // MARK: Scanning

    private static let flagCharacters: Set<Character> = ["-", "+", " ", "#", "0", "'"]
    private static let lengthPrefixes: [String] = ["hh", "ll", "h", "l", "q", "L", "z", "t", "j"]
    private static let conversions: Set<Character> = [
        "@", "d", "D", "i", "u", "U", "o", "O", "x", "X", "f", "F", "e", "E", "g", "G", "a", "A", "c", "C", "s", "S", "p",
    ]

    private static func scan(_ source: String) -> [Segment] {
        var segments: [Segment] = []
        var literal = ""
        var sequentialIndex = 0
        let characters = Array(source)
        var index = 0

        func flushLiteral() {
            if !literal.isEmpty {
                segments.append(.literal(literal))
                literal = ""
            }
        }

        while index < characters.count {
            let character = characters[index]
            guard character == "%" else {
                literal.append(character)
                index += 1
                continue
            }
            let start = index
            index += 1
            guard index < characters.count else {
                flushLiteral()
                segments.append(.invalid("%"))
                break
            }
            if characters[index] == "%" {
                flushLiteral()
                segments.append(.percent)
                index += 1
                continue
            }
            // Optional position: digits followed by '$'.
            var position: Int?
            var lookahead = index
            var digits = 0
            while lookahead < characters.count, let digit = characters[lookahead].wholeNumberValue, characters[lookahead].isASCII {
                digits = min(digits * 10 + digit, 1 << 20)  // bounded: a long digit run must not overflow
                lookahead += 1
            }
            if lookahead > index, lookahead < characters.count, characters[lookahead] == "$", digits > 0 {
                position = digits
                index = lookahead + 1
            }
            // `%#@name@` (stringsdict variable).
            if index + 1 < characters.count, characters[index] == "#", characters[index + 1] == "@" {
                var end = index + 2
                while end < characters.count, characters[end] != "@" { end += 1 }
                if end < characters.count, end > index + 2 {
                    flushLiteral()
                    let name = String(characters[(index + 2)..<end])
                    let argumentIndex: Int
                    if let position { argumentIndex = position - 1 } else { argumentIndex = sequentialIndex; sequentialIndex += 1 }
                    segments.append(.variable(name: name, argumentIndex: argumentIndex, explicitPosition: position != nil))
                    index = end + 1
                    continue
                }
            }
            var modifiers = ""
            while index < characters.count, flagCharacters.contains(characters[index]) {
                modifiers.append(characters[index])
                index += 1
            }
            while index < characters.count, characters[index] == "*" || (characters[index].isASCII && characters[index].isNumber) {
                modifiers.append(characters[index])
                index += 1
            }
            if index < characters.count, characters[index] == "." {
                modifiers.append(".")
                index += 1
                while index < characters.count, characters[index] == "*" || (characters[index].isASCII && characters[index].isNumber) {
                    modifiers.append(characters[index])
                    index += 1
                }
            }
            var length = ""
            for prefix in lengthPrefixes {
                let candidate = Array(prefix)
                if index + candidate.count <= characters.count, Array(characters[index..<(index + candidate.count)]) == candidate {
                    length = prefix
                    index += candidate.count
                    break
                }
            }
            guard index < characters.count, conversions.contains(characters[index]) else {
                // Not a specifier: keep the text, as NSString would print something unexpected here.
                flushLiteral()
                let end = min(index + 1, characters.count)
                segments.append(.invalid(String(characters[start..<end])))
                index = end
                continue
            }
            let conversion = characters[index]
            index += 1
            flushLiteral()
            let argumentIndex: Int
            if let position { argumentIndex = position - 1 } else { argumentIndex = sequentialIndex; sequentialIndex += 1 }
            segments.append(.argument(Specifier(
                argumentIndex: argumentIndex, explicitPosition: position != nil, modifiers: modifiers,
                length: length, conversion: conversion, text: String(characters[start..<index]))))
        }
        flushLiteral()
        return segments
    }
}
