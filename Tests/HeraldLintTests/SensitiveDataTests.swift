@testable import HeraldLint
import Testing
import HeraldTestSupport

/// The recognisers' single-pass shortcuts against what they stand for.
@Suite(.ownThreads) struct SensitiveDataTests {
    /// The two-byte filter lets through exactly the pairs that begin a known API key prefix.
    @Test func apiKeyFilterMatchesThePrefixes() {
        var starts = Set<[UInt8]>()
        for slot in SensitiveData.apiKeyPrefixes.indices {
            let prefix = SensitiveData.apiKeyPrefixes[slot]
            starts.insert([prefix.utf8Start[0], prefix.utf8Start[1]])
        }
        for first in UInt8.min...UInt8.max {
            for second in UInt8.min...UInt8.max {
                #expect(SensitiveData.mayStartAPIKey(first, second) == starts.contains([first, second]), "\(first) \(second)")
            }
        }
    }

    static func card(_ text: String) -> String? {
        Array(text.utf8).withUnsafeBytes { SensitiveData.cardNumber(in: $0) }
    }

    /// Cards by hand from the definition: 13 to 19 digits, one space or dash between groups,
    /// a network's prefix, the Luhn check; twenty digits in a row are no card.
    @Test func cardNumbersByHand() {
        #expect(Self.card("4111111111111111") == "4111111111111111")
        #expect(Self.card("pay 4111 1111 1111 1111 now") == "4111111111111111")
        #expect(Self.card("4111-1111-1111-1111-") == "4111111111111111")
        #expect(Self.card("4111  1111 1111 1111") == nil, "two spaces end the run")
        #expect(Self.card("4111111111111112") == nil, "Luhn")
        #expect(Self.card("9111111111111111") == nil, "no network starts with 9")
        #expect(Self.card("41111111111111111111") == nil, "twenty digits")
        #expect(Self.card("x 378282246310005") == "378282246310005")
        // A space joins groups: "411111111111 1111" is one 16-digit run that fails Luhn; the
        // next card is found.
        #expect(Self.card("411111111111 1112 and 5555555555554444") == "5555555555554444")
        #expect(Self.card("1234567890 4012888888881881") == nil, "the space joins them: 26 digits")
        #expect(Self.card("1234567890, 4012888888881881") == "4012888888881881")
    }
}
