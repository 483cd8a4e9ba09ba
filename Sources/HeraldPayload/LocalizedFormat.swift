/// A format string as `loc-key` values and `Localizable.strings` entries use it: `%@` takes the
/// next `loc-args` element, `%2$@` takes the second, `%%` is a percent sign (Apple's “Local and Remote Notification Programming Guide”, on `%@` and `%n$@`).
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
        /// A `%` that does not start a valid specifier (`100% sure`, `%y`), as written. Foundation
        /// drops the `%` and shows the rest (`%y` shows `y`, a trailing `%` nothing).
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

    /// The 0-based argument positions the specifiers and variables name, ascending, each once.
    public var argumentPositions: [Int] {
        var named: [Int] = []
        named.reserveCapacity(segments.count)
        for segment in segments {
            switch segment {
            case .argument(let specifier): named.append(specifier.argumentIndex)
            case .variable(_, let index, _): named.append(index)
            default: break
            }
        }
        // Positions are dense in real formats: marked in a table of flags, in linear time. A
        // format naming a far position (`%1000000$@`) is sorted instead.
        guard let highest = named.max(), highest < 4 * named.count + 64 else { return Array(Set(named)).sorted() }
        var present = [Bool](repeating: false, count: highest + 1)
        for position in named { present[position] = true }
        return present.indices.filter { present[$0] }
    }

    /// How many arguments the format reads: one more than the highest argument index used.
    public var argumentCount: Int { (argumentPositions.last ?? -1) + 1 }

    /// The 0-based positions below the highest one named that no specifier names, at most
    /// eight (a format can name position 1,000,000): for `%2$@` alone, `[0]`. printf formats must
    /// name every position up to the highest; where one is skipped, Foundation's result is
    /// undefined.
    public var skippedPositions: [Int] {
        var skipped: [Int] = []
        var expected = 0
        for position in argumentPositions {
            while expected < position && skipped.count < 8 {
                skipped.append(expected)
                expected += 1
            }
            if skipped.count == 8 { break }
            expected = position + 1
        }
        return skipped
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

    // The scan works on UTF-8 bytes: every character of the printf grammar is ASCII, so literal
    // runs are copied as byte ranges and no Character hashing or grapheme breaking happens. A
    // combining mark after `%` does not hide the specifier (NSString formats work on UTF-16
    // units, not characters).

    private static func isFlag(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: " "), UInt8(ascii: "#"), UInt8(ascii: "0"): true
        default: false
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    /// `@ d D i u U o O x X f F e E g G a A c C s S p`, as a 128-bit ASCII mask.
    private static let conversionMask: (low: UInt64, high: UInt64) = "@dDiuUoOxXfFeEgGaAcCsSp".utf8.reduce((0, 0)) { mask, byte in
        byte < 64 ? (mask.0 | 1 << UInt64(byte), mask.1) : (mask.0, mask.1 | 1 << UInt64(byte - 64))
    }

    private static func isConversion(_ byte: UInt8) -> Bool {
        guard byte < 0x80 else { return false }
        return byte < 64 ? conversionMask.low & (1 << UInt64(byte)) != 0 : conversionMask.high & (1 << UInt64(byte - 64)) != 0
    }

    private static func scan(_ source: String) -> [Segment] {
        var source = source
        return source.withUTF8 { scan(utf8: $0) }
    }

    private static func scan(utf8 bytes: UnsafeBufferPointer<UInt8>) -> [Segment] {
        var segments: [Segment] = []
        // At most a literal before each `%` and one after the last: one allocation, where
        // growing a long format's array copies it into ever larger blocks, fresh pages each.
        var percents = 0
        for byte in bytes where byte == UInt8(ascii: "%") { percents += 1 }
        segments.reserveCapacity(2 * percents + 1)
        var sequentialIndex = 0
        var literalStart = 0
        var index = 0
        let count = bytes.count

        func text(_ range: Range<Int>) -> String {
            String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        }
        func flushLiteral(upTo end: Int) {
            if end > literalStart { segments.append(.literal(text(literalStart..<end))) }
        }
        /// The end of the UTF-8 sequence that starts at `position`.
        func scalarEnd(_ position: Int) -> Int {
            var end = position + 1
            while end < count, bytes[end] & 0xC0 == 0x80 { end += 1 }
            return end
        }

        while index < count {
            guard bytes[index] == UInt8(ascii: "%") else {
                index += 1
                continue
            }
            let start = index
            flushLiteral(upTo: start)
            index += 1
            guard index < count else {
                segments.append(.invalid("%"))
                literalStart = count
                break
            }
            if bytes[index] == UInt8(ascii: "%") {
                segments.append(.percent)
                index += 1
                literalStart = index
                continue
            }
            // Optional position: digits followed by '$'.
            var position: Int?
            var lookahead = index
            var digits = 0
            while lookahead < count, isDigit(bytes[lookahead]) {
                digits = min(digits * 10 + Int(bytes[lookahead] - UInt8(ascii: "0")), 1 << 20)  // bounded: a long digit run must not overflow
                lookahead += 1
            }
            if lookahead > index, lookahead < count, bytes[lookahead] == UInt8(ascii: "$"), digits > 0 {
                position = digits
                index = lookahead + 1
            }
            func nextArgument() -> Int {
                if let position { return position - 1 }
                defer { sequentialIndex += 1 }
                return sequentialIndex
            }
            // `%#@name@` (stringsdict variable), also after a width (`%1#@name@`): CoreFoundation
            // reads flags and width in any order, and a width does nothing to an object.
            var hash = index
            while hash < count, isDigit(bytes[hash]) { hash += 1 }
            if hash + 1 < count, bytes[hash] == UInt8(ascii: "#"), bytes[hash + 1] == UInt8(ascii: "@") {
                var end = hash + 2
                while end < count, bytes[end] != UInt8(ascii: "@") { end += 1 }
                if end < count, end > hash + 2 {
                    segments.append(.variable(name: text((hash + 2)..<end), argumentIndex: nextArgument(), explicitPosition: position != nil))
                    index = end + 1
                    literalStart = index
                    continue
                }
            }
            let modifiersStart = index
            while index < count, isFlag(bytes[index]) { index += 1 }
            while index < count, bytes[index] == UInt8(ascii: "*") || isDigit(bytes[index]) { index += 1 }
            if index < count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                while index < count, bytes[index] == UInt8(ascii: "*") || isDigit(bytes[index]) { index += 1 }
            }
            let modifiersEnd = index
            // Length modifier, longest first (`hh` before `h`, `ll` before `l`).
            if index < count {
                switch bytes[index] {
                case UInt8(ascii: "h"), UInt8(ascii: "l"):
                    index += index + 1 < count && bytes[index + 1] == bytes[index] ? 2 : 1
                case UInt8(ascii: "q"), UInt8(ascii: "L"), UInt8(ascii: "z"), UInt8(ascii: "t"), UInt8(ascii: "j"):
                    index += 1
                default:
                    break
                }
            }
            let lengthEnd = index
            guard index < count, isConversion(bytes[index]) else {
                // Not a specifier: keep the text, as NSString would print something unexpected here.
                let end = index < count ? scalarEnd(index) : count
                segments.append(.invalid(text(start..<end)))
                index = end
                literalStart = index
                continue
            }
            let conversion = Character(Unicode.Scalar(bytes[index]))
            index += 1
            segments.append(.argument(Specifier(
                argumentIndex: nextArgument(), explicitPosition: position != nil, modifiers: text(modifiersStart..<modifiersEnd),
                length: text(modifiersEnd..<lengthEnd), conversion: conversion, text: text(start..<index))))
            literalStart = index
        }
        flushLiteral(upTo: count)
        return segments
    }
}
