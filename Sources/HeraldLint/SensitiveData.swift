/// Recognisers for customer information and secrets in custom data, working on UTF-8 bytes.
///
/// They aim at what leaks in practice and keep false positives low: a card number must be 13 to 19
/// digits (spaces or dashes between groups allowed), pass the Luhn check, and start like a card
/// network's numbers (so millisecond timestamps, which start with 1, do not match).
enum SensitiveData {
    /// A likely payment card number in `bytes`.
    static func cardNumber(in bytes: UnsafeRawBufferPointer) -> String? {
        var digits: [UInt8] = []
        var index = 0
        var lastWasSeparator = false
        func candidate() -> String? {
            defer { digits.removeAll(keepingCapacity: true) }
            guard (13...19).contains(digits.count), looksLikeCardPrefix(digits), luhnValid(digits) else { return nil }
            return String(decoding: digits.map { $0 + UInt8(ascii: "0") }, as: UTF8.self)
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte &- UInt8(ascii: "0") < 10 {
                digits.append(byte - UInt8(ascii: "0"))
                lastWasSeparator = false
            } else if (byte == UInt8(ascii: " ") || byte == UInt8(ascii: "-")) && !digits.isEmpty && !lastWasSeparator {
                lastWasSeparator = true
            } else {
                if let found = candidate() { return found }
                lastWasSeparator = false
            }
            if digits.count > 19, let found = candidate() { return found }
            index += 1
        }
        return candidate()
    }

    /// Prefixes of Visa, Mastercard, American Express, Discover, JCB, Diners Club and UnionPay.
    static func looksLikeCardPrefix(_ digits: [UInt8]) -> Bool {
        guard digits.count >= 4 else { return false }
        let two = Int(digits[0]) * 10 + Int(digits[1])
        let three = two * 10 + Int(digits[2])
        let four = three * 10 + Int(digits[3])
        switch digits[0] {
        case 4: return true
        case 5: return (51...55).contains(two)
        case 2: return (2221...2720).contains(four)
        case 3: return [34, 37, 35, 30, 36, 38].contains(two)
        case 6: return four == 6011 || two == 65 || two == 62 || (644...649).contains(three)
        default: return false
        }
    }

    /// The Luhn checksum used by payment cards.
    static func luhnValid(_ digits: [UInt8]) -> Bool {
        var sum = 0
        for (offset, digit) in digits.reversed().enumerated() {
            var value = Int(digit)
            if offset % 2 == 1 {
                value *= 2
                if value > 9 { value -= 9 }
            }
            sum += value
        }
        return sum % 10 == 0
    }

    /// A likely e-mail address in `bytes`.
    static func email(in bytes: UnsafeRawBufferPointer) -> String? {
        func isLocal(_ byte: UInt8) -> Bool {
            isAlphanumeric(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "%")
                || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
        }
        func isDomain(_ byte: UInt8) -> Bool { isAlphanumeric(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") }
        for at in 0..<bytes.count where bytes[at] == UInt8(ascii: "@") {
            var start = at
            while start > 0, isLocal(bytes[start - 1]) { start -= 1 }
            var end = at + 1
            while end < bytes.count, isDomain(bytes[end]) { end += 1 }
            while end > at + 1, bytes[end - 1] == UInt8(ascii: ".") { end -= 1 }
            guard start < at, end > at + 1 else { continue }
            let domain = Array(bytes[(at + 1)..<end])
            guard let lastDot = domain.lastIndex(of: UInt8(ascii: ".")), lastDot > 0 else { continue }
            let topLevel = domain[(lastDot + 1)...]
            guard topLevel.count >= 2, topLevel.allSatisfy(isLetter) else { continue }
            return String(decoding: bytes[start..<end], as: UTF8.self)
        }
        return nil
    }

    /// A likely credential: a JWT, a bearer token, or a well-known API key format.
    static func token(in bytes: UnsafeRawBufferPointer) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        if let range = text.firstRange(of: "eyJ") {
            let rest = text[range.lowerBound...]
            let parts = rest.prefix { isBase64URL($0) || $0 == "." }.split(separator: ".", omittingEmptySubsequences: false)
            if parts.count >= 3, parts[0].count >= 10, parts[1].count >= 10, parts[1].hasPrefix("eyJ") {
                return "a JSON Web Token"
            }
        }
        if let start = asciiCaseInsensitiveIndex(of: "bearer ", in: bytes) {
            let rest = String(decoding: bytes[(start + 7)...], as: UTF8.self)
            let token = rest.prefix { isBase64URL($0) || $0 == "." || $0 == "~" || $0 == "+" || $0 == "/" || $0 == "=" }
            if token.count >= 16 { return "a bearer token" }
        }
        for prefix in ["sk_live_", "sk_test_", "rk_live_", "ghp_", "gho_", "github_pat_", "xoxb-", "xoxp-", "AKIA"] {
            if let range = text.firstRange(of: prefix) {
                let token = text[range.upperBound...].prefix { isBase64URL($0) }
                if token.count >= 16 { return "an API key (\(prefix)…)" }
            }
        }
        return nil
    }

    /// The offset of `needle` (lowercase ASCII) in `bytes`, ignoring ASCII case.
    static func asciiCaseInsensitiveIndex(of needle: StaticString, in bytes: UnsafeRawBufferPointer) -> Int? {
        let pattern = UnsafeRawBufferPointer(start: needle.utf8Start, count: needle.utf8CodeUnitCount)
        guard pattern.count <= bytes.count else { return nil }
        outer: for start in 0...(bytes.count - pattern.count) {
            for offset in 0..<pattern.count {
                let byte = bytes[start + offset]
                let folded = (byte &- UInt8(ascii: "A") < 26) ? byte | 0x20 : byte
                if folded != pattern[offset] { continue outer }
            }
            return start
        }
        return nil
    }

    /// Key names that say what they hold.
    static func sensitiveKeyName(_ key: String) -> Bool {
        let normalized = String(key.lowercased().unicodeScalars.filter { $0.properties.isAlphabetic || ("0"..."9").contains($0) })
        let containing = ["password", "passwd", "passphrase", "secret", "apikey", "accesstoken", "refreshtoken", "authtoken",
                          "privatekey", "creditcard", "cardnumber", "socialsecurity", "bankaccount", "iban"]
        if containing.contains(where: normalized.contains) { return true }
        return ["ssn", "cvv", "cvc", "pin", "pwd"].contains(normalized)
    }

    static func isAlphanumeric(_ byte: UInt8) -> Bool { isLetter(byte) || byte &- UInt8(ascii: "0") < 10 }
    static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) &- UInt8(ascii: "a") < 26 }
    static func isBase64URL(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || character == "-" || character == "_")
    }
}
