/// "Did you mean": the known key a misspelled one most likely meant.
///
/// First by shape (case, `_` or spaces for `-`, camelCase for kebab-case: `contentAvailable`,
/// `content_available`, `Content-Available` all mean `content-available`), then by edit distance
/// (at most one edit for short keys, two for keys of six characters or more).
enum KeySuggester {
    /// The best candidate for `key`, or `nil`.
    static func suggestion(for key: String, among candidates: [String]) -> String? {
        let normalized = normalize(key)
        if let exact = candidates.first(where: { normalize($0) == normalized }) { return exact }
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let allowed = candidate.count >= 6 ? 2 : 1
            let distance = editDistance(normalized, normalize(candidate), limit: allowed)
            if distance <= allowed, distance < best?.distance ?? Int.max {
                best = (candidate, distance)
            }
        }
        return best?.candidate
    }

    /// Lowercase kebab-case: `threadID` → `thread-id`, `thread_id` → `thread-id`.
    static func normalize(_ key: String) -> String {
        var result = ""
        var previousWasLower = false
        for character in key {
            if character == "_" || character == " " || character == "-" || character == "." {
                if !result.hasSuffix("-") && !result.isEmpty { result.append("-") }
                previousWasLower = false
            } else if character.isUppercase {
                if previousWasLower && !result.hasSuffix("-") { result.append("-") }
                result.append(contentsOf: character.lowercased())
                previousWasLower = false
            } else {
                result.append(character)
                previousWasLower = character.isLowercase || character.isNumber
            }
        }
        while result.hasSuffix("-") { result.removeLast() }
        return result
    }

    /// Damerau-Levenshtein (optimal string alignment) distance, stopping early past `limit`.
    static func editDistance(_ lhs: String, _ rhs: String, limit: Int) -> Int {
        let a = Array(lhs.unicodeScalars)
        let b = Array(rhs.unicodeScalars)
        if abs(a.count - b.count) > limit { return limit + 1 }
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var previousPrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            var rowMinimum = current[0]
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    value = min(value, previousPrevious[j - 2] + 1)
                }
                current[j] = value
                rowMinimum = min(rowMinimum, value)
            }
            if rowMinimum > limit { return limit + 1 }
            (previousPrevious, previous, current) = (previous, current, previousPrevious)
        }
        return previous[b.count]
    }
}
