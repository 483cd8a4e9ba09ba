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
        get { storage.fields.pointee.hasAPS ? storage.aps.pointee : nil }
        set {
            let box = unique()
            box.fields.pointee.hasAPS = newValue != nil
            box.aps.pointee = newValue ?? APS()
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
            switch storage.fields.pointee.custom {
            case .values(let object): return object
            case .source(let document): return Self.customMembers(of: document)
            }
        }
        set { unique().fields.pointee.custom = .values(newValue) }
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
    var customStorage: Custom { storage.fields.pointee.custom }

    /// The fields live in one copy-on-write box: an `APS` is hundreds of bytes with dozens of
    /// strings, so an inline copy (passing a payload to a batch send, storing it in a record)
    /// would copy and retain all of it; a shared box is one reference.
    ///
    /// The `APS` is allocated in the box's tail and reached through a pointer: read or written
    /// in place, never copied (a class's stored property is copied out to call a method on it).
    final class Storage: ManagedBuffer<Storage.Header, APS> {
        struct Header {
            // Invariant: when `hasAPS` is false, the APS is `APS()`, so equality and hashing can
            // compare the fields directly.
            var hasAPS: Bool
            var custom: Custom
        }

        /// A box holding `aps`.
        static func make(aps: APS, hasAPS: Bool, custom: Custom) -> Storage {
            let box = unsafeDowncast(create(minimumCapacity: 1) { _ in Header(hasAPS: hasAPS, custom: custom) }, to: Storage.self)
            box.withUnsafeMutablePointerToElements { $0.initialize(to: aps) }
            return box
        }

        /// A box with no `aps` yet: the empty one is built in place.
        static func make(custom: Custom) -> Storage {
            let box = unsafeDowncast(create(minimumCapacity: 1) { _ in Header(hasAPS: false, custom: custom) }, to: Storage.self)
            box.withUnsafeMutablePointerToElements { $0.initialize(to: APS.empty) }
            return box
        }

        /// The `APS`, valid while the box is alive.
        var aps: UnsafeMutablePointer<APS> { withUnsafeMutablePointerToElements { $0 } }

        /// The header, valid while the box is alive: reached by address, because every use of
        /// `header` (a class's stored property) is checked for exclusive access at run time.
        var fields: UnsafeMutablePointer<Header> { withUnsafeMutablePointerToHeader { $0 } }

        deinit {
            _ = withUnsafeMutablePointerToElements { $0.deinitialize(count: 1) }
        }
    }

    /// The box. `@unchecked Sendable` (ManagedBuffer is not Sendable): a box is mutated only
    /// through `unique()`, after `isKnownUniquelyReferenced` showed that no other payload, on
    /// any thread, holds it; shared boxes are only read.
    struct Reference: @unchecked Sendable {
        var box: Storage
    }

    private var reference: Reference

    private var storage: Storage { reference.box }

    /// The box, made unique first so it can be written.
    @inline(__always)
    mutating func unique() -> Storage {
        if !isKnownUniquelyReferenced(&reference.box) {
            let old = reference.box
            reference.box = Storage.make(aps: old.aps.pointee, hasAPS: old.fields.pointee.hasAPS, custom: old.fields.pointee.custom)
        }
        return reference.box
    }

    // The APS is handed on `inout`, by address: a non-mutating call through `pointee` copies
    // the whole struct first (measured: one copy and destroy of ~660 bytes per encode).

    /// Writes `aps` (present or not) as the next value, in place.
    func writeStoredAPS<Output: JSONOutput>(to writer: inout JSONWriter<Output>) {
        let box = storage
        withExtendedLifetime(box) { APS.write(&box.aps.pointee, to: &writer) }
    }

    /// The first key of `aps` holding a `Double` JSON cannot represent.
    func firstNonFiniteAPSNumber() -> JSONPointer? {
        let box = storage
        return withExtendedLifetime(box) { APS.firstNonFiniteNumber(in: &box.aps.pointee) }
    }

    /// Whether the payload has `aps`.
    package var hasAPS: Bool { storage.fields.pointee.hasAPS }

    /// Calls `body` with `aps` read in place, an empty one when the payload has none (see
    /// ``hasAPS``): a reader of many fields would otherwise copy the whole `APS` out first.
    /// The pointer is valid only inside `body`.
    package func withAPS<Result>(_ body: (UnsafePointer<APS>) -> Result) -> Result {
        let box = storage
        return withExtendedLifetime(box) { body(box.aps) }
    }

    /// Changes `aps` in place (setting it present).
    mutating func modifyAPS<Result, Failure: Error>(_ body: (inout APS) throws(Failure) -> Result) throws(Failure) -> Result {
        let box = unique()
        box.fields.pointee.hasAPS = true
        return try withExtendedLifetime(box) { () throws(Failure) -> Result in try body(&box.aps.pointee) }
    }

    /// Creates a payload.
    public init(aps: APS? = APS(), custom: JSONObject = [:]) {
        reference = Reference(box: Storage.make(aps: aps ?? APS(), hasAPS: aps != nil, custom: .values(custom)))
    }

    /// A payload without `aps`, its custom data in `custom`, to be filled in place (the
    /// decoder's start).
    init(custom: Custom) {
        reference = Reference(box: Storage.make(custom: custom))
    }

    /// Sets the custom data of a decoded payload.
    mutating func setCustom(_ custom: Custom) {
        unique().fields.pointee.custom = custom
    }

    public static func == (lhs: Payload, rhs: Payload) -> Bool {
        lhs.storage === rhs.storage
            || (lhs.hasAPS == rhs.hasAPS && lhs.storage.aps.pointee == rhs.storage.aps.pointee && lhs.custom == rhs.custom)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(hasAPS)
        hasher.combine(storage.aps.pointee)
        hasher.combine(custom)
    }
}
