extension JSONDocument {
    /// Writes the document: member order, duplicate keys and number text as in the source;
    /// strings in canonical form (a string written with escapes is rewritten with only the
    /// escapes JSON needs, so `"caf\u00e9"` becomes `"café"` and `"a\/b"` becomes `"a/b"`).
    ///
    /// For a source already in compact canonical form the output is byte-for-byte the source.
    public func write<Output: JSONOutput>(to output: inout Output, style: JSONWriterStyle = .compact) {
        // `consume` hands the caller's buffer to the writer without a copy-on-write copy.
        var writer = JSONWriter(output: consume output, style: style)
        withUnsafeBytes { source in
            var cursor = 0
            writeValue(&cursor, source: source, writer: &writer)
        }
        output = writer.output
    }

    /// The compact canonical form: what Herald sends, byte for byte.
    public func compactBytes() -> [UInt8] {
        // The compact form is never longer than the source: whitespace goes, escapes only shrink
        // or stay, and everything else is copied.
        [UInt8](writingJSON: byteCount) { write(to: &$0, style: .compact) }
    }

    /// The indented form, for people.
    public func prettyBytes() -> [UInt8] {
        var output = JSONBytes()
        output.bytes.reserveCapacity(byteCount * 2)
        write(to: &output, style: .pretty)
        return output.bytes
    }

    /// Whether the source is already in compact canonical form (no whitespace, no escapes that
    /// could be shorter), decided from the tape without writing anything.
    public var isCompact: Bool {
        // The parser notes it for free; otherwise (a recovered document) count from the tape.
        if storage.knownCompact { return true }
        var length = 0
        for entry in tape {
            switch entry.kind {
            case .object:
                length += 2 + max(0, Int(entry.count) * 2 - 1)
            case .array:
                length += 2 + max(0, Int(entry.count) - 1)
            case .string:
                // A string with escapes may have a shorter canonical spelling.
                if entry.flag { return false }
                length += Int(entry.end - entry.start)
            case .null, .bool, .number:
                length += Int(entry.end - entry.start)
            }
        }
        return length == byteCount
    }

    /// The size of the compact canonical form in bytes, without building it.
    public var compactByteCount: Int {
        var counter = JSONByteCounter()
        write(to: &counter, style: .compact)
        return counter.count
    }

    /// Writes a member's key at a tape index, in canonical form.
    fileprivate func writeKey<Output: JSONOutput>(at index: Int, source: UnsafeRawBufferPointer, writer: inout JSONWriter<Output>) {
        let keyEntry = tape[index]
        if keyEntry.flag {
            writer.key(decodeString(keyEntry))
        } else {
            writer.prepareForMember()
            writer.output.write(UnsafeRawBufferPointer(rebasing: source[Int(keyEntry.start)..<Int(keyEntry.end)]))
            writer.writeColon()
        }
    }

    /// Writes the value at `cursor` and advances `cursor` past its subtree.
    fileprivate func writeValue<Output: JSONOutput>(
        _ cursor: inout Int, source: UnsafeRawBufferPointer, writer: inout JSONWriter<Output>
    ) {
        let entry = tape[cursor]
        switch entry.kind {
        case .null, .bool, .number:
            writer.rawValue(UnsafeRawBufferPointer(rebasing: source[Int(entry.start)..<Int(entry.end)]))
            cursor += 1
        case .string:
            if entry.flag {
                writer.string(decodeString(entry))
            } else {
                // Without escapes the source span is already canonical: the parser admitted no
                // control characters, and a quote or backslash would have needed an escape.
                writer.rawValue(UnsafeRawBufferPointer(rebasing: source[Int(entry.start)..<Int(entry.end)]))
            }
            cursor += 1
        case .array:
            writer.beginArray()
            cursor += 1
            for _ in 0..<entry.count {
                writeValue(&cursor, source: source, writer: &writer)
            }
            writer.endArray()
        case .object:
            writer.beginObject()
            cursor += 1
            for _ in 0..<entry.count {
                writeKey(at: cursor, source: source, writer: &writer)
                cursor += 1
                writeValue(&cursor, source: source, writer: &writer)
            }
            writer.endObject()
        }
    }
}

extension JSONWriter {
    /// Writes a value of a parsed document (with its subtree) as the next value, in the form
    /// ``JSONDocument/write(to:style:)`` gives it: number text as written, strings canonical.
    /// A compact source is copied span by span, without building values.
    public mutating func value(_ node: JSONDocument.Node) {
        node.document.withUnsafeBytes { source in
            var cursor = node.index
            node.document.writeValue(&cursor, source: source, writer: &self)
        }
    }

    /// Writes a member of a parsed document's object (its key, then its value) into the object
    /// being written.
    public mutating func member(_ member: JSONDocument.Member) {
        let document = member.value.document
        document.withUnsafeBytes { source in
            document.writeKey(at: member.keyNode.index, source: source, writer: &self)
            var cursor = member.value.index
            document.writeValue(&cursor, source: source, writer: &self)
        }
    }
}

extension JSONValue {
    /// Writes the value into `output`.
    public func write<Output: JSONOutput>(to output: inout Output, style: JSONWriterStyle = .compact) {
        var writer = JSONWriter(output: consume output, style: style)
        writer.value(self)
        output = writer.output
    }

    /// The compact form as bytes.
    public func compactBytes() -> [UInt8] {
        var output = JSONBytes()
        write(to: &output)
        return output.bytes
    }

    /// The compact form as a string.
    public var compactString: String {
        String(decoding: compactBytes(), as: UTF8.self)
    }

    /// The indented form as a string.
    public var prettyString: String {
        var output = JSONBytes()
        write(to: &output, style: .pretty)
        return String(decoding: output.bytes, as: UTF8.self)
    }
}
