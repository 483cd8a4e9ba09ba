import HeraldJSON

// A fluent builder: start from a factory for the kind of notification, then chain modifiers.
// Each modifier returns a new payload; `nil` removes the key.
//
//     let payload = Payload.alert(title: "Game Request", body: "Bob wants to play poker")
//         .badge(5)
//         .sound(.default)
//         .threadID("game-42")
//
//     let tagged = try payload.custom("gameID", "12345678")   // custom keys can fail: see there

extension Payload {
    // MARK: Factories

    /// An alert with a title, optional subtitle and body (the dictionary form).
    public static func alert(title: String? = nil, subtitle: String? = nil, body: String) -> Payload {
        Payload(aps: APS(alert: .content(AlertContent(
            title: title.map(AlertText.text), subtitle: subtitle.map(AlertText.text), body: .text(body)))))
    }

    /// An alert whose value is the body string itself (`"alert": "…"`), the form the older guide
    /// recommends when there is only a body.
    public static func alert(_ body: String) -> Payload {
        Payload(aps: APS(alert: .body(body)))
    }

    /// An alert the device localizes from the app's strings tables: `loc-key` and `loc-args`, and
    /// optionally `title-loc-key` and `title-loc-args`.
    public static func localizedAlert(
        key: String, arguments: [String]? = nil, titleKey: String? = nil, titleArguments: [String]? = nil
    ) -> Payload {
        Payload(aps: APS(alert: .content(AlertContent(
            titleLocKey: titleKey.map(Nullable.value), titleLocArgs: titleArguments.map(Nullable.value),
            locKey: key, locArgs: arguments))))
    }

    /// A background (silent) notification: `content-available: 1` and nothing visible. Send it
    /// with push type `background` and priority 5.
    public static func background() -> Payload {
        Payload(aps: APS(contentAvailable: 1))
    }

    /// A Live Activity push: `event`, `timestamp` and `content-state`. Send it with push type
    /// `liveactivity` to the topic `<bundle ID>.push-type.liveactivity`.
    public static func liveActivity(event: LiveActivityEvent, timestamp: Double, contentState: JSONObject) -> Payload {
        Payload(aps: APS(timestamp: timestamp, event: event, contentState: contentState))
    }

    /// A widget or control reload: `{"aps":{"content-changed":true}}`.
    public static func contentChanged() -> Payload {
        Payload(aps: APS(contentChanged: true))
    }

    // MARK: Modifiers

    /// Sets the `alert`.
    public func alert(_ alert: Alert?) -> Payload { updatingAPS { $0.alert = alert } }

    /// Sets the icon badge; `0` clears it.
    public func badge(_ badge: Int?) -> Payload { updatingAPS { $0.badge = badge } }

    /// Sets the sound: a file name, `.default`, or `.critical(name:volume:)`.
    public func sound(_ sound: Sound?) -> Payload { updatingAPS { $0.sound = sound } }

    /// Groups the notification with others of the same thread.
    public func threadID(_ threadID: String?) -> Payload { updatingAPS { $0.threadID = threadID } }

    /// Sets the category whose actions the notification offers.
    public func category(_ category: String?) -> Payload { updatingAPS { $0.category = category } }

    /// Sets `content-available: 1` (or removes it).
    public func contentAvailable(_ enabled: Bool = true) -> Payload {
        updatingAPS { $0.contentAvailable = enabled ? 1 : nil }
    }

    /// Sets `mutable-content: 1` (or removes it), so the service extension runs first.
    public func mutableContent(_ enabled: Bool = true) -> Payload {
        updatingAPS { $0.mutableContent = enabled ? 1 : nil }
    }

    /// Sets the window to bring forward.
    public func targetContentID(_ id: String?) -> Payload { updatingAPS { $0.targetContentID = id } }

    /// Sets the interruption level.
    public func interruptionLevel(_ level: InterruptionLevel?) -> Payload { updatingAPS { $0.interruptionLevel = level } }

    /// Sets the relevance score (0 to 1; any number for Live Activities).
    public func relevanceScore(_ score: Double?) -> Payload { updatingAPS { $0.relevanceScore = score } }

    /// Sets the Focus filter criteria.
    public func filterCriteria(_ criteria: String?) -> Payload { updatingAPS { $0.filterCriteria = criteria } }

    /// Live Activity: sets when the activity becomes stale (seconds since 1970).
    public func staleDate(_ date: Double?) -> Payload { updatingAPS { $0.staleDate = date } }

    /// Live Activity: sets when an ended activity is removed (seconds since 1970).
    public func dismissalDate(_ date: Double?) -> Payload { updatingAPS { $0.dismissalDate = date } }

    /// Live Activity start: sets `attributes-type` and `attributes`.
    public func attributes(type: String, _ attributes: JSONObject) -> Payload {
        updatingAPS {
            $0.attributesType = type
            $0.attributes = attributes
        }
    }

    /// Live Activity start: asks for an update token (`input-push-token: 1`).
    public func inputPushToken(_ enabled: Bool = true) -> Payload {
        updatingAPS { $0.inputPushToken = enabled ? 1 : nil }
    }

    /// Live Activity start: subscribes the activity to a broadcast channel.
    public func inputPushChannel(_ channelID: String?) -> Payload {
        updatingAPS { $0.inputPushChannel = channelID }
    }

    /// Adds or replaces a custom key beside `aps` (`nil` removes it).
    ///
    /// - Throws: ``PayloadBuildError`` when `key` is `aps`, which is not custom data (set it
    ///   through ``aps``).
    public func custom(_ key: String, _ value: JSONValue?) throws(PayloadBuildError) -> Payload {
        guard key != PayloadKey.aps.description else {
            throw PayloadBuildError(key: key, problem: "\"aps\" is Apple's dictionary, not custom data; set it through the aps property")
        }
        var copy = self
        copy.custom[key] = value
        return copy
    }

    /// Adds or replaces a custom key beside `aps` with any `Encodable` value, encoded as a JSON
    /// encoder would (a struct becomes an object, its properties in declaration order).
    ///
    /// ```swift
    /// struct Match: Encodable { var id: Int; var teams: [String] }
    /// let payload = try Payload.alert("Kick-off").custom("match", encoding: Match(id: 7, teams: ["A", "B"]))
    /// ```
    ///
    /// - Throws: ``PayloadBuildError`` when `key` is `aps` or the value cannot be encoded as JSON
    ///   (a NaN or infinite number, or an error from its own `encode(to:)`).
    public func custom(_ key: String, encoding value: some Encodable) throws(PayloadBuildError) -> Payload {
        let json: JSONValue
        do {
            json = try JSONValue(encoding: value)
        } catch {
            throw PayloadBuildError(key: key, problem: "the value cannot be encoded as JSON: \(error)")
        }
        return try custom(key, json)
    }

    private func updatingAPS(_ change: (inout APS) -> Void) -> Payload {
        var copy = self
        copy.modifyAPS(change)
        return copy
    }
}
