/// A provider key's identifier (`kid` of a provider token): the 10-character key ID shown in
/// Apple's developer account ("Establishing a token-based connection to APNs").
public struct KeyID: Sendable, Hashable, CustomStringConvertible {
    /// The identifier.
    public let rawValue: String

    /// Validates a key ID: exactly 10 ASCII letters or digits.
    public init(_ text: String) throws(ProviderIdentifierError) {
        try ProviderIdentifierError.check(text, what: "key ID")
        rawValue = text
    }

    /// The identifier.
    public var description: String { rawValue }
}

/// A developer team's identifier (`iss` of a provider token): 10 characters.
public struct TeamID: Sendable, Hashable, CustomStringConvertible {
    /// The identifier.
    public let rawValue: String

    /// Validates a team ID: exactly 10 ASCII letters or digits.
    public init(_ text: String) throws(ProviderIdentifierError) {
        try ProviderIdentifierError.check(text, what: "team ID")
        rawValue = text
    }

    /// The identifier.
    public var description: String { rawValue }
}

/// Why a string is not a key ID or a team ID.
public struct ProviderIdentifierError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A sentence naming the identifier and what was expected.
    public let description: String

    /// The length Apple's key and team IDs have.
    public static let length = 10

    static func check(_ text: String, what: String) throws(ProviderIdentifierError) {
        let count = text.unicodeScalars.count
        guard count == length else {
            throw ProviderIdentifierError(description: "the \(what) \"\(text)\" has \(count) characters; Apple's \(what)s have \(length) letters and digits, such as ABC123DEFG")
        }
        guard let bad = text.unicodeScalars.first(where: { !($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) }) else { return }
        throw ProviderIdentifierError(description: "the \(what) \"\(text)\" contains '\(bad)'; Apple's \(what)s have \(length) letters and digits, such as ABC123DEFG")
    }
}
