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

    @inline(__always)
    private static func append(_ part: inout String, to buffer: UnsafeMutableBufferPointer<UInt8>, at offset: inout Int) {
        part.withUTF8 { utf8 in
            guard let source = utf8.baseAddress, let target = buffer.baseAddress, !utf8.isEmpty else { return }
            (target + offset).update(from: source, count: utf8.count)
            offset += utf8.count
        }
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
    /// The tape index of the string quoted after `head`, or -1.
    private let quoted: Int32
    private let head: StaticString
    private let middle: StaticString
    private let tail: StaticString

    private init(text: String, quoted: Int32, head: StaticString, middle: StaticString, tail: StaticString) {
        self.text = text
        self.quoted = quoted
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

    /// The text, reading the quoted string from `document`: one allocation, the literals copied
    /// from where they are stored.
    func resolved(in document: JSONDocument?) -> String {
        guard quoted >= 0 else { return text }
        var string = document.flatMap { $0.string(atTapeIndex: Int(quoted)) } ?? ""
        var word = text
        return head.withUTF8Buffer { head in
            middle.withUTF8Buffer { middle in
                tail.withUTF8Buffer { tail in
                    string.withUTF8 { string in
                        word.withUTF8 { word in
                            String(unsafeUninitializedCapacity: head.count + string.count + middle.count + word.count + tail.count) { buffer in
                                var at = 0
                                func put(_ part: UnsafeBufferPointer<UInt8>) {
                                    guard let source = part.baseAddress, let target = buffer.baseAddress, !part.isEmpty else { return }
                                    (target + at).update(from: source, count: part.count)
                                    at += part.count
                                }
                                put(head)
                                put(string)
                                put(middle)
                                put(word)
                                put(tail)
                                return at
                            }
                        }
                    }
                }
            }
        }
    }
}
