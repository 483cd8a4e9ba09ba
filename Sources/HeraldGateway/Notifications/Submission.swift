import Crypto
import Foundation
import HeraldHTTPAPI
import HeraldJSON
import HeraldLint
import HeraldLocalization
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
        /// The active devices of these users (their ids, distinct, in order).
        case users([String])
    }

    /// The most users one submission may name.
    static let maximumUsers = 10_000
    /// The longest a user id may be, in bytes.
    static let maximumUserBytes = 256

    /// The payload in each language given in `localized` (its alert replaces `aps.alert`).
    var variants: [(language: String, payload: [UInt8])] = []
    /// When it is due.
    var schedule: Schedule = .now

    /// The compact payload bytes sent.
    var payload: [UInt8]
    /// The headers (no target: each delivery adds its token).
    var headers: APNsRequestHeaders
    var recipients: Recipients
    /// What the linter found (warnings and notes; errors refuse the submission).
    var findings: [LintDiagnostic]
    /// What it found in each variant's alert, with the variant's pointer (`/localized/fr`).
    var localizedFindings: [(LintDiagnostic, String)] = []
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
        /// The variant the findings are of (`/localized/fr`): they point into it.
        var variant: String? = nil

        var description: String { pointer.map { "\($0): \(message)" } ?? message }

        /// What an error answer carries beside the message and pointer: APNs' reason, and the
        /// findings (a variant's point into `localized`, the payload's into it).
        var details: [(String, JSONValue)] {
            var extra: [(String, JSONValue)] = []
            if let reason { extra.append(("reason", .string(reason.rawValue))) }
            if !findings.isEmpty {
                let values = findings.map { finding in
                    variant.map { GatewayAPI.findingValue(finding, under: $0, replacing: "/aps/alert") } ?? GatewayAPI.findingValue(finding)
                }
                extra.append(("findings", .array(values)))
            }
            return extra
        }
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
            } else if let tag = audience["tag"]?.stringValue, !tag.isEmpty, !tag.contains(","), audience.count == 1 {
                recipients = .audience(tag: tag)
            } else if let list = audience["users"], audience.count == 1 {
                guard list.kind == .array, (1...Self.maximumUsers).contains(list.count) else {
                    throw Refusal(status: 400, message: "an array of 1 to \(Self.maximumUsers) user ids", pointer: "/audience/users")
                }
                var users: [String] = []
                var seen = Set<String>()
                for (index, element) in list.elements.enumerated() {
                    guard let user = element.stringValue, !user.isEmpty, user.count <= Self.maximumUserBytes else {
                        throw Refusal(status: 400, message: "a user id: a string of 1 to \(Self.maximumUserBytes) bytes", pointer: "/audience/users/\(index)")
                    }
                    guard user.utf8.count <= Self.maximumUserBytes else {
                        throw Refusal(status: 422, message: "\(user.utf8.count) bytes; a user id is at most \(Self.maximumUserBytes) bytes of UTF-8", pointer: "/audience/users/\(index)")
                    }
                    if seen.insert(user).inserted { users.append(user) }
                }
                recipients = .users(users)
            } else {
                throw Refusal(
                    status: 400, message: "\"all\" (every active device of the app), {\"tag\": \"name\"} or {\"users\": [your user ids]}", pointer: "/audience")
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
        var localizedFindings: [(LintDiagnostic, String)] = []
        if let first = report.firstError {
            let reason = report.apnsRejection
            let what = reason.map { "APNs would answer \($0.statusAndReason)" } ?? "the payload has a lint error (\(first.rule))"
            throw Refusal(
                status: 422, message: "\(what): \(first.message)", pointer: first.pointer.map { "/payload" + $0.description }, reason: reason,
                findings: report.diagnostics)
        }

        // Each language's variant: the same payload with that alert, checked at the door as the
        // payload is (a finding names the variant's pointer, /localized/fr/body).
        if let localized = root["localized"] {
            guard localized.kind == .object, localized.count > 0 else {
                throw Refusal(status: 400, message: "an object of languages (BCP 47, such as fr or pt-BR), each an alert: a string or an object", pointer: "/localized")
            }
            guard case .object(var aps)? = payloadNode.value["aps"] else {
                throw Refusal(status: 422, message: "the variants replace aps.alert: the payload needs an aps dictionary", pointer: "/payload")
            }
            var languages = Set<String>()
            for member in localized.members {
                let pointer = JSONPointer(tokens: ["localized", member.key]).description
                guard Self.isLanguageTag(member.key), languages.insert(LanguageTag(member.key).description).inserted else {
                    throw Refusal(status: 400, message: "a language tag given once (BCP 47: fr, pt-BR, zh-Hant)", pointer: pointer)
                }
                guard member.value.kind == .string || member.value.kind == .object else {
                    throw Refusal(status: 400, message: "an alert: a string, or an object such as {\"title\": \"…\", \"body\": \"…\"}", pointer: pointer)
                }
                aps.members.removeAll { $0.key == "alert" }
                aps.members.insert(.init(key: "alert", value: member.value.value), at: 0)
                var variant = payloadNode.value.objectValue ?? JSONObject()
                if let index = variant.members.firstIndex(where: { $0.key == "aps" }) { variant.members[index].value = .object(aps) }
                var writer = JSONWriter(output: JSONBytes())
                writer.value(.object(variant))
                let bytes = writer.output.bytes
                if let size = Linter.sizeRefusal(byteCount: bytes.count, pushType: pushType) {
                    throw Refusal(
                        status: 422, message: "APNs would answer \(APNsReason.payloadTooLarge.statusAndReason) for the \(member.key) variant: \(size.message)",
                        pointer: pointer, reason: .payloadTooLarge, findings: [size])
                }
                let variantReport = Self.linter.lint(bytes, context: LintContext(request: context))
                // Its alert's findings, pointed into `localized` (the rest are the payload's own).
                let own = variantReport.diagnostics.compactMap { finding -> LintDiagnostic? in
                    guard let at = finding.pointer?.description, at == "/aps/alert" || at.hasPrefix("/aps/alert/") else { return nil }
                    return finding
                }
                if let first = own.first(where: { $0.severity == .error }) {
                    let reason = variantReport.apnsRejection
                    let what = reason.map { "APNs would answer \($0.statusAndReason)" } ?? "the \(member.key) variant has a lint error (\(first.rule))"
                    throw Refusal(
                        status: 422, message: "\(what): \(first.message)", pointer: pointer + String(first.pointer!.description.dropFirst("/aps/alert".count)),
                        reason: reason, findings: own, variant: pointer)
                }
                localizedFindings += own.map { ($0, pointer) }
                variants.append((member.key, bytes))
            }
        }

        if let node = root["sendAt"] {
            if let text = node.stringValue {
                guard let instant = APITime.parse(text) else {
                    throw Refusal(status: 400, message: "an RFC 3339 time such as 2026-12-01T09:00:00Z, or {\"localTime\": \"2026-12-01T09:00\"}", pointer: "/sendAt")
                }
                schedule = .at(instant)
            } else if let text = node["localTime"]?.stringValue, node.count == 1 {
                guard let time = LocalTime(parsing: text) else {
                    throw Refusal(status: 400, message: "a wall-clock time without a zone: 2026-12-01T09:00 (or with seconds)", pointer: "/sendAt/localTime")
                }
                schedule = .local(time)
            } else {
                throw Refusal(status: 400, message: "an RFC 3339 time such as 2026-12-01T09:00:00Z, or {\"localTime\": \"2026-12-01T09:00\"}", pointer: "/sendAt")
            }
            let year: Int64 = 366 * 86_400_000
            if let latest = schedule.latest, latest > now + year {
                // 422: well-formed, but not a time this gateway will wait for (JSON Schema cannot
                // say "within a year").
                throw Refusal(status: 422, message: "more than a year ahead", pointer: "/sendAt")
            }
            if case .at(let seconds)? = headers.expiration, let earliest = schedule.earliest, earliest >= seconds * 1_000 {
                throw Refusal(status: 422, message: "after the notification's expiration (\(seconds)): it would never be sent", pointer: "/sendAt")
            }
        }
        self.localizedFindings = localizedFindings

        var canonical = JSONWriter(output: JSONBytes())
        canonical.value(root.value)
        requestHash = SHA256.hash(data: canonical.output.bytes).map { String(format: "%02x", $0) }.joined()
    }

    static let keys: Set<String> = [
        "payload", "pushType", "priority", "topic", "collapseId", "expiration", "tokens", "audience", "metadata", "localized", "sendAt",
    ]

    /// When retrying stops, in Unix milliseconds: the notification's expiration (0: the first
    /// attempt only), else `window` after `now`. Saturating: an expiration of 2^63-1 seconds (the
    /// API's schema allows it) is "never", not an overflow.
    func retryDeadline(now: Int64, window: Duration) -> Int64 {
        // A schedule's window starts when its last device is due.
        let start = max(now, schedule.latest ?? now)
        switch headers.expiration {
        case .immediately?: return start
        case .at(let seconds)?:
            let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000)
            return overflow ? .max : milliseconds
        case nil:
            let (deadline, overflow) = start.addingReportingOverflow(window.milliseconds)
            return overflow ? .max : deadline
        }
    }

    /// Whether `text` reads as a BCP 47 language tag: a language of 2 to 8 letters, then subtags
    /// of 1 to 8 letters or digits (`-` or `_` between them).
    static func isLanguageTag(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).flatMap { $0.split(separator: "_", omittingEmptySubsequences: false) }
        guard let first = parts.first, (2...8).contains(first.count), first.allSatisfy({ $0.isASCII && $0.isLetter }) else { return false }
        return parts.dropFirst().allSatisfy { (1...8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }
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
