/// An object that is either built already or still a node of the document it was read from,
/// built each time it is read: a decoded payload's `content-state`, which a simulated device
/// keeps for each of the last updates of a Live Activity and reads only when asked (building
/// and freeing the tree on every update was a sixth of the mock's time on that shape).
///
/// Two are equal when their objects are, however each is held.
package enum DeferredJSONObject: Sendable, Hashable {
    /// Built.
    case value(JSONObject)
    /// The object at `node`, whose kind is `.object`.
    case node(JSONDocument.Node)

    /// The object (built now from the document when held as a node).
    @inlinable
    package var object: JSONObject {
        switch self {
        case .value(let object): object
        case .node(let node): node.value.objectValue ?? JSONObject()
        }
    }

    package static func == (lhs: Self, rhs: Self) -> Bool {
        if case .node(let left) = lhs, case .node(let right) = rhs, left.document.storage === right.document.storage, left.index == right.index {
            return true
        }
        return lhs.object == rhs.object
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(object)
    }
}
