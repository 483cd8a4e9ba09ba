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
