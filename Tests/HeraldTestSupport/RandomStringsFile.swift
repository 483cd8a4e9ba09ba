/// Generates `.strings` source texts from the grammar of reference §8.4, exercising every
/// token form, escape and comment, and optionally breaking them, for differential tests.
public struct RandomStringsFile {
    public var rng: SeededGenerator

    public init(seed: UInt64) { rng = SeededGenerator(seed: seed) }

    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &rng) < percent }
    mutating func pick<T>(_ options: [T]) -> T { options[Int.random(in: 0..<options.count, using: &rng)] }

    /// A whole file: entries, possibly inside braces, possibly broken by one random edit.
    public mutating func file() -> String {
        var text = ""
        let braced = chance(15)
        if braced { text += whitespace() + "{" }
        for _ in 0..<Int.random(in: 0...6, using: &rng) {
            text += whitespace() + entry()
        }
        text += whitespace()
        if braced { text += "}" + whitespace() }
        if chance(35) { text = breakOne(text) }
        return text
    }

    mutating func entry() -> String {
        let key = string()
        if chance(10) { return key + whitespace() + ";" }
        return key + whitespace() + "=" + whitespace() + value(depth: 0) + whitespace() + ";"
    }

    mutating func value(depth: Int) -> String {
        guard depth < 3 else { return string() }
        switch Int.random(in: 0..<12, using: &rng) {
        case 0: return "{" + (0..<Int.random(in: 0...2, using: &rng)).map { _ in whitespace() + entry() }.joined() + whitespace() + "}"
        case 1:
            let elements = (0..<Int.random(in: 0...3, using: &rng)).map { _ in value(depth: depth + 1) }
            return "(" + elements.joined(separator: whitespace() + ",") + (chance(30) && !elements.isEmpty ? "," : "") + ")"
        case 2: return "<" + (0..<Int.random(in: 0...4, using: &rng)).map { _ in pick(["0f", "bd", "77", " ", "A0"]) }.joined() + ">"
        default: return string()
        }
    }

    mutating func string() -> String {
        switch Int.random(in: 0..<10, using: &rng) {
        case 0, 1:
            let characters = Array("abcXYZ019_$/:.-")
            return String((0..<Int.random(in: 1...6, using: &rng)).map { _ in pick(characters) })
        case 2: return "'" + quotedBody(quote: "'") + "'"
        default: return "\"" + quotedBody(quote: "\"") + "\""
        }
    }

    mutating func quotedBody(quote: Character) -> String {
        var body = ""
        for _ in 0..<Int.random(in: 0...8, using: &rng) {
            switch Int.random(in: 0..<14, using: &rng) {
            case 0: body += "\\" + pick(["a", "b", "f", "n", "r", "t", "v", "\"", "'", "\\", "q", "u", "\n", "%"])
            case 1: body += "\\U" + String((0..<Int.random(in: 0...5, using: &rng)).map { _ in pick(Array("0123456789abcdefABCDEFg")) })
            case 2: body += "\\" + String((0..<Int.random(in: 1...4, using: &rng)).map { _ in pick(Array("012345678")) })
            case 3: body += pick(["\\UD83D\\UDE00", "\\UD83D", "\\UDE00x", "é", "日本", "😀", "\u{2028}"])
            case 4: body += pick(["%@", "%1$@", "%%", "%d"])
            case 5: body += pick(["/* not a comment */", "// nor this", "=", ";", "{", "(", quote == "\"" ? "'" : "\""])
            default: body += String(pick(Array("abc XYZ 123 ,.!?")))
            }
        }
        return body
    }

    mutating func whitespace() -> String {
        var text = ""
        for _ in 0..<Int.random(in: 0...2, using: &rng) {
            text += pick([" ", "\n", "\t", "\r\n", "\u{0B}", "\u{0C}", "\u{2028}", "/* block */", "// line\n", "/**/", "\u{A0}"])
        }
        return text
    }

    /// Deletes, duplicates or inserts one character.
    mutating func breakOne(_ text: String) -> String {
        var characters = Array(text)
        let position = Int.random(in: 0...characters.count, using: &rng)
        switch Int.random(in: 0..<3, using: &rng) {
        case 0 where position < characters.count: characters.remove(at: position)
        case 1 where position < characters.count: characters.insert(characters[position], at: position)
        default: characters.insert(pick([";", "\"", "=", "'", "{", "}", "/*", "\\"]).first!, at: position)
        }
        return String(characters)
    }
}
