import HeraldProtocol
import HeraldJSON
import HeraldLocalization
import HeraldPayload

extension NotificationRenderer {
    /// Why a document cannot be rendered at all.
    public struct DocumentError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The decoding error that could not be worked around.
        public var underlying: PayloadDecodingError

        /// `LINE:COLUMN: message`.
        public var description: String { underlying.description }
    }

    /// Renders a parsed payload the way the device reads it: leniently.
    ///
    /// The device reads `userInfo` key by key; Herald assumes (as a property-list reader does)
    /// that a value of the wrong type is skipped rather than failing the whole notification.
    /// So a value that `Payload` cannot decode (`"badge": "5"`) is dropped, the rest is
    /// rendered, and the drop is reported as an error diagnostic with its position. For a key
    /// given twice, the last value is used, as `JSONSerialization` does.
    ///
    /// - Parameters:
    ///   - document: The payload, parsed.
    ///   - headers: The request's headers (push type, priority, collapse ID…).
    ///   - includingUserInfo: Whether ``RenderedNotification/userInfo`` carries the payload as
    ///     received; leave it out (an empty object) when only what the user sees matters, such as
    ///     a simulated device receiving thousands of pushes a second.
    /// - Throws: ``DocumentError`` only when the document is not a JSON object.
    public func render(document: JSONDocument, headers: APNsRequestHeaders = APNsRequestHeaders(), includingUserInfo: Bool = true) throws(DocumentError) -> RenderedNotification {
        var current = document
        var dropped: [LocalizationDiagnostic] = []
        for _ in 0..<64 {
            do {
                let payload = try Payload(document: current)
                // The app receives the payload as sent, keys the device ignored included.
                let received = includingUserInfo ? document.root.value.objectValue : JSONObject()
                var rendered = render(payload, headers: headers, userInfo: received)
                rendered.diagnostics = dropped + rendered.diagnostics
                return rendered
            } catch {
                guard !error.pointer.tokens.isEmpty, case .object(var root) = current.root.value else {
                    throw DocumentError(underlying: error)
                }
                let action: String
                let parentKey = error.pointer.tokens.dropLast().last ?? ""
                if parentKey.hasSuffix("loc-args"), let node = current.resolve(error.pointer), node.kind == .number || node.kind == .bool {
                    // `%@` prints an NSNumber's description, so a number argument shows as written.
                    root.replace(at: error.pointer, with: .string(node.sourceText))
                    action = "Herald assumes the device shows it as \"\(node.sourceText)\" (%@ prints a number's description)"
                } else if case .duplicateKey(let key) = error.kind {
                    root.keepLastDuplicate(of: key, inObjectAt: error.pointer.parent ?? .root)
                    action = "the device uses the last value"
                } else {
                    root.remove(at: error.pointer)
                    action = "Herald assumes the device ignores this value"
                }
                dropped.append(LocalizationDiagnostic(.error, "\(error.pointer): \(error.message); \(action)", location: error.location))
                guard let next = try? JSONDocument(parsing: JSONValue.object(root).compactBytes()) else { throw DocumentError(underlying: error) }
                current = next
            }
        }
        throw DocumentError(underlying: PayloadDecodingError(kind: .invalidValue(expected: "a payload Herald can render", found: "more than 64 unreadable values"), pointer: .root, location: document.root.location))
    }
}

extension JSONObject {
    /// Replaces the value at `pointer` (relative to this object).
    mutating func replace(at pointer: JSONPointer, with value: JSONValue) {
        update(at: pointer.tokens[...]) { _ in value }
    }

    /// Removes the value at `pointer` (relative to this object).
    mutating func remove(at pointer: JSONPointer) {
        update(at: pointer.tokens[...]) { _ in nil }
    }

    /// Applies `change` to the member or element at `tokens`; `nil` removes it. With duplicate
    /// keys the last member is the one changed, as the device reads the last.
    fileprivate mutating func update(at tokens: ArraySlice<String>, _ change: (JSONValue) -> JSONValue?) {
        guard let first = tokens.first, let index = members.lastIndex(where: { $0.key == first }) else { return }
        let rest = tokens.dropFirst()
        if rest.isEmpty {
            if let value = change(members[index].value) { members[index].value = value } else { members.remove(at: index) }
            return
        }
        members[index].value = members[index].value.updating(at: rest, change)
    }

    /// In the object at `pointer`, keeps only the last member named `key`.
    mutating func keepLastDuplicate(of key: String, inObjectAt pointer: JSONPointer) {
        guard let first = pointer.tokens.first else {
            guard let last = members.lastIndex(where: { $0.key == key }) else { return }
            members = members.enumerated().filter { $0.offset == last || $0.element.key != key }.map(\.element)
            return
        }
        guard let index = members.lastIndex(where: { $0.key == first }), case .object(var object) = members[index].value else { return }
        object.keepLastDuplicate(of: key, inObjectAt: JSONPointer(tokens: Array(pointer.tokens.dropFirst())))
        members[index].value = .object(object)
    }
}

extension JSONValue {
    /// This value with `change` applied at `tokens` (non-empty) below it.
    fileprivate func updating(at tokens: ArraySlice<String>, _ change: (JSONValue) -> JSONValue?) -> JSONValue {
        switch self {
        case .object(var object):
            object.update(at: tokens, change)
            return .object(object)
        case .array(var array):
            guard let position = Int(tokens.first!), array.indices.contains(position) else { return self }
            let rest = tokens.dropFirst()
            if rest.isEmpty {
                if let value = change(array[position]) { array[position] = value } else { array.remove(at: position) }
            } else {
                array[position] = array[position].updating(at: rest, change)
            }
            return .array(array)
        default:
            return self
        }
    }
}
