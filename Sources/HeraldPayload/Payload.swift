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
        get { storage.hasAPS ? storage.aps : nil }
        set {
            let hasAPS = newValue != nil
            let value = newValue ?? APS()
            unique().hasAPS = hasAPS
            storage.aps = value
        }
    }

    /// Keys beside `aps`, in order. Apple asks for JSON primitives here (object, array, string,
    /// number, Boolean); they reach the app in `userInfo`.
    ///
    /// A decoded payload keeps its custom data in the parsed document until it is read or
    /// changed: decoding does not build values nobody may look at, and encoding copies them from
    /// the source. Reading builds the object each time; keep it in a variable to read it often.
    public var custom: JSONObject {
        get {
            switch storage.custom {
            case .values(let object): return object
            case .source(let document): return Self.customMembers(of: document)
            }
        }
        set { unique().custom = .values(newValue) }
    }

    /// Where the custom keys are.
    enum Custom {
        /// Built in code, or read and changed.
        case values(JSONObject)
        /// Every member of the document's root object except `aps`, still in the source.
        case source(JSONDocument)
    }

    /// The custom members of a decoded document, as values.
    static func customMembers(of document: JSONDocument) -> JSONObject {
        var members: [JSONObject.Member] = []
        members.reserveCapacity(document.root.count)
        for member in document.root.members where !member.keyNode.stringEquals(PayloadReader.apsKey) {
            members.append(JSONObject.Member(key: member.key, value: member.value.value))
        }
        return JSONObject(members: members)
    }

    /// The custom storage, for the encoder.
    var customStorage: Custom { storage.custom }

    /// The fields live in one copy-on-write box: an `APS` is hundreds of bytes with dozens of
    /// strings, so an inline copy (passing a payload to a batch send, storing it in a record)
    /// would copy and retain all of it; a shared box is one reference.
    final class Storage: @unchecked Sendable {
        // `@unchecked Sendable`: a Storage is mutated only through `unique()`, after
        // `isKnownUniquelyReferenced` showed that no other payload (on any thread) holds it.
        var aps: APS
        var hasAPS: Bool
        var custom: Custom

        init(aps: APS, hasAPS: Bool, custom: Custom) {
            self.aps = aps
            self.hasAPS = hasAPS
            self.custom = custom
        }

        /// No `aps` yet: the empty one is built in place.
        init(custom: Custom) {
            self.aps = APS()
            self.hasAPS = false
            self.custom = custom
        }
    }

    // Invariant: when `hasAPS` is false, `aps` is `APS()`, so equality and hashing can compare
    // the fields directly.
    private var storage: Storage

    /// The box, made unique first so it can be written.
    @inline(__always)
    mutating func unique() -> Storage {
        if !isKnownUniquelyReferenced(&storage) {
            storage = Storage(aps: storage.aps, hasAPS: storage.hasAPS, custom: storage.custom)
        }
        return storage
    }

    /// `aps` without the optional, for reading fields without copying the struct.
    var storedAPS: APS { storage.aps }
    /// Whether the payload has `aps`.
    var hasAPS: Bool { storage.hasAPS }

    /// Changes `aps` in place (setting it present).
    mutating func modifyAPS<Result, Failure: Error>(_ body: (inout APS) throws(Failure) -> Result) throws(Failure) -> Result {
        let box = unique()
        box.hasAPS = true
        return try body(&box.aps)
    }

    /// Creates a payload.
    public init(aps: APS? = APS(), custom: JSONObject = [:]) {
        storage = Storage(aps: aps ?? APS(), hasAPS: aps != nil, custom: .values(custom))
    }

    /// A payload without `aps`, its custom data in `custom`, to be filled in place (the
    /// decoder's start).
    init(custom: Custom) {
        storage = Storage(custom: custom)
    }

    /// Sets the custom data of a decoded payload.
    mutating func setCustom(_ custom: Custom) {
        unique().custom = custom
    }

    public static func == (lhs: Payload, rhs: Payload) -> Bool {
        lhs.storage === rhs.storage
            || (lhs.storage.hasAPS == rhs.storage.hasAPS && lhs.storage.aps == rhs.storage.aps && lhs.custom == rhs.custom)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage.hasAPS)
        hasher.combine(storage.aps)
        hasher.combine(custom)
    }
}
