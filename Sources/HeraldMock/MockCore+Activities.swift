import Foundation
import HeraldDevice
import HeraldHTTPAPI
import HeraldJSON
import HeraldPayload
import HeraldProtocol

/// Live Activities on the simulated devices (stage 6 for a start that asks for an update token
/// or names a channel), and what the API shows of them.
///
/// A start with `input-push-token: 1` sent to a push-to-start token makes a new activity under
/// a fresh update token (a device entry of its own, bound to the same topic): pushes to that
/// token update it, and ``MockConfiguration/activityTokenReport`` posts the token as the app
/// would report it to its backend. A start with `input-push-channel` subscribes the
/// push-to-start token's device to the channel; the channel's broadcasts update it.
extension MockCore {
    /// How a start asks for its activity to be addressed.
    enum ActivityStart: Sendable, Equatable {
        /// An update token, made now (`input-push-token: 1`).
        case updateToken
        /// A broadcast channel (`input-push-channel`).
        case channel(String)
    }

    /// What a Live Activity push's payload asks of its start, if it is one.
    static func activityStart(pushType: PushType?, document: JSONDocument?) -> ActivityStart? {
        guard pushType == .liveactivity, let aps = document?.root["aps"], aps["event"]?.stringValue == LiveActivityEvent.start.rawValue else { return nil }
        if let channel = aps["input-push-channel"]?.stringValue, !channel.isEmpty { return .channel(channel) }
        if aps["input-push-token"]?.int64Value == 1 { return .updateToken }
        return nil
    }

    /// A start that made an activity under a new update token: the token's device is made and
    /// shows the start, the start token's device lists it, and the token is reported.
    func startActivity(_ delivery: SimulatedDevice.Delivery, from startToken: DeviceToken, topic: String, at now: Date) -> DeviceToken {
        var random = SystemRandomNumberGenerator()
        let updateToken = try! DeviceToken(bytes: (0..<32).map { _ in UInt8.random(in: 0...255, using: &random) })
        let made = devices.entry(updateToken, creatingWith: topic, environment: configuration.environment)
        if let evicted = made.evicted { persistDevice(evicted) }
        made.entry.state.withLock { device in
            device.startToken = startToken
            device.lastSeen = now
            device.deliveries += 1
            device.device.receive(delivery, at: now.timeIntervalSince1970)
        }
        devices.entry(startToken)?.state.withLock { device in
            device.activityTokens.append(updateToken)
            if device.activityTokens.count > 100 { device.activityTokens.removeFirst(device.activityTokens.count - 100) }
        }
        devices.reached(updateToken)
        persistDevice(updateToken)
        if let report = activityTokenReport.withLock({ $0 }), let update = delivery.rendered?.activity {
            reportActivityToken(updateToken, startToken: startToken, topic: topic, update: update, to: report)
        }
        return updateToken
    }

    /// Posts the new token in the background, as the app would (a few tries, a second apart at
    /// most); the update token's device says how it went (`tokenReport`).
    private func reportActivityToken(
        _ token: DeviceToken, startToken: DeviceToken, topic: String, update: RenderedNotification.ActivityUpdate, to report: ActivityTokenReport
    ) {
        let body: JSONValue = [
            "token": .string(token.hex), "startToken": .string(startToken.hex), "topic": .string(topic),
            "attributesType": update.attributesType.map { .string($0) } ?? .null,
            "attributes": update.attributes.map { .object($0) } ?? .null,
        ]
        var writer = JSONWriter(output: JSONBytes())
        writer.value(body)
        let bytes = writer.output.bytes
        Task { [devices] in
            var result = "not tried"
            for attempt in 0..<5 {
                if attempt > 0 { try? await Task.sleep(for: .milliseconds(200 << min(attempt, 3))) }
                do {
                    let status = try await JSONPoster(userAgent: "herald-mock").post(report.url, body: bytes, headers: report.headers, timeout: .seconds(5)).status
                    result = String(status)
                    if (200..<300).contains(status) || (400..<500).contains(status) && status != 409 && status != 429 { break }
                } catch {
                    result = "failed: \(error)"
                }
            }
            devices.entry(token)?.state.withLock { $0.tokenReport = result }
        }
    }

    /// The Live Activities `token` shows: an update token's own, or a push-to-start token's
    /// (those its starts made under update tokens, and those subscribed to channels), dismissed
    /// ones left out. `nil` when no device has the token.
    func activities(of token: DeviceToken, at now: Date) -> [JSONValue]? {
        guard let entry = devices.entry(token) else { return nil }
        let time = now.timeIntervalSince1970
        let (own, issued, startToken) = entry.state.withLock { device in
            (Array(device.device.activities.values), device.activityTokens, device.startToken)
        }
        var list: [JSONValue] = []
        func add(_ activity: SimulatedDevice.Activity, updateToken: DeviceToken?, startToken: DeviceToken?) {
            guard !activity.isDismissed(at: time) else { return }
            list.append(Self.activityValue(activity, updateToken: updateToken, startToken: startToken))
        }
        for activity in own.sorted(by: { $0.id < $1.id }) {
            // An update token's activity is its "default"; a start token's own are channels'.
            let channel = activity.id != "default"
            add(activity, updateToken: startToken != nil && !channel ? token : nil, startToken: startToken ?? (channel ? token : nil))
        }
        for updateToken in issued {
            guard let activity = devices.entry(updateToken)?.state.withLock({ $0.device.activities["default"] }) else { continue }
            add(activity, updateToken: updateToken, startToken: token)
        }
        return list
    }

    /// `{updateToken, startToken, channel, attributesType, attributes, contentState, timestamp,
    /// staleDate, dismissalDate, updates, ended, history}`.
    static func activityValue(_ activity: SimulatedDevice.Activity, updateToken: DeviceToken?, startToken: DeviceToken?) -> JSONValue {
        func number(_ value: Double?) -> JSONValue { value.flatMap { JSONNumber($0) }.map { .number($0) } ?? .null }
        func content(_ update: RenderedNotification.ActivityUpdate) -> JSONValue {
            [
                "event": update.event.map { .string($0) } ?? .null, "timestamp": number(update.timestamp),
                "contentState": update.contentState.map { .object($0) } ?? .null,
            ]
        }
        return [
            "updateToken": updateToken.map { .string($0.hex) } ?? .null, "startToken": startToken.map { .string($0.hex) } ?? .null,
            "channel": activity.id == "default" ? .null : .string(activity.id),
            "attributesType": activity.attributesType.map { .string($0) } ?? .null,
            "attributes": activity.attributes.map { .object($0) } ?? .null,
            "contentState": activity.latest.contentState.map { .object($0) } ?? .null,
            "timestamp": number(activity.latest.timestamp), "staleDate": number(activity.latest.staleDate),
            "dismissalDate": number(activity.latest.dismissalDate),
            "updates": .number(JSONNumber(activity.updates)), "ended": .bool(activity.ended),
            "history": .array(activity.history.map(content)),
        ]
    }
}
