/// Every value's parent and its place there (a member's key, an element's position), built in
/// one walk of the document: a finding's pointer is then read upwards in the depth of the
/// value, and a value hidden by a later duplicate key (named by no pointer) is known at once.
package struct PointerIndex {
    private let document: JSONDocument
    /// By tape index: the container holding the value (-1 for the root and for keys).
    private var parent: [Int32]
    /// By tape index: an element's position in its array, or -1 (a member: its key is the entry
    /// just before it).
    private var position: [Int32]
    /// Values that a later member with the same key hides (only objects with a repeated key
    /// are looked at).
    private var hidden: Set<Int> = []

    /// The index of `document`; `hiddenValues` are the values a later duplicate key hides, when
    /// the caller has them already (``JSONDocument/repeatedKeys(quickProbeBudget:)``; found here
    /// otherwise). Pointers to them and into them are `nil`.
    package init(_ document: JSONDocument, hiddenValues: [Int32]? = nil) {
        self.document = document
        let tape = document.tape
        var parent = [Int32](repeating: -1, count: tape.count)
        var position = [Int32](repeating: -1, count: tape.count)
        parent.withUnsafeMutableBufferPointer { parent in
            position.withUnsafeMutableBufferPointer { position in
                // The innermost open container (its tape index, where it ends, and the position of
                // its next element, -1 in an object) in `top`, the ones around it on the stack; at
                // first a container around the root that never ends.
                var top: (index: Int32, end: UInt32, elements: Int32) = (-1, .max, -1)
                var stack: [(index: Int32, end: UInt32, elements: Int32)] = []
                for index in tape.indices {
                    while UInt32(index) >= top.end { top = stack.removeLast() }
                    let entry = tape[index]
                    guard entry.role == .value else { continue }
                    parent[index] = top.index
                    if top.elements >= 0 {
                        position[index] = top.elements
                        top.elements += 1
                    }
                    if entry.kind == .object || entry.kind == .array {
                        stack.append(top)
                        top = (Int32(index), entry.next, entry.kind == .array ? 0 : -1)
                    }
                }
            }
        }
        self.parent = parent
        self.position = position
        for value in hiddenValues ?? document.repeatedKeys().hiddenValues { hidden.insert(Int(value)) }
    }

    /// The tokens of containers already named (`nil` for one that is hidden, or inside one):
    /// findings cluster in a few containers, so each container is named once.
    private var containerTokens: [Int32: [String]?] = [:]
    /// The container last named, and its tokens: most findings in a row are in one.
    private var recent: (container: Int32, tokens: [String]?) = (-1, nil)

    /// The pointer to the value at `index`, or nil when a later duplicate key hides it (or one of
    /// its containers).
    package mutating func pointer(to index: Int) -> JSONPointer? {
        guard parent.indices.contains(index) else { return JSONPointer(tokens: []) }
        // Most findings are in a container already named: its tokens and one more, with no walk.
        let container = parent[index]
        // (A container without a parent is the root, named by no token.)
        if container >= 0, let known = knownTokens(ofContainer: container) {
            guard var tokens = known, hidden.isEmpty || !hidden.contains(index) else { return nil }
            tokens.append(token(of: index))
            return JSONPointer(tokens: tokens)
        }
        // Up from the value to the root, or to the nearest container already named.
        var chain: [Int] = []
        var current = index
        var base: [String]?
        while true {
            if current != index, let known = containerTokens[Int32(current)] {
                base = known
                break
            }
            if parent[current] < 0 {
                base = []
                break
            }
            chain.append(current)
            current = Int(parent[current])
        }
        // Down again, naming (and remembering) each container on the way.
        var tokens = base
        for value in chain.reversed() {
            if !hidden.isEmpty, hidden.contains(value) { tokens = nil }
            if tokens != nil { tokens!.append(token(of: value)) }
            if value != index { containerTokens[Int32(value)] = tokens }
        }
        return tokens.map { JSONPointer(tokens: $0) }
    }

    /// The tokens of a container already named (`.some(nil)`: hidden), or `nil` if it is not.
    private mutating func knownTokens(ofContainer container: Int32) -> [String]?? {
        if parent[Int(container)] < 0 { return .some([]) }
        if container == recent.container { return .some(recent.tokens) }
        guard let known = containerTokens[container] else { return nil }
        recent = (container, known)
        return .some(known)
    }

    /// The token naming the value at `index` in its container: its position or its key.
    private func token(of index: Int) -> String {
        position[index] >= 0 ? String(position[index]) : document.keyString(at: index - 1) ?? ""
    }
}

/// Pointers and locations for many values of one document, without walking from the root for
/// each: pointers in time proportional to the value's depth (``PointerIndex``, built on the first
/// call), locations in time proportional to the distance from the previous one (asked in
/// document order, as a decoder meets its errors).
package struct NodeLocator {
    private let document: JSONDocument
    private var index: PointerIndex?
    private var cursor = SourceCursor()

    package init(_ document: JSONDocument) {
        self.document = document
    }

    /// The pointer to `node` (for a value hidden by a later duplicate key, the walk from the root).
    package mutating func pointer(to node: JSONDocument.Node) -> JSONPointer {
        if index == nil { index = PointerIndex(document) }
        return index!.pointer(to: node.index) ?? document.pointer(to: node)
    }

    /// The location of the byte at `offset`.
    package mutating func location(ofOffset offset: Int) -> SourceLocation {
        cursor.location(ofOffset: offset, in: document.source)
    }
}
