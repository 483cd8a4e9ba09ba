/// Every value's parent and its place there (a member's key, an element's position), built in
/// one walk of the document: a finding's pointer is then read upwards in the depth of the
/// value, and a value hidden by a later duplicate key (named by no pointer) is known at once.
package struct PointerIndex {
    private enum Step {
        case member(parent: Int, key: JSONDocument.Node)
        case element(parent: Int, position: Int)
    }

    private let document: JSONDocument
    private var steps: [Int: Step] = [:]
    /// Values that a later member with the same key hides.
    private var hidden: Set<Int> = []

    package init(_ document: JSONDocument) {
        self.document = document
        var stack = [document.root]
        while let node = stack.popLast() {
            switch node.kind {
            case .object:
                var lastByKey: [String: Int] = [:]
                for member in node.members {
                    steps[member.value.index] = .member(parent: node.index, key: member.keyNode)
                    if let earlier = lastByKey.updateValue(member.value.index, forKey: member.key) { hidden.insert(earlier) }
                    stack.append(member.value)
                }
            case .array:
                for (position, element) in node.elements.enumerated() {
                    steps[element.index] = .element(parent: node.index, position: position)
                    stack.append(element)
                }
            default:
                break
            }
        }
    }

    /// The pointer to the value at `index`, or nil when a later duplicate key hides it (or one of
    /// its containers).
    package func pointer(to index: Int) -> JSONPointer? {
        var tokens: [String] = []
        var current = index
        while let step = steps[current] {
            if hidden.contains(current) { return nil }
            switch step {
            case .member(let parent, let key):
                tokens.append(key.stringValue ?? "")
                current = parent
            case .element(let parent, let position):
                tokens.append(String(position))
                current = parent
            }
        }
        return JSONPointer(tokens: tokens.reversed())
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
