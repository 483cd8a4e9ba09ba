extension JSONDocument {
    /// The decoded text of the object key at a tape index, or `nil` if there is no key there.
    public func keyString(at index: Int) -> String? {
        guard nodeIndices.contains(index), tape[index].role == .key else { return nil }
        return decodeString(tape[index])
    }

    /// The decoded text of the key or string value at a tape index, or `nil` if there is neither.
    package func string(atTapeIndex index: Int) -> String? {
        guard nodeIndices.contains(index), tape[index].kind == .string else { return nil }
        return decodeString(tape[index])
    }

    /// The source bytes of the object key at a tape index (quotes included), or `nil` if there is
    /// no key there.
    public func keyByteRange(at index: Int) -> Range<Int>? {
        guard nodeIndices.contains(index), tape[index].role == .key else { return nil }
        return Int(tape[index].start)..<Int(tape[index].end)
    }

    /// One entry of a document's flat form: a value or an object key, in document order.
    public struct Token: Sendable {
        /// The tape index (``Node/index`` for values; a key's value is at `index + 1`).
        public let index: Int
        /// The kind of value (keys are strings).
        public let kind: JSONKind
        /// Whether this is an object key rather than a value.
        public let isKey: Bool
        /// The source bytes, quotes and brackets included.
        public let byteRange: Range<Int>
        /// For strings: the source uses escapes, so its content must be decoded to be read.
        public let hasEscapes: Bool

        @inlinable
        init(index: Int, kind: JSONKind, isKey: Bool, byteRange: Range<Int>, hasEscapes: Bool) {
            self.index = index
            self.kind = kind
            self.isKey = isKey
            self.byteRange = byteRange
            self.hasEscapes = hasEscapes
        }

        /// The bytes between a string's quotes.
        @inlinable
        public var contentRange: Range<Int> { (byteRange.lowerBound + 1)..<(byteRange.upperBound - 1) }
    }

    /// Every key and value in `node`'s subtree (the node included), in document order: a flat
    /// walk over the tape with no recursion and no node values. Read the bytes with
    /// `bytes.withUnsafeBytes` around the loop.
    @inlinable
    public func tokens(in node: Node) -> Tokens {
        Tokens(document: self, range: node.index..<Int(tape[node.index].next))
    }

    /// Every token of a member, its key first, then its value's subtree; see ``tokens(in:)``.
    @inlinable
    public func tokens(of member: Member) -> Tokens {
        Tokens(document: self, range: member.keyNode.index..<Int(tape[member.value.index].next))
    }

    /// The tokens of the tape entries in `range`, in order: a run of siblings' subtrees (the
    /// members of an object but some) walked with one iterator, rather than one per member.
    @inlinable
    package func tokens(inTapeRange range: Range<Int>) -> Tokens {
        Tokens(document: self, range: range)
    }

    /// The length of the source of the key or value at a tape index, quotes and brackets
    /// included.
    @inlinable
    package func sourceLength(at index: Int) -> Int {
        Int(tape[index].end) - Int(tape[index].start)
    }

    /// The tape index just past the subtree of the value at `index` (where its next sibling's
    /// entries, or its parent's end, begin).
    @inlinable
    package func endOfSubtree(at index: Int) -> Int {
        Int(tape[index].next)
    }

    /// The tokens of a subtree; see ``tokens(in:)``. Holds the document, so the tape stays alive.
    /// Each copy iterates on its own.
    public struct Tokens: Sequence, IteratorProtocol {
        @usableFromInline let document: JSONDocument
        @usableFromInline var index: Int
        @usableFromInline let end: Int

        @inlinable
        init(document: JSONDocument, range: Range<Int>) {
            self.document = document
            self.index = range.lowerBound
            self.end = range.upperBound
        }

        /// The next token.
        @inlinable
        public mutating func next() -> Token? {
            guard index < end else { return nil }
            defer { index += 1 }
            return document.token(at: index)
        }

        /// The number of tokens left.
        @inlinable
        public var underestimatedCount: Int { end - index }
    }

    /// The token of the tape entry at `index`.
    @inlinable
    func token(at index: Int) -> Token {
        let entry = tape[index]
        return Token(index: index, kind: entry.kind, isKey: entry.role == .key,
                     byteRange: Int(entry.start)..<Int(entry.end), hasEscapes: entry.kind == .string && entry.flag)
    }

    /// Calls `body` for every key and value in `node`'s subtree (the node included), in document
    /// order, with the source bytes. A flat walk: no recursion, no node values, so scanning a
    /// large custom payload costs one pass over its entries.
    @inlinable
    public func forEachToken(in node: Node, _ body: (Token, UnsafeRawBufferPointer) throws -> Void) rethrows {
        let end = Int(tape[node.index].next)
        try withUnsafeBytes { source in
            for index in node.index..<end {
                try body(token(at: index), source)
            }
        }
    }
}
