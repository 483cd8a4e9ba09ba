import HeraldJSON

/// A finding's message: literal text and values joined in one allocation, byte for byte.
///
/// String interpolation reserves room for its literals and two bytes a value, so a message with
/// a key in it is allocated and then grown again; a 4 KB payload can hold a hundred findings of
/// one rule, each listed with its own message. The rules that report findings one per key or per
/// element build their messages here.
enum Message {
    /// `parts`, in order, as one string.
    static func joined(
        _ first: String, _ second: String, _ third: String, _ fourth: String = "", _ fifth: String = "",
        _ sixth: String = "", _ seventh: String = ""
    ) -> String {
        var parts = (first, second, third, fourth, fifth, sixth, seventh)
        let total = parts.0.utf8.count + parts.1.utf8.count + parts.2.utf8.count + parts.3.utf8.count
            + parts.4.utf8.count + parts.5.utf8.count + parts.6.utf8.count
        return String(unsafeUninitializedCapacity: total) { buffer in
            var at = 0
            append(&parts.0, to: buffer, at: &at)
            append(&parts.1, to: buffer, at: &at)
            append(&parts.2, to: buffer, at: &at)
            append(&parts.3, to: buffer, at: &at)
            append(&parts.4, to: buffer, at: &at)
            append(&parts.5, to: buffer, at: &at)
            append(&parts.6, to: buffer, at: &at)
            return at
        }
    }

    /// Copies `part`'s UTF-8 into `buffer` at `offset`, and moves `offset` past it.
    @inline(__always)
    static func append(_ part: inout String, to buffer: UnsafeMutableBufferPointer<UInt8>, at offset: inout Int) {
        part.withUTF8 { append($0, to: buffer, at: &offset) }
    }

    /// Copies `part` into `buffer` at `offset`, and moves `offset` past it.
    @inline(__always)
    static func append(_ part: UnsafeBufferPointer<UInt8>, to buffer: UnsafeMutableBufferPointer<UInt8>, at offset: inout Int) {
        guard let source = part.baseAddress, let target = buffer.baseAddress, !part.isEmpty else { return }
        precondition(offset + part.count <= buffer.count, "a message part past the size computed for it")
        (target + offset).update(from: source, count: part.count)
        offset += part.count
    }

    /// Copies a literal into `buffer` at `offset`, and moves `offset` past it.
    @inline(__always)
    static func append(_ literal: StaticString, to buffer: UnsafeMutableBufferPointer<UInt8>, at offset: inout Int) {
        literal.withUTF8Buffer { append($0, to: buffer, at: &offset) }
    }
}

/// A finding's message as reported: text, or literal text around one string of the document
/// (the key or the value the finding names) and one word, joined only when the message is read.
///
/// A rule that reports a finding per key or per element describes each with a few static
/// strings and a tape index, so a report that nobody reads in full (the gateway's door reads
/// the first error) makes no string per finding. A struct of plain fields
/// and one string: copied with one retain, not through an enum's outlined copy.
struct MessageText: Sendable {
    /// The whole text (when `quoted` is negative), or the word after `middle`.
    private let text: String
    /// The tape index of the string quoted after `head`, or -1; for a syntax error, the byte
    /// offset it is at.
    private let quoted: Int32
    /// A syntax error the recovering parser carried on past, worded after `head` from the
    /// document's text.
    private let syntax: RecoveredError.Kind?
    private let head: StaticString
    private let middle: StaticString
    private let tail: StaticString

    private init(
        text: String, quoted: Int32, syntax: RecoveredError.Kind? = nil, head: StaticString,
        middle: StaticString = "", tail: StaticString = ""
    ) {
        self.text = text
        self.quoted = quoted
        self.syntax = syntax
        self.head = head
        self.middle = middle
        self.tail = tail
    }

    /// Text as it is.
    static func text(_ text: String) -> MessageText {
        MessageText(text: text, quoted: -1, head: "", middle: "", tail: "")
    }

    /// The message `head` + the string at tape index `quoted` (a key or a string value,
    /// unescaped) + `middle` + `word` + `tail`.
    static func quoting(_ head: StaticString, _ quoted: Int, _ middle: StaticString, _ word: String = "", _ tail: StaticString = "") -> MessageText {
        MessageText(text: word, quoted: Int32(truncatingIfNeeded: quoted), head: head, middle: middle, tail: tail)
    }

    /// `prefix` + the message of `error`, which the recovering parser carried on past in
    /// `text`: worded when read, from the document's copy of `text`.
    static func syntax(_ error: RecoveredError, in text: UnsafeBufferPointer<UInt8>, after prefix: StaticString) -> MessageText {
        guard let offset = Int32(exactly: error.offset) else {
            return .text(error.error(in: text).message(after: prefix))
        }
        return MessageText(text: "", quoted: offset, syntax: error.kind, head: prefix)
    }

    /// The text, reading the quoted string from `document`: one allocation, the literals copied
    /// from where they are stored.
    func resolved(in document: JSONDocument?) -> String {
        guard quoted >= 0 else { return text }
        if let syntax {
            // The document is the one parsed from the text the error is in.
            guard let document else { return "" }
            return document.withUnsafeBytes { bytes in
                syntax.reason(at: Int(quoted), in: bytes.assumingMemoryBound(to: UInt8.self)).message(after: head)
            }
        }
        var string = document.flatMap { $0.string(atTapeIndex: Int(quoted)) } ?? ""
        var word = text
        // `withUTF8Buffer`, not `utf8CodeUnitCount`: a one-character literal may be stored as
        // its scalar, and then only the buffer has its length.
        let total = head.withUTF8Buffer(\.count) + string.utf8.count + middle.withUTF8Buffer(\.count) + word.utf8.count + tail.withUTF8Buffer(\.count)
        return String(unsafeUninitializedCapacity: total) { buffer in
            var at = 0
            Message.append(head, to: buffer, at: &at)
            Message.append(&string, to: buffer, at: &at)
            Message.append(middle, to: buffer, at: &at)
            Message.append(&word, to: buffer, at: &at)
            Message.append(tail, to: buffer, at: &at)
            return at
        }
    }
}
