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

    // The scan works on Unicode scalars (NSString formats work on UTF-16 units; a combining mark
    // after `%` does not hide the specifier) and compares ASCII values, without Character
    // hashing or grapheme breaking.

    private static func isFlag(_ value: UInt32) -> Bool {
        switch value {
        case 0x2D, 0x2B, 0x20, 0x23, 0x30, 0x27: true  // - + space # 0 '
        default: false
        }
    }

    private static func isDigit(_ value: UInt32) -> Bool { value >= 0x30 && value <= 0x39 }

    /// `@ d D i u U o O x X f F e E g G a A c C s S p`, as a 128-bit ASCII mask.
    private static let conversionMask: (low: UInt64, high: UInt64) = "@dDiuUoOxXfFeEgGaAcCsSp".utf8.reduce((0, 0)) { mask, byte in
        byte < 64 ? (mask.0 | 1 << UInt64(byte), mask.1) : (mask.0, mask.1 | 1 << UInt64(byte - 64))
    }

    private static func isConversion(_ value: UInt32) -> Bool {
        guard value < 0x80 else { return false }
        return value < 64 ? conversionMask.low & (1 << UInt64(value)) != 0 : conversionMask.high & (1 << UInt64(value - 64)) != 0
    }

    /// The length modifier at `index`, longest first (`hh` before `h`, `ll` before `l`).
    private static func lengthModifier(_ scalars: [Unicode.Scalar], at index: Int) -> String {
        guard index < scalars.count else { return "" }
        let first = scalars[index]
        let second = index + 1 < scalars.count ? scalars[index + 1] : nil
        switch first {
        case "h", "l": return second == first ? String(first) + String(first) : String(first)
        case "q", "L", "z", "t", "j": return String(first)
        default: return ""
        }
    }

    private static func scan(_ source: String) -> [Segment] {
        var segments: [Segment] = []
        var literal = String.UnicodeScalarView()
        var sequentialIndex = 0
        let scalars = Array(source.unicodeScalars)
        var index = 0

        func flushLiteral() {
            if !literal.isEmpty {
                segments.append(.literal(String(literal)))
                literal = String.UnicodeScalarView()
            }
        }
        func text(_ range: Range<Int>) -> String {
            String(String.UnicodeScalarView(scalars[range]))
        }

        while index < scalars.count {
            let scalar = scalars[index]
            guard scalar == "%" else {
                literal.append(scalar)
                index += 1
                continue
            }
            let start = index
            index += 1
            guard index < scalars.count else {
                flushLiteral()
                segments.append(.invalid("%"))
                break
            }
            if scalars[index] == "%" {
                flushLiteral()
                segments.append(.percent)
                index += 1
                continue
            }
            // Optional position: digits followed by '$'.
            var position: Int?
            var lookahead = index
            var digits = 0
            while lookahead < scalars.count, isDigit(scalars[lookahead].value) {
                digits = min(digits * 10 + Int(scalars[lookahead].value - 0x30), 1 << 20)  // bounded: a long digit run must not overflow
                lookahead += 1
            }
            if lookahead > index, lookahead < scalars.count, scalars[lookahead] == "$", digits > 0 {
                position = digits
                index = lookahead + 1
            }
            // `%#@name@` (stringsdict variable).
            if index + 1 < scalars.count, scalars[index] == "#", scalars[index + 1] == "@" {
                var end = index + 2
                while end < scalars.count, scalars[end] != "@" { end += 1 }
                if end < scalars.count, end > index + 2 {
                    flushLiteral()
                    let name = text((index + 2)..<end)
                    let argumentIndex: Int
                    if let position { argumentIndex = position - 1 } else { argumentIndex = sequentialIndex; sequentialIndex += 1 }
                    segments.append(.variable(name: name, argumentIndex: argumentIndex, explicitPosition: position != nil))
                    index = end + 1
                    continue
                }
            }
            let modifiersStart = index
            while index < scalars.count, isFlag(scalars[index].value) { index += 1 }
            while index < scalars.count, scalars[index] == "*" || isDigit(scalars[index].value) { index += 1 }
            if index < scalars.count, scalars[index] == "." {
                index += 1
                while index < scalars.count, scalars[index] == "*" || isDigit(scalars[index].value) { index += 1 }
            }
            let modifiers = text(modifiersStart..<index)
            let length = lengthModifier(scalars, at: index)
            index += length.unicodeScalars.count
            guard index < scalars.count, isConversion(scalars[index].value) else {
                // Not a specifier: keep the text, as NSString would print something unexpected here.
                flushLiteral()
                let end = min(index + 1, scalars.count)
                segments.append(.invalid(text(start..<end)))
                index = end
                continue
            }
            let conversion = Character(scalars[index])
            index += 1
            flushLiteral()
            let argumentIndex: Int
            if let position { argumentIndex = position - 1 } else { argumentIndex = sequentialIndex; sequentialIndex += 1 }
            segments.append(.argument(Specifier(
                argumentIndex: argumentIndex, explicitPosition: position != nil, modifiers: modifiers,
                length: length, conversion: conversion, text: text(start..<index))))
        }
        flushLiteral()
        return segments
    }
}
