import HeraldJSON
import HeraldLint
import HeraldProtocol

/// A start, update or end as the API takes it: the fields read and checked, and the payload the
/// gateway will build linted at the door by the rules the mock and `herald lint` use (what the
/// device would ignore is refused here, not discovered on a phone).
struct ActivityRequest {
    /// A refusal: the status, what is wrong, where; the lint findings when the payload is the cause.
    struct Refusal: Error {
        var status: Int
        var message: String
        var pointer: String?
        var findings: [LintDiagnostic] = []
    }

    static let startFields = ["id", "attributesType", "attributes", "contentState", "alert", "to", "staleDate", "relevanceScore", "channel"]
    static let updateFields = ["contentState", "alert", "staleDate", "relevanceScore", "priority"]
    static let endFields = ["contentState", "alert", "dismissalDate", "staleDate", "relevanceScore", "priority"]

    /// The longest id and attributes type (Unicode scalars, as JSON Schema's `maxLength` counts).
    static let maximumIDBytes = 128

    static func refuseUnknown(_ root: JSONDocument.Node, allowed: [String]) throws(Refusal) {
        guard root.kind == .object else { throw Refusal(status: 400, message: "expected a JSON object", pointer: "") }
        for member in root.members where !allowed.contains(member.key) {
            throw Refusal(status: 400, message: "unknown field; the fields are \(allowed.joined(separator: ", "))", pointer: JSONPointer(tokens: [member.key]).description)
        }
    }

    /// An identifier field: 1 to 128 bytes of text without control characters.
    static func identifier(_ root: JSONDocument.Node, _ key: String, what: String) throws(Refusal) -> String {
        guard let text = root[key]?.stringValue, !text.isEmpty, text.unicodeScalars.count <= maximumIDBytes,
            !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0 == "/" })
        else {
            throw Refusal(status: 400, message: "required: \(what), a string of 1 to \(maximumIDBytes) characters without control characters or /", pointer: "/\(key)")
        }
        return text
    }

    /// The content of a start, update or end from the request's fields.
    static func content(_ root: JSONDocument.Node, event: ActivityContent.Event) throws(Refusal) -> ActivityContent {
        func seconds(_ key: String) throws(Refusal) -> Int64? {
            guard let node = root[key] else { return nil }
            guard let value = wholeNumber(node), value >= 0, value < 100_000_000_000 else {
                throw Refusal(status: 400, message: "a UNIX time in seconds (not milliseconds)", pointer: "/\(key)")
            }
            return value
        }
        let contentState = root["contentState"]
        if let contentState, contentState.kind != .object {
            throw Refusal(status: 400, message: "the activity's ContentState as a JSON object (as the app's Codable type decodes it)", pointer: "/contentState")
        }
        if contentState == nil, event != .end {
            throw Refusal(status: 422, message: "required: \"contentState\": a Live Activity \(event.rawValue) without content-state is ignored by the device", pointer: "/contentState")
        }
        let alert = root["alert"]
        if let alert, alert.kind != .object, alert.kind != .string {
            throw Refusal(status: 400, message: "an alert: a string, or an object with title and body", pointer: "/alert")
        }
        if alert == nil, event == .start {
            throw Refusal(status: 422, message: "required: \"alert\": a start without an alert is ignored by the device", pointer: "/alert")
        }
        var relevance: JSONNumber?
        if let node = root["relevanceScore"] {
            guard case .number(let number) = node.value else { throw Refusal(status: 400, message: "a number (any; relative to the app's other activities)", pointer: "/relevanceScore") }
            relevance = number
        }
        var priority = 5
        if let node = root["priority"] {
            guard let value = wholeNumber(node), value == 5 || value == 10 else {
                throw Refusal(status: 400, message: "5 (the default: no budget used) or 10 (counts against the device's budget)", pointer: "/priority")
            }
            priority = Int(value)
        }
        return ActivityContent(
            event: event, contentState: contentState?.value, alert: alert?.value, staleDate: try seconds("staleDate"),
            dismissalDate: try seconds("dismissalDate"), relevanceScore: relevance, priority: event == .start ? 10 : priority)
    }

    static let linter = Linter()

    /// A JSON number with no fraction (`612` or `612.0`), as JSON Schema's `integer` reads it.
    static func wholeNumber(_ node: JSONDocument.Node) -> Int64? {
        if let value = node.int64Value { return value }
        guard let value = node.doubleValue, value.rounded() == value, abs(value) < 9e15 else { return nil }
        return Int64(value)
    }

    /// Lints the payload the gateway will send for `content` (with the time now); a lint error
    /// refuses the request with every finding. The warnings are returned.
    static func lint(_ content: ActivityContent, activity: StoredActivity, app: GatewayApp, now: Int64) throws(Refusal) -> [LintDiagnostic] {
        let address: ActivityPayload.Address? = content.event == .start ? (activity.wantsChannel ? .channel("AAAAAAAAAAAAAAAAAAAAAA==") : .updateToken) : nil
        let bytes = ActivityPayload.bytes(content, activity: activity, timestamp: now / 1_000, address: address)
        if let size = Linter.sizeRefusal(byteCount: bytes.count, pushType: .liveactivity) {
            throw Refusal(status: 422, message: "APNs would answer \(APNsReason.payloadTooLarge.statusAndReason): \(size.message)", pointer: nil, findings: [size])
        }
        var headers = APNsRequestHeaders()
        headers.pushType = .liveactivity
        headers.topic = app.topic(for: .liveactivity)
        headers.priority = content.priority == 10 ? .immediate : .conservePower
        headers.target = .device(try! DeviceToken(hex: String(repeating: "0", count: 64)))
        let report = linter.lint(bytes, context: LintContext(request: headers))
        if let first = report.firstError {
            let what = report.apnsRejection.map { "APNs would answer \($0.statusAndReason)" } ?? "the payload has a lint error (\(first.rule))"
            throw Refusal(status: 422, message: "\(what): \(first.message)", pointer: nil, findings: report.diagnostics)
        }
        return report.diagnostics
    }
}
