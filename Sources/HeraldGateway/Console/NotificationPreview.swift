import HeraldDevice
import HeraldJSON
import HeraldProtocol

/// A payload as a device shows it, for the console's composer: HeraldDevice's rendering (the
/// mock's inbox draws the same), in the variant's language.
enum NotificationPreview {
    /// `{"language": …, "rendered": {…}}`: the language is `null` for the default payload; the
    /// rendering is ``RenderedNotification/jsonValue`` without the payload's custom keys.
    static func value(_ payload: [UInt8], headers: APNsRequestHeaders, language: String?) -> JSONValue {
        let renderer = NotificationRenderer(bundle: nil, preferredLanguages: language.map { [$0] } ?? ["en"])
        let rendered: JSONValue
        if let document = try? JSONDocument(parsing: payload),
           let notification = try? renderer.render(document: document, headers: headers, includingUserInfo: false) {
            rendered = notification.jsonValue
        } else {
            rendered = .null
        }
        return ["language": language.map { .string($0) } ?? .null, "rendered": rendered]
    }
}
