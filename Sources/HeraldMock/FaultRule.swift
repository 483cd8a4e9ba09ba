import Foundation
import HeraldProtocol

/// A fault to inject: which requests it matches and what the mock does to them instead of (or
/// before) answering as APNs would.
///
/// Written as comma-separated items, in flags (`herald mock --fault RULE`), the config file and
/// the API:
///
/// | Item | Meaning |
/// |---|---|
/// | `status=CODE[/REASON]` | answer with this status and reason (the reason defaults from the status: 429 `TooManyRequests`, 500 `InternalServerError`, 503 `ServiceUnavailable`, 410 `Unregistered`, …) |
/// | `delay=DURATION` | wait (`250ms`, `2s`, at most a day) before answering; alone or with another action |
/// | `goaway=REASON[/before]` | send `GOAWAY` with `{"reason":…}` after answering, or `before` answering (the request is then not processed: last-stream-id excludes it) |
/// | `reset[=CODE]` | reset the stream (`RST_STREAM`, default `internal-error`; also `refused-stream`, `cancel`, `enhance-your-calm`, or a number) |
/// | `close` | close the connection without answering |
/// | `max-streams=N` | lower `SETTINGS_MAX_CONCURRENT_STREAMS` to N (0 to 2147483647), then answer as usual |
/// | `hang` | never answer (the client's deadline must fire) |
/// | `token=HEX` `topic=TOPIC` `push-type=TYPE` `path=device\|broadcast\|channels` | match only these requests |
/// | `every=N` | match every Nth matching request (the Nth, 2Nth, …) |
/// | `probability=P` | match with probability P (0 to 1) |
/// | `times=N` | stop after matching N times |
///
/// ```
/// status=429/TooManyRequests,token=740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad,times=2
/// status=503/ServiceUnavailable,every=10
/// goaway=Shutdown,times=1
/// delay=2s,probability=0.1
/// ```
public struct FaultRule: Sendable, Hashable, CustomStringConvertible {
    /// What happens to a matching request.
    public enum Action: Sendable, Hashable {
        /// Answer with this status and reason.
        case respond(status: Int, reason: APNsReason)
        /// Send `GOAWAY` carrying `{"reason":…}`: after answering, or before (unprocessed).
        case goAway(reason: APNsReason, beforeAnswering: Bool)
        /// Reset the stream with this HTTP/2 error code.
        case resetStream(code: UInt32)
        /// Close the connection.
        case closeConnection
        /// Lower `SETTINGS_MAX_CONCURRENT_STREAMS`, then answer as usual.
        case lowerMaximumStreams(Int)
        /// Never answer.
        case noAnswer
    }

    /// The action; `nil` when the rule only delays.
    public var action: Action?
    /// A delay before acting or answering.
    public var delay: Duration?
    /// Only requests to this device token.
    public var token: DeviceToken?
    /// Only requests with this `apns-topic` (or broadcast bundle ID).
    public var topic: String?
    /// Only requests with this push type.
    public var pushType: PushType?
    /// Only requests to this kind of path.
    public var path: PathKind?
    /// Every Nth matching request.
    public var every: Int?
    /// Matching with this probability.
    public var probability: Double?
    /// At most this many matches.
    public var times: Int?

    /// Kinds of request path.
    public enum PathKind: String, Sendable, Hashable, CaseIterable {
        /// `/3/device/…`.
        case device
        /// `/4/broadcasts/apps/…`.
        case broadcast
        /// Channel management (`/1/apps/…`).
        case channels
    }

    /// A rule from its parts.
    public init(
        action: Action? = nil, delay: Duration? = nil, token: DeviceToken? = nil, topic: String? = nil, pushType: PushType? = nil,
        path: PathKind? = nil, every: Int? = nil, probability: Double? = nil, times: Int? = nil
    ) {
        self.action = action
        self.delay = delay
        self.token = token
        self.topic = topic
        self.pushType = pushType
        self.path = path
        self.every = every
        self.probability = probability
        self.times = times
    }

    /// Parses the written form (see the type's documentation).
    public init(parsing text: String) throws(FaultRuleError) {
        self.init()
        let items = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !items.isEmpty else { throw FaultRuleError(text: text, problem: "the rule is empty; give an action such as status=503 or goaway=Shutdown") }
        for item in items {
            let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
            let name = parts[0].lowercased()
            let value = parts.count > 1 ? parts[1] : nil
            func need() throws(FaultRuleError) -> String {
                guard let value, !value.isEmpty else { throw FaultRuleError(text: text, problem: "\(name) needs a value: \(name)=…") }
                return value
            }
            func setAction(_ new: Action) throws(FaultRuleError) {
                if action != nil { throw FaultRuleError(text: text, problem: "a rule has one action; \(item) is a second") }
                action = new
            }
            switch name {
            case "status":
                let spec = try need().split(separator: "/", maxSplits: 1).map(String.init)
                guard let status = Int(spec[0]), (200...599).contains(status) else {
                    throw FaultRuleError(text: text, problem: "status \(spec[0]) is not an HTTP status between 200 and 599")
                }
                let reason = spec.count > 1 ? APNsReason(rawValue: spec[1]) : Self.defaultReason(status: status)
                try setAction(.respond(status: status, reason: reason))
            case "delay":
                guard let duration = Self.duration(try need()) else {
                    throw FaultRuleError(text: text, problem: "delay \(value ?? "") is not a duration such as 250ms or 2s, of at most a day (hang never answers)")
                }
                delay = duration
            case "goaway":
                let spec = try need().split(separator: "/", maxSplits: 1).map(String.init)
                var before = false
                if spec.count > 1 {
                    switch spec[1].lowercased() {
                    case "before": before = true
                    case "after": before = false
                    default: throw FaultRuleError(text: text, problem: "goaway takes /before or /after, not /\(spec[1])")
                    }
                }
                try setAction(.goAway(reason: APNsReason(rawValue: spec[0]), beforeAnswering: before))
            case "reset":
                let code = try value.map { (text: String) throws(FaultRuleError) -> UInt32 in
                    if let number = UInt32(text) { return number }
                    guard let known = Self.errorCodes.first(where: { $0.name == text.lowercased() }) else {
                        throw FaultRuleError(text: text, problem: "reset code \(text) is not one of \(Self.errorCodes.map(\.name).joined(separator: ", ")) or a number")
                    }
                    return known.code
                } ?? 2
                try setAction(.resetStream(code: code))
            case "close":
                try setAction(.closeConnection)
            case "hang":
                try setAction(.noAnswer)
            case "max-streams":
                // SETTINGS_MAX_CONCURRENT_STREAMS is a 32-bit field; more than 2^31-1 streams cannot be opened.
                guard let count = Int(try need()), (0...Int(Int32.max)).contains(count) else {
                    throw FaultRuleError(text: text, problem: "max-streams needs a whole number from 0 to 2147483647, such as max-streams=1")
                }
                try setAction(.lowerMaximumStreams(count))
            case "token":
                let hex = try need()
                do throws(DeviceTokenError) { token = try DeviceToken(hex: hex) } catch {
                    throw FaultRuleError(text: text, problem: "token: \(error)")
                }
            case "topic":
                topic = try need()
            case "push-type":
                let raw = try need()
                guard let type = PushType(rawValue: raw) else {
                    throw FaultRuleError(text: text, problem: "push-type \(raw) is not one of \(PushType.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                pushType = type
            case "path":
                let raw = try need()
                guard let kind = PathKind(rawValue: raw) else {
                    throw FaultRuleError(text: text, problem: "path \(raw) is not device, broadcast or channels")
                }
                path = kind
            case "every":
                guard let count = Int(try need()), count >= 1 else { throw FaultRuleError(text: text, problem: "every needs a whole number of at least 1") }
                every = count
            case "probability":
                guard let chance = Double(try need()), (0...1).contains(chance) else { throw FaultRuleError(text: text, problem: "probability needs a number from 0 to 1") }
                probability = chance
            case "times":
                guard let count = Int(try need()), count >= 1 else { throw FaultRuleError(text: text, problem: "times needs a whole number of at least 1") }
                times = count
            default:
                throw FaultRuleError(text: text, problem: "unknown item \"\(name)\"; actions are status, delay, goaway, reset, close, max-streams, hang; matchers are token, topic, push-type, path, every, probability, times")
            }
        }
        if action == nil && delay == nil {
            throw FaultRuleError(text: text, problem: "the rule has no action; add status=…, delay=…, goaway=…, reset, close, max-streams=… or hang")
        }
    }

    /// The reason APNs gives with a status when a rule names none.
    static func defaultReason(status: Int) -> APNsReason {
        switch status {
        case 400: .badTopic
        case 403: .forbidden
        case 404: .badPath
        case 405: .methodNotAllowed
        case 410: .unregistered
        case 413: .payloadTooLarge
        case 429: .tooManyRequests
        case 503: .serviceUnavailable
        default: .internalServerError
        }
    }

    static let errorCodes: [(name: String, code: UInt32)] = [
        ("no-error", 0), ("protocol-error", 1), ("internal-error", 2), ("flow-control-error", 3), ("stream-closed", 5),
        ("refused-stream", 7), ("cancel", 8), ("enhance-your-calm", 11),
    ]

    static func duration(_ text: String) -> Duration? {
        let lower = text.lowercased()
        let milliseconds: Double
        if lower.hasSuffix("ms"), let value = Double(lower.dropLast(2)) {
            milliseconds = value
        } else if lower.hasSuffix("s"), let value = Double(lower.dropLast()) {
            milliseconds = value * 1000
        } else if let value = Double(lower) {
            milliseconds = value * 1000
        } else {
            return nil
        }
        // A day at most (`hang` never answers); `inf` and `nan` parse as numbers but are not delays.
        guard milliseconds.isFinite, (0...Self.longestDelayMilliseconds).contains(milliseconds) else { return nil }
        return .milliseconds(Int64(milliseconds))
    }

    /// The longest `delay`: a day.
    static let longestDelayMilliseconds: Double = 86_400_000

    /// Whether the rule's filters accept a request (before `every`, `probability` and `times`,
    /// which need the rule's running count).
    func filters(token: DeviceToken?, topic: String?, pushType: PushType?, path: PathKind) -> Bool {
        if let expected = self.path, expected != path { return false }
        if let expected = self.token, expected != token { return false }
        if let expected = self.topic, expected != topic { return false }
        if let expected = self.pushType, expected != pushType { return false }
        return true
    }

    /// The written form, items in a fixed order.
    public var description: String {
        var items: [String] = []
        switch action {
        case .respond(let status, let reason)?: items.append("status=\(status)/\(reason)")
        case .goAway(let reason, let before)?: items.append("goaway=\(reason)" + (before ? "/before" : ""))
        case .resetStream(let code)?:
            items.append("reset=" + (Self.errorCodes.first { $0.code == code }?.name ?? String(code)))
        case .closeConnection?: items.append("close")
        case .lowerMaximumStreams(let count)?: items.append("max-streams=\(count)")
        case .noAnswer?: items.append("hang")
        case nil: break
        }
        if let delay {
            let ms = delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000
            items.append("delay=\(ms)ms")
        }
        if let token { items.append("token=\(token.hex)") }
        if let topic { items.append("topic=\(topic)") }
        if let pushType { items.append("push-type=\(pushType.rawValue)") }
        if let path { items.append("path=\(path.rawValue)") }
        if let every { items.append("every=\(every)") }
        if let probability { items.append("probability=\(probability)") }
        if let times { items.append("times=\(times)") }
        return items.joined(separator: ",")
    }
}

/// A fault rule that does not parse: the rule and what is wrong.
public struct FaultRuleError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The rule as written.
    public var text: String
    /// What is wrong.
    public var problem: String

    /// `fault rule "…": problem`.
    public var description: String { "fault rule \"\(text)\": \(problem)" }
}
