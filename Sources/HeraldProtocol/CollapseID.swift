/// The value of `apns-collapse-id`: notifications with the same ID replace each other on the
/// device. At most 64 bytes of UTF-8 (Apple's “Sending notification requests to APNs”; longer gives ``APNsReason/badCollapseID``).
public struct CollapseID: Sendable, Hashable, CustomStringConvertible {
    /// The largest collapse ID APNs accepts, in UTF-8 bytes.
    public static let maximumByteCount = 64

    /// The identifier.
    public let value: String

    /// Validates the length.
    public init(_ value: String) throws(CollapseIDError) {
        let count = value.utf8.count
        if count > Self.maximumByteCount { throw .tooLong(bytes: count) }
        if count == 0 { throw .empty }
        self.value = value
    }

    /// The identifier.
    public var description: String { value }
}

/// Why a string is not an `apns-collapse-id`.
public enum CollapseIDError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Longer than 64 UTF-8 bytes.
    case tooLong(bytes: Int)
    /// Empty: no notification would be collapsed with it meaningfully.
    case empty

    /// A sentence saying what is wrong and what was expected.
    public var description: String {
        switch self {
        case .tooLong(let bytes): "apns-collapse-id is \(bytes) bytes, over the \(CollapseID.maximumByteCount)-byte limit"
        case .empty: "apns-collapse-id is empty; expected 1 to \(CollapseID.maximumByteCount) bytes"
        }
    }
}
