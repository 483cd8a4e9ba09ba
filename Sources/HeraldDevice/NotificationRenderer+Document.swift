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
        // One lenient decode: every value the device would skip is left out and reported, in
        // document order (the payload is read once, whatever it holds).
        let decoded: (payload: Payload, recovered: [(error: PayloadDecodingError, action: PayloadRecovery)])
        do {
            decoded = try Payload.decodingLeniently(document: document)
        } catch {
            throw DocumentError(underlying: error)
        }
        var dropped: [LocalizationDiagnostic] = []
        dropped.reserveCapacity(min(decoded.recovered.count, Self.maximumReportedDrops + 1))
        for (error, action) in decoded.recovered.prefix(Self.maximumReportedDrops) {
            let consequence = switch action {
            case .readAsText(let text): "Herald assumes the device shows it as \"\(text)\" (%@ prints a number's description)"
            case .lastDuplicateUsed: "the device uses the last value"
            case .dropped: "Herald assumes the device ignores this value"
            }
            dropped.append(LocalizationDiagnostic(.error, "\(error.pointer): \(error.message); \(consequence)", location: error.location))
        }
        if decoded.recovered.count > Self.maximumReportedDrops {
            dropped.append(LocalizationDiagnostic(
                .error, "\(decoded.recovered.count - Self.maximumReportedDrops) more values the device cannot read are left out as well (the first \(Self.maximumReportedDrops) are listed)",
                location: decoded.recovered[Self.maximumReportedDrops].error.location))
        }
        // The app receives the payload as sent, keys the device ignored included.
        let received = includingUserInfo ? document.root.value.objectValue : JSONObject()
        var rendered = render(decoded.payload, headers: headers, userInfo: received)
        rendered.diagnostics = dropped + rendered.diagnostics
        return rendered
    }

    /// The most unreadable values a rendering lists one by one; the rest are counted in one
    /// diagnostic.
    static let maximumReportedDrops = 64
}
