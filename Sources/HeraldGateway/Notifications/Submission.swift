import Crypto
import Foundation
import HeraldJSON
import HeraldLint
import HeraldProtocol

/// A notification request as the API takes it, checked at the door: the payload (linted with
/// the request's headers by the same rules `herald lint`, the mock and the client use), the
/// headers, and the tokens or the stored audience it goes to.
///
/// ```json
/// {"payload": {"aps": {"alert": "Hi"}}, "pushType": "alert", "priority": 10, "topic": "com.example.app",
///  "collapseId": "score", "expiration": 1790000000, "tokens": ["740f…"]}
/// ```
/// or, instead of `tokens`, `"audience": "all"` (every active device registered for the app) or
/// `"audience": {"tag": "beta"}`.
struct Submission: Sendable {
    enum Recipients: Sendable, Equatable {
        case tokens([DeviceToken])
        case audience(tag: String?)
    }

    /// The compact payload bytes sent.
    var payload: [UInt8]
    /// The headers (no target: each delivery adds its token).
    var headers: APNsRequestHeaders
    var recipients: Recipients
    /// What the linter found (warnings and notes; errors refuse the submission).
    var findings: [LintDiagnostic]
    /// SHA-256 of the request in its compact form: what an idempotency key is checked against.
    var requestHash: String
    /// The sender's own JSON object (its compact text), given back with the job, its
    /// deliveries and its webhook events.
    var metadata: String?

    /// The most bytes `metadata` may take, compact.
    static let maximumMetadataBytes = 1_024

    /// A request the API cannot take: its status, and what is wrong where.
    struct Refusal: Error, CustomStringConvertible {
        var status: Int
        var message: String
        var pointer: String?
        /// The reason APNs would answer with, when the linter refused the payload.
        var reason: APNsReason?
        var findings: [LintDiagnostic] = []

        var description: String { pointer.map { "\($0): \(message)" } ?? message }
    }

    static let linter = Linter()

    /// Parses and checks a request body for `app` at `now` (Unix milliseconds); at most
    /// `maximumTokens` tokens.
    init(body: [UInt8], app: GatewayApp, maximumTokens: Int, now: Int64) throws(Refusal) {
        let document: JSONDocument
        do {
            document = try JSONDocument(parsing: body)
        } catch {
            throw Refusal(status: 400, message: "the body is not JSON: \(error.message) at line \(error.location.line), column \(error.location.column)")
        }
        let root = document.root
        guard root.kind == .object else { throw Refusal(status: 400, message: "expected a JSON object", pointer: "") }
        for member in root.members where !Self.keys.contains(member.key) {
            let key = member.key
            throw Refusal(status: 400, message: "unknown field; the fields are \(Self.keys.sorted().joined(separator: ", "))", pointer: JSONPointer(tokens: [key]).description)
        }
        guard let payloadNode = root["payload"], payloadNode.kind == .object else {
            throw Refusal(status: 400, message: "required: the notification's payload, a JSON object such as {\"aps\":{\"alert\":\"Hello\"}}", pointer: "/payload")
        }
        var writer = JSONWriter(output: JSONBytes())
        writer.value(payloadNode.value)
        payload = writer.output.bytes

        func string(_ key: String) throws(Refusal) -> String? {
            guard let node = root[key] else { return nil }
            guard let text = node.stringValue else { throw Refusal(status: 400, message: "expected a string", pointer: "/\(key)") }
            return text
        }
        var headers = APNsRequestHeaders()
        let typeName = try string("pushType") ?? PushType.alert.rawValue
        guard let pushType = PushType(rawValue: typeName) else {
            throw Refusal(status: 400, message: "one of \(PushType.allCases.map(\.rawValue).joined(separator: ", "))", pointer: "/pushType")
        }
        headers.pushType = pushType
        // Over the limit is refused from the size alone, as APNs does, before any rule runs.
        if let size = Linter.sizeRefusal(byteCount: payload.count, pushType: pushType) {
            throw Refusal(
                status: 422, message: "APNs would answer \(APNsReason.payloadTooLarge.statusAndReason): \(size.message)",
                pointer: "/payload", reason: .payloadTooLarge, findings: [size])
        }
        if let node = root["priority"] {
            guard let number = node.wholeNumber, let priority = PushPriority(headerValue: String(number)) else {
                throw Refusal(status: 400, message: "apns-priority is \(PushPriority.validValues)", pointer: "/priority")
            }
            headers.priority = priority
        }
        guard let topic = try string("topic") ?? app.topic(for: pushType) else {
            throw Refusal(status: 422, message: "\(pushType.rawValue) pushes need an explicit topic", pointer: "/topic")
        }
        headers.topic = topic
        if let text = try string("collapseId") {
            // Over 64 bytes of UTF-8 is what APNs refuses (BadCollapseId): the JSON is fine.
            do throws(CollapseIDError) { headers.collapseID = try CollapseID(text) } catch {
                throw Refusal(status: 422, message: error.description, pointer: "/collapseId", reason: .badCollapseID)
            }
        }
        if let node = root["expiration"] {
            guard let seconds = node.wholeNumber, seconds >= 0, let expiration = try? Expiration(headerValue: String(seconds)) else {
                throw Refusal(status: 400, message: "a UNIX time in seconds, or 0 (try once, do not store)", pointer: "/expiration")
            }
            // Already past: APNs would store nothing and the gateway would send what nobody
            // wants any more. 0 ("try once, now") is the way to say that.
            if case .at(let at) = expiration, at.multipliedReportingOverflow(by: 1_000).partialValue < now, at < Int64.max / 1_000 {
                throw Refusal(
                    status: 422, message: "the expiration \(at) (Unix seconds) is already past (it is \(now / 1_000) now): give a later time, or 0 to try once now",
                    pointer: "/expiration")
            }
            headers.expiration = expiration
        }
        self.headers = headers
        if let node = root["metadata"] {
            guard node.kind == .object else { throw Refusal(status: 400, message: "expected a JSON object of your own ids (at most 1 KB)", pointer: "/metadata") }
            var writer = JSONWriter(output: JSONBytes())
            writer.value(node.value)
            guard writer.output.bytes.count <= Self.maximumMetadataBytes else {
                throw Refusal(status: 422, message: "\(writer.output.bytes.count) bytes; metadata is at most \(Self.maximumMetadataBytes) bytes (compact JSON)", pointer: "/metadata")
            }
            metadata = String(decoding: writer.output.bytes, as: UTF8.self)
        }

        switch (root["tokens"], root["audience"]) {
        case (let list?, nil):
            guard list.kind == .array else { throw Refusal(status: 400, message: "expected an array of hex device tokens", pointer: "/tokens") }
            var tokens: [DeviceToken] = []
            var seen = Set<DeviceToken>()
            for (index, element) in list.elements.enumerated() {
                guard let hex = element.stringValue else { throw Refusal(status: 400, message: "expected a hex string", pointer: "/tokens/\(index)") }
                do throws(DeviceTokenError) {
                    let token = try DeviceToken(hex: hex)
                    // A token given twice gets one notification.
                    if seen.insert(token).inserted { tokens.append(token) }
                } catch {
                    throw Refusal(status: 400, message: error.description, pointer: "/tokens/\(index)")
                }
            }
            guard !tokens.isEmpty else { throw Refusal(status: 400, message: "no device token", pointer: "/tokens") }
            guard tokens.count <= maximumTokens else {
                throw Refusal(status: 413, message: "\(tokens.count) tokens; at most \(maximumTokens) per request (send several requests)", pointer: "/tokens")
            }
            recipients = .tokens(tokens)
        case (nil, let audience?):
            if audience.stringValue == "all" {
                recipients = .audience(tag: nil)
            } else if let tag = audience["tag"]?.stringValue, !tag.isEmpty, !tag.contains(",") {
                recipients = .audience(tag: tag)
            } else {
                throw Refusal(status: 400, message: "\"all\" (every active device of the app) or {\"tag\": \"name\"}", pointer: "/audience")
            }
        case (nil, nil):
            throw Refusal(status: 400, message: "required: \"tokens\" (hex device tokens) or \"audience\"", pointer: "/tokens")
        case (_?, _?):
            throw Refusal(status: 400, message: "give \"tokens\" or \"audience\", not both", pointer: "/audience")
        }

        // The one rule set, and the one line `herald send` draws: a payload with a lint error
        // (what APNs rejects, and what the device would ignore or misread) is refused here,
        // with every finding; warnings come back with the acknowledgement.
        var context = headers
        context.target = .device(try! DeviceToken(hex: String(repeating: "0", count: 64)))
        let report = Self.linter.lint(payload, context: LintContext(request: context))
        findings = report.diagnostics
        if let first = report.firstError {
            let reason = report.apnsRejection
            let what = reason.map { "APNs would answer \($0.statusAndReason)" } ?? "the payload has a lint error (\(first.rule))"
            throw Refusal(
                status: 422, message: "\(what): \(first.message)", pointer: first.pointer.map { "/payload" + $0.description }, reason: reason,
                findings: report.diagnostics)
        }

        var canonical = JSONWriter(output: JSONBytes())
        canonical.value(root.value)
        requestHash = SHA256.hash(data: canonical.output.bytes).map { String(format: "%02x", $0) }.joined()
    }

    static let keys: Set<String> = ["payload", "pushType", "priority", "topic", "collapseId", "expiration", "tokens", "audience", "metadata"]

    /// When retrying stops, in Unix milliseconds: the notification's expiration (0: the first
    /// attempt only), else `window` after `now`. Saturating: an expiration of 2^63-1 seconds (the
    /// API's schema allows it) is "never", not an overflow.
    func retryDeadline(now: Int64, window: Duration) -> Int64 {
        switch headers.expiration {
        case .immediately?: return now
        case .at(let seconds)?:
            let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000)
            return overflow ? .max : milliseconds
        case nil:
            let (deadline, overflow) = now.addingReportingOverflow(window.milliseconds)
            return overflow ? .max : deadline
        }
    }

    /// The headers as the store keeps them: `{pushType, priority, topic, collapseId, expiration}`.
    var headersJSON: String {
        var object = JSONObject()
        func add(_ key: String, _ value: String?) { if let value { object.members.append(.init(key: key, value: .string(value))) } }
        add("pushType", headers.pushType?.rawValue)
        add("priority", headers.priority?.headerValue)
        add("topic", headers.topic)
        add("collapseId", headers.collapseID?.value)
        add("expiration", headers.expiration?.headerValue)
        var writer = JSONWriter(output: JSONBytes())
        writer.value(.object(object))
        return String(decoding: writer.output.bytes, as: UTF8.self)
    }

    /// Headers read back from ``headersJSON``.
    static func headers(fromJSON text: String) -> APNsRequestHeaders {
        var headers = APNsRequestHeaders()
        guard let document = try? JSONDocument(parsing: Array(text.utf8)) else { return headers }
        let root = document.root
        headers.pushType = root["pushType"]?.stringValue.flatMap(PushType.init(rawValue:))
        headers.priority = root["priority"]?.stringValue.flatMap(PushPriority.init(headerValue:))
        headers.topic = root["topic"]?.stringValue
        headers.collapseID = root["collapseId"]?.stringValue.flatMap { try? CollapseID($0) }
        headers.expiration = root["expiration"]?.stringValue.flatMap { try? Expiration(headerValue: $0) }
        return headers
    }
}
