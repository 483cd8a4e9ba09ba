import Foundation
import HeraldDevice
import HeraldLint
import HeraldPayload
import HeraldProtocol

// Device and broadcast pushes (the provider API), stage by stage in the order of "What it
// answers": each stage returns what the next needs or throws the Rejection that answers.

extension MockCore {
    /// A device or broadcast push: stages 2 (headers) and 3 (authentication), then the push's own.
    func judge(_ outcome: inout Outcome, connection: inout ConnectionState, plan: inout Plan) {
        do throws(Rejection) {
            let (headers, target) = try readHeaders(&outcome)
            try authenticate(headers.providerToken, outcome: &outcome, connection: &connection, plan: &plan)
            switch target {
            case .device(let token):
                try pushToDevice(token, headers: headers, outcome: &outcome, connection: connection)
            case .broadcast(let bundleID):
                try broadcast(bundleID: bundleID, headers: headers, outcome: &outcome, connection: connection)
            }
        } catch {
            outcome.fail(error)
        }
    }

    /// Stage 2, the headers: each parses (``APNsRequestHeaders/init(parsing:)`` gives Apple's
    /// reason for the first that does not) and the path names a device or a broadcast.
    private func readHeaders(_ outcome: inout Outcome) throws(Rejection) -> (APNsRequestHeaders, APNsRequestHeaders.Target) {
        let headers: APNsRequestHeaders
        do throws(APNsHeaderError) {
            headers = try APNsRequestHeaders(parsing: outcome.fields)
        } catch {
            if error.reason == .badMessageID { outcome.apnsID = RandomIdentifier.uuid() }
            throw Rejection(error.reason, error.problem)
        }
        guard let target = headers.target else { throw Rejection(.badPath, "the request has no :path") }
        if case .broadcast = target {
            outcome.kind = .broadcast
            outcome.useRequestID()
        }
        return (headers, target)
    }

    /// A device push: topic (stage 4), payload (stage 5), device (stage 6).
    private func pushToDevice(_ token: DeviceToken, headers: consuming APNsRequestHeaders, outcome: inout Outcome, connection: ConnectionState) throws(Rejection) {
        // Changed in place (a defaulted topic), not copied: the headers hold a dozen strings.
        var headers = headers
        let (topic, wireFields) = try checkTopic(&headers, outcome: &outcome, connection: connection)
        let report = try checkPayload(outcome: &outcome, fields: wireFields, pushType: headers.pushType, endpoint: .device)
        try deliver(to: token, topic: topic, headers: headers, report: report, outcome: &outcome)
    }

    /// Stage 4, the topic: a single-topic certificate supplies a missing one; it must be there,
    /// and among the certificate's.
    private func checkTopic(
        _ headers: inout APNsRequestHeaders, outcome: inout Outcome, connection: ConnectionState
    ) throws(Rejection) -> (String, APNsHeaderFields) {
        var wireFields = outcome.fields
        let certificate = connection.authentication.certificate
        if headers.topic == nil, let topic = certificate?.defaultTopic {
            headers.topic = topic
            outcome.defaultedTopic = topic
            wireFields.append(name: APNsHeader.topic, value: topic)
        }
        guard let topic = headers.topic else {
            throw Rejection(.missingTopic, "no apns-topic: token-based connections must name the topic (the bundle ID plus the push type's suffix)")
        }
        if let certificate, !certificate.allows(topic: topic) {
            throw Rejection(.topicDisallowed, "the client certificate allows \(certificate.topicNames.joined(separator: ", ")), not \(topic)")
        }
        return (topic, wireFields)
    }

    /// Stage 5, the payload and headers by the linter's rules: a body over its push type's limit
    /// is refused from its size alone (413, with that one finding, as APNs does); otherwise the
    /// first rejection in `LintCatalog.rejectionPrecedence`, then the strict points. The
    /// findings are kept on the record either way.
    private func checkPayload(
        outcome: inout Outcome, fields: APNsHeaderFields, pushType: PushType?, endpoint: APNsEndpoint
    ) throws(Rejection) -> LintReport {
        if let size = Linter.sizeRefusal(byteCount: outcome.bodyByteCount, pushType: pushType, endpoint: endpoint) {
            outcome.findings = [NotificationRecord.Finding(size)]
            throw Rejection(.payloadTooLarge, size.message)
        }
        // The linter reads the headers as sent (an uppercase apns-id stays uppercase).
        let report = linter.lint(outcome.body, context: LintContext(fields: fields, endpoint: endpoint, isRequest: true))
        outcome.keepFindings(report.diagnostics, unlisted: report.unlistedCount)
        if let rejection = rejection(report) { throw rejection }
        return report
    }

    /// What a device's delivery carries as its payload: the device shows the rendering, and
    /// one empty payload shared by all costs a retain, not an `APS` built and freed each time.
    private static let shownPayload = Payload()

    /// The first rejection the linter's findings give, with the leniency settings applied.
    private func rejection(_ report: LintReport) -> Rejection? {
        let leniency = configuration.leniency
        let found = report.rulesFound
        func message(_ rule: RuleID) -> String {
            report.diagnostics.first { $0.rule == rule }?.message ?? rule.rawValue
        }
        for rule in LintCatalog.rejectionPrecedence where found.contains(rule) {
            if rule == .topicMismatch && leniency.acceptsTopicSuffixMismatch { continue }
            if let reason = LintCatalog.rule(rule).apnsReason { return Rejection(reason, message(rule)) }
        }
        if !leniency.acceptsUppercaseAPNsID, found.contains(.apnsIDNotLowercase) {
            return Rejection(.badMessageID, message(.apnsIDNotLowercase) + " (strict mode)")
        }
        if !leniency.acceptsBackgroundAtPriority10, found.contains(.backgroundPriority) {
            return Rejection(.badPriority, message(.backgroundPriority) + " (strict mode)")
        }
        return nil
    }

    /// Stage 6, the device: registered on its first push (unless that is off), of this
    /// environment, bound to this topic, not unregistered; then the push is delivered and
    /// rendered as the device shows it.
    private func deliver(
        to token: DeviceToken, topic: String, headers: APNsRequestHeaders, report: LintReport, outcome: inout Outcome
    ) throws(Rejection) {
        let entry: DeviceRegistry.Entry
        var bindingChanged = false
        if let existing = devices.entry(token) {
            entry = existing
        } else if configuration.registersDevicesOnFirstPush {
            let made = devices.entry(token, creatingWith: topic, environment: configuration.environment)
            entry = made.entry
            bindingChanged = made.created
            if let evicted = made.evicted { persistDevice(evicted) }
        } else {
            throw Rejection(.badDeviceToken, "no device has token \(token.hex) (devices are registered through the API; registration on first push is off)")
        }
        // Rendered from the linter's parse, leniently, as the device reads it. The record
        // renders its own copy, custom data included, when asked; the device needs only what
        // the user sees.
        // (Not in a closure: one copied the renderer, a retain of each of its references.)
        var rendered: RenderedNotification?
        if let document = report.document { rendered = try? renderer.render(document: document, headers: headers, includingUserInfo: false) }
        // The device shows `rendered`; the payload is not read again (decoding it twice cost
        // the mock 4% of its time).
        let payload: Payload? = rendered == nil ? nil : Self.shownPayload
        let environment = configuration.environment
        let now = outcome.now
        let apnsID = outcome.apnsID
        // A start that asks for an update token or names a channel (MockCore+Activities.swift).
        let start = Self.activityStart(pushType: headers.pushType, document: report.document)
        let startChannel: String? = if case .channel(let id)? = start, channels.channel(id: id) != nil { id } else { nil }
        // Updates a Live Activity's history lets go of, freed after the device's lock.
        var retired: [RenderedNotification.ActivityUpdate] = []
        let problem: Rejection? = entry.state.withLock { device in
            device.lastSeen = now
            if device.environment != environment {
                return Rejection(
                    .badDeviceToken,
                    "the token belongs to the \(device.environment) environment; this mock plays \(environment) (a sandbox token sent to production, or the reverse)")
            }
            if let bound = device.topic, bound != topic {
                return Rejection(.deviceTokenNotForTopic, "the token belongs to topic \(bound), not \(topic)")
            }
            if device.topic == nil { bindingChanged = true }
            device.topic = topic
            if let unregistered = device.unregisteredAt {
                return Rejection(
                    .unregistered, "the token was unregistered at \(NotificationRecord.iso8601(unregistered))", timestamp: unregistered.unixMilliseconds)
            }
            device.deliveries += 1
            if let payload {
                device.historyForgotten = false
                switch start {
                case .updateToken?: break  // the activity lives under its new update token
                case .channel?:
                    if let startChannel {
                        device.channels.insert(startChannel)
                        _ = device.device.receive(
                            SimulatedDevice.Delivery(id: apnsID, payload: payload, headers: headers, activityID: startChannel, rendered: rendered),
                            at: now.timeIntervalSince1970, retiring: &retired)
                    }
                case nil:
                    _ = device.device.receive(
                        SimulatedDevice.Delivery(id: apnsID, payload: payload, headers: headers, rendered: rendered), at: now.timeIntervalSince1970,
                        retiring: &retired)
                }
            }
            return nil
        }
        var explanation: String? = rendered == nil ? "accepted; the payload is not a JSON object, so the device shows nothing" : nil
        if problem == nil, let payload, let start {
            switch start {
            case .updateToken:
                let updateToken = startActivity(
                    SimulatedDevice.Delivery(id: apnsID, payload: payload, headers: headers, rendered: rendered), from: token, topic: topic, at: now)
                explanation = "accepted; the device started a Live Activity with update token \(updateToken.hex)"
            case .channel(let id):
                if startChannel != nil {
                    channels.subscribe(token, to: id)
                    bindingChanged = true
                    explanation = "accepted; the device started a Live Activity subscribed to channel \(id)"
                } else {
                    explanation = "accepted; channel \(id) does not exist, so the device starts nothing (the channel must exist before the start)"
                }
            }
        }
        // The device's row before the request's: the answer waits for the latter.
        if bindingChanged { persistDevice(token) }
        if let problem { throw problem }
        if payload != nil { devices.reached(token) }
        outcome.delivered = rendered != nil
        outcome.succeed(explanation: explanation)
    }

    /// A broadcast: the bundle ID and the certificate's topics, the channel and its push type,
    /// the expiration the channel's storage allows, the payload (stage 5); then each subscriber
    /// receives it.
    private func broadcast(bundleID: String, headers: APNsRequestHeaders, outcome: inout Outcome, connection: ConnectionState) throws(Rejection) {
        if let suffix = PushType.allCases.compactMap(\.topicSuffix).first(where: { !$0.isEmpty && bundleID.hasSuffix($0) }) {
            throw Rejection(.topicDisallowed, "the path names \(bundleID); send to the bare bundle ID, without the \(suffix) suffix")
        }
        if let certificate = connection.authentication.certificate, !certificate.allows(topic: bundleID) {
            throw Rejection(.topicMismatch, "the client certificate allows \(certificate.topicNames.joined(separator: ", ")), not \(bundleID)")
        }
        guard let channelID = headers.channelID else {
            throw Rejection(.missingChannelID, "no apns-channel-id header: a broadcast names its channel")
        }
        guard Data(base64Encoded: channelID) != nil else {
            throw Rejection(.badChannelID, "apns-channel-id \(channelID) is not base64")
        }
        guard let channel = channels.channel(bundleID: bundleID, id: channelID) else {
            throw Rejection(.channelNotRegistered, "no channel \(channelID) exists for \(bundleID)")
        }
        guard let pushType = headers.pushType else {
            throw Rejection(.missingPushType, "no apns-push-type: broadcasts are liveactivity pushes")
        }
        guard pushType == .liveactivity else {
            throw Rejection(.invalidPushType, "apns-push-type is \(pushType.rawValue); broadcasts accept only liveactivity")
        }
        if channel.storagePolicy == 0, let expiration = headers.expiration, expiration != .immediately {
            throw Rejection(.badExpirationDate, "channel \(channelID) stores no messages, so apns-expiration must be 0")
        }
        let report = try checkPayload(outcome: &outcome, fields: outcome.fields, pushType: pushType, endpoint: .broadcast)
        if let document = report.document, let rendered = try? renderer.render(document: document, headers: headers, includingUserInfo: false) {
            let payload = Payload()  // the device shows `rendered`
            outcome.delivered = true
            for token in channels.subscribers(of: channelID) {
                guard let entry = devices.entry(token) else { continue }
                entry.state.withLock { device in
                    device.lastSeen = outcome.now
                    device.deliveries += 1
                    device.historyForgotten = false
                    device.device.receive(
                        SimulatedDevice.Delivery(id: outcome.apnsID, payload: payload, headers: headers, activityID: channelID, rendered: rendered),
                        at: outcome.now.timeIntervalSince1970)
                }
                devices.reached(token)
            }
        }
        outcome.succeed(explanation: nil)
    }
}
