import HeraldJSON

/// A remote notification payload: Apple's `aps` dictionary and your custom keys beside it.
///
/// Build one in code, encode it to the exact bytes APNs measures, or decode one with errors that
/// name the JSON Pointer and line:column of the problem.
///
/// ```swift
/// let payload = try Payload.alert(title: "Game Request", subtitle: "Five Card Draw", body: "Bob wants to play poker")
///     .category("GAME_INVITATION")
///     .custom("gameID", "12345678")
/// let bytes = try payload.encode()
/// // {"aps":{"alert":{"title":"Game Request","subtitle":"Five Card Draw","body":"Bob wants to play poker"},"category":"GAME_INVITATION"},"gameID":"12345678"}
/// ```
public struct Payload: Sendable, Hashable {
    /// Apple's dictionary; `nil` for payloads without one (an MDM push is `{"mdm": "…"}`).
    public var aps: APS? {
        get { hasAPS ? storedAPS : nil }
        set {
            hasAPS = newValue != nil
            storedAPS = newValue ?? APS()
        }
    }

    /// Keys beside `aps`, in order. Apple asks for JSON primitives here (object, array, string,
    /// number, Boolean); they reach the app in `userInfo`.
    public var custom: JSONObject

    // `aps` is kept unwrapped: reading a field through an optional of a struct this large copies
    // the whole struct first, several times per encode. Invariant: when `hasAPS` is false,
    // `storedAPS` is `APS()`, so synthesized equality and hashing stay correct.
    var storedAPS: APS
    var hasAPS: Bool

    /// Creates a payload.
    public init(aps: APS? = APS(), custom: JSONObject = [:]) {
        self.storedAPS = aps ?? APS()
        self.hasAPS = aps != nil
        self.custom = custom
    }
}
