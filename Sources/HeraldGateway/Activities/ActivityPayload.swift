import HeraldJSON
import HeraldProtocol

/// The payload of a Live Activity push, built when it is sent: `timestamp` is the time of the
/// send (Unix seconds, never earlier than the activity's last), the start asks for an update
/// token (`input-push-token: 1`) or names the channel (`input-push-channel`).
enum ActivityPayload {
    /// How a start asks the device to address the new activity.
    enum Address: Sendable, Equatable {
        case updateToken
        case channel(String)
    }

    static func bytes(_ content: ActivityContent, activity: StoredActivity, timestamp: Int64, address: Address? = nil) -> [UInt8] {
        var aps = JSONObject()
        func add(_ key: String, _ value: JSONValue?) { if let value { aps.members.append(.init(key: key, value: value)) } }
        add("timestamp", .number(JSONNumber(timestamp)))
        add("event", .string(content.event.rawValue))
        add("content-state", content.contentState)
        if content.event == .start {
            add("attributes-type", .string(activity.attributesType))
            add("attributes", (try? JSONDocument(parsing: Array(activity.attributes.utf8)))?.root.value ?? .object(JSONObject()))
        }
        add("alert", content.alert)
        add("stale-date", content.staleDate.map { .number(JSONNumber($0)) })
        add("dismissal-date", content.dismissalDate.map { .number(JSONNumber($0)) })
        add("relevance-score", content.relevanceScore.map { .number($0) })
        switch address {
        case .updateToken?: add("input-push-token", .number(1))
        case .channel(let id)?: add("input-push-channel", .string(id))
        case nil: break
        }
        var root = JSONObject()
        root.members.append(.init(key: "aps", value: .object(aps)))
        var writer = JSONWriter(output: JSONBytes())
        writer.value(.object(root))
        return writer.output.bytes
    }
}
