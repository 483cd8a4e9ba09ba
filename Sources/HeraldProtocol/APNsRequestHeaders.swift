/// The typed headers of one APNs request: where it goes (the `:path`), and `apns-push-type`,
/// `apns-priority`, `apns-topic`, `apns-collapse-id`, `apns-expiration`, `apns-id`,
/// `apns-channel-id` and `authorization`.
///
/// The one model of a request's headers: the client writes it to HTTP/2 headers with
/// ``fields``, the mock server parses what it receives with ``init(parsing:)``, and the linter
/// and the device simulation read it. Every header is optional, as on the wire; an absent
/// `apns-priority` means 10 (``effectivePriority``).
///
/// ```swift
/// let headers = APNsRequestHeaders(
///     target: .device(try DeviceToken(hex: token)), pushType: .alert, topic: "com.example.app")
/// for field in headers.fields { print(field.name, field.value) }
/// // :method POST, :path /3/device/…, apns-push-type alert, apns-topic com.example.app
/// ```
public struct APNsRequestHeaders: Sendable, Hashable {
    /// What a request's `:path` addresses.
    public enum Target: Sendable, Hashable {
        /// `/3/device/<token>`: a device, or a Live Activity's push token.
        case device(DeviceToken)
        /// `/4/broadcasts/apps/<bundle-id>`: the subscribers of a broadcast channel.
        case broadcast(bundleID: String)
    }

    /// The `:path` target.
    public var target: Target?
    /// `apns-push-type`.
    public var pushType: PushType?
    /// `apns-priority`; `nil` means the header is absent (APNs then uses 10).
    public var priority: PushPriority?
    /// `apns-topic`.
    public var topic: String?
    /// `apns-collapse-id`.
    public var collapseID: CollapseID?
    /// `apns-expiration`.
    public var expiration: Expiration?
    /// `apns-id`.
    public var apnsID: APNsID?
    /// `apns-channel-id`: the broadcast channel (base64).
    public var channelID: String?
    /// The provider token (a JWT) of `authorization: bearer <token>`.
    public var providerToken: String?

    /// Creates headers; every one is optional.
    public init(
        target: Target? = nil, pushType: PushType? = nil, priority: PushPriority? = nil, topic: String? = nil,
        collapseID: CollapseID? = nil, expiration: Expiration? = nil, apnsID: APNsID? = nil, channelID: String? = nil,
        providerToken: String? = nil
    ) {
        self.target = target
        self.pushType = pushType
        self.priority = priority
        self.topic = topic
        self.collapseID = collapseID
        self.expiration = expiration
        self.apnsID = apnsID
        self.channelID = channelID
        self.providerToken = providerToken
    }

    /// The device token of a device request.
    public var deviceToken: DeviceToken? {
        if case .device(let token) = target { return token }
        return nil
    }

    /// A device push or a broadcast (a device push when the target is unknown).
    public var endpoint: APNsEndpoint {
        if case .broadcast = target { return .broadcast }
        return .device
    }

    /// The priority APNs applies: the header's, or 10 when it is absent.
    public var effectivePriority: PushPriority { priority ?? .default }

    /// The wire form: `:method` and `:path` (when there is a target), then each header present.
    public var fields: APNsHeaderFields {
        var fields = APNsHeaderFields()
        switch target {
        case .device(let token)?:
            fields.append(name: ":method", value: "POST")
            fields.append(name: ":path", value: APNsPath.device(token))
        case .broadcast(let bundleID)?:
            fields.append(name: ":method", value: "POST")
            fields.append(name: ":path", value: APNsPath.broadcast(bundleID: bundleID))
        case nil:
            break
        }
        if let providerToken { fields.append(name: APNsHeader.authorization, value: APNsHeader.bearerPrefix + providerToken) }
        if let pushType { fields.append(name: APNsHeader.pushType, value: pushType.rawValue) }
        if let apnsID { fields.append(name: APNsHeader.id, value: apnsID.uuidString) }
        if let expiration { fields.append(name: APNsHeader.expiration, value: expiration.headerValue) }
        if let priority { fields.append(name: APNsHeader.priority, value: priority.headerValue) }
        if let topic { fields.append(name: APNsHeader.topic, value: topic) }
        if let collapseID { fields.append(name: APNsHeader.collapseID, value: collapseID.value) }
        if let channelID { fields.append(name: APNsHeader.channelID, value: channelID) }
        return fields
    }

    /// Parses a request's fields. Pseudo-headers are optional (a header set without `:path` has
    /// no ``target``); headers this model does not know are ignored.
    ///
    /// Checks run in ``APNsHeaderError/precedence`` order and the first problem is thrown, with
    /// the header it concerns and the reason APNs answers with.
    public init(parsing fields: APNsHeaderFields) throws(APNsHeaderError) {
        self.init()
        if let repeated = fields.repeatedNames.first {
            throw APNsHeaderError(header: repeated, value: fields[repeated], reason: .duplicateHeaders, problem: "\(repeated) is given more than once")
        }
        if let problem = read(fields) { throw problem }
    }

    /// Every header that parses, and none of those that do not: what a record shows of a
    /// request APNs refused (a bad device token leaves the push type and priority known).
    /// Repeated headers count once, the first.
    public init(parsingLeniently fields: APNsHeaderFields) {
        self.init()
        _ = read(fields)
    }

    /// Fills in each header that parses; returns the first problem in
    /// ``APNsHeaderError/precedence`` order, if any.
    private mutating func read(_ fields: APNsHeaderFields) -> APNsHeaderError? {
        // One pass over the fields (names are lowercase; the first of a repeated name counts).
        // Each value moved out (`take()`), not copied.
        var known = APNsHeaderFields.KnownValues()
        fields.read(into: &known)
        let method = known.method.take(), path = known.path.take(), id = known.id.take(), collapse = known.collapseID.take()
        let priorityValue = known.priority.take(), pushTypeValue = known.pushType.take(), expirationValue = known.expiration.take()
        let authorization = known.authorization.take()
        if topic == nil { topic = known.topic.take() }
        if channelID == nil { channelID = known.channelID.take() }
        var first: APNsHeaderError?
        func note(_ problem: APNsHeaderError) { if first == nil { first = problem } }
        if let method, method != "POST" {
            note(APNsHeaderError(header: ":method", value: method, reason: .methodNotAllowed, problem: ":method is \(method); APNs accepts only POST"))
        }
        if let value = id {
            do throws(APNsIDError) { apnsID = try APNsID(parsing: value) } catch {
                note(APNsHeaderError(header: APNsHeader.id, value: value, reason: .badMessageID, problem: error.description))
            }
        }
        if let value = collapse {
            do throws(CollapseIDError) { collapseID = try CollapseID(value) } catch {
                note(APNsHeaderError(header: APNsHeader.collapseID, value: value, reason: .badCollapseID, problem: error.description))
            }
        }
        if let value = priorityValue {
            if let parsed = PushPriority(headerValue: value) {
                priority = parsed
            } else {
                note(APNsHeaderError(header: APNsHeader.priority, value: value, reason: .badPriority, problem: "apns-priority \"\(value)\" is not \(PushPriority.validValues)"))
            }
        }
        if let value = pushTypeValue {
            if let parsed = PushType(rawValue: value) {
                pushType = parsed
            } else {
                note(APNsHeaderError(
                    header: APNsHeader.pushType, value: value, reason: .invalidPushType,
                    problem: "apns-push-type \"\(value)\" is not one of \(PushType.allCases.map(\.rawValue).joined(separator: ", "))"))
            }
        }
        if let path {
            do throws(APNsHeaderError) { target = try Self.target(ofPath: path) } catch { note(error) }
        }
        if let value = expirationValue {
            do throws(ExpirationError) { expiration = try Expiration(headerValue: value) } catch {
                note(APNsHeaderError(header: APNsHeader.expiration, value: value, reason: .badExpirationDate, problem: error.description))
            }
        }
        if let value = authorization {
            if let token = APNsHeader.providerToken(inAuthorization: value) {
                providerToken = token
            } else {
                note(APNsHeaderError(header: APNsHeader.authorization, value: nil, reason: .missingProviderToken, problem: "authorization is not \"bearer <provider token>\""))
            }
        }
        return first
    }

    /// The target of a `:path`.
    static func target(ofPath path: String) throws(APNsHeaderError) -> Target {
        if let hex = path.suffix(afterASCIIPrefix: APNsPath.devicePrefix) {
            guard !hex.isEmpty else {
                throw APNsHeaderError(header: ":path", value: path, reason: .missingDeviceToken, problem: "the path has no device token after \(APNsPath.devicePrefix)")
            }
            do throws(DeviceTokenError) { return .device(try DeviceToken(hex: hex)) } catch {
                throw APNsHeaderError(header: ":path", value: path, reason: .badDeviceToken, problem: error.description)
            }
        }
        if let bundleID = path.suffix(afterASCIIPrefix: APNsPath.broadcastPrefix) {
            if !bundleID.isEmpty, !bundleID.contains("/") { return .broadcast(bundleID: bundleID) }
        }
        throw APNsHeaderError(header: ":path", value: path, reason: .badPath, problem: "the path \(path) is neither \(APNsPath.devicePrefix)<token> nor \(APNsPath.broadcastPrefix)<bundle id>")
    }
}

/// A header APNs would refuse: which one, its value, why, and the reason APNs answers with.
public struct APNsHeaderError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The header name (`apns-priority`, `:path`).
    public var header: String
    /// The value as sent, where it helps (never the `authorization` value).
    public var value: String?
    /// The reason APNs answers with (its ``APNsReason/status`` is the HTTP status).
    public var reason: APNsReason
    /// A sentence saying what is wrong and what was expected.
    public var problem: String

    /// Creates an error.
    public init(header: String, value: String?, reason: APNsReason, problem: String) {
        self.header = header
        self.value = value
        self.reason = reason
        self.problem = problem
    }

    /// The order in which ``APNsRequestHeaders/init(parsing:)`` checks headers: when a request
    /// breaks several rules, the first here is the one reported. Apple documents no order; this
    /// follows the pushy mock server's (`apns-id`, collapse id, priority, push type, then the
    /// path's device token), which the linter's `rejectionPrecedence` shares.
    public static let precedence: [String] = [
        "(repeated header)", ":method", APNsHeader.id, APNsHeader.collapseID, APNsHeader.priority,
        APNsHeader.pushType, ":path", APNsHeader.expiration, APNsHeader.authorization,
    ]

    /// `header: problem (status Reason)`.
    public var description: String {
        "\(problem) (\(reason.status.map(String.init) ?? "?") \(reason))"
    }
}
