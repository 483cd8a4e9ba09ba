/// How many terminal columns text takes: wide (East Asian and emoji) characters take two,
/// combining marks and joiners none, everything else one.
enum DisplayWidth {
    static func of(_ character: Character) -> Int {
        var width = 0
        for scalar in character.unicodeScalars {
            width = max(width, of(scalar))
        }
        return width
    }

    static func of(_ text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + of($1) }
    }

    static func of(_ scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        switch value {
        case 0x0300...0x036F, 0x200B...0x200F, 0xFE00...0xFE0F, 0x20D0...0x20FF, 0xE0100...0xE01EF:
            return 0
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
             0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
             0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x1FA70...0x1FAFF, 0x20000...0x3FFFD:
            return 2
        default:
            if scalar.properties.generalCategory == .nonspacingMark || scalar.properties.generalCategory == .enclosingMark { return 0 }
            return 1
        }
    }

    /// Wraps `text` into lines of at most `width` columns, breaking at spaces where possible
    /// and inside words (or CJK runs) where not. Line breaks in the text are kept.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = ""
            var lineWidth = 0
            for character in paragraph {
                let characterWidth = of(character)
                if lineWidth + characterWidth > width, !line.isEmpty {
                    if let space = line.lastIndex(of: " "), space != line.startIndex {
                        let rest = String(line[line.index(after: space)...])
                        lines.append(String(line[..<space]))
                        line = rest
                        lineWidth = of(rest)
                    } else {
                        lines.append(line)
                        line = ""
                        lineWidth = 0
                    }
                    if character == " " && line.isEmpty { continue }
                }
                line.append(character)
                lineWidth += characterWidth
            }
            lines.append(line)
        }
        return lines
    }

    /// `text` cut to `width` columns, ending in `…` when cut.
    static func truncate(_ text: String, width: Int) -> String {
        guard of(text) > width else { return text }
        var result = ""
        var used = 0
        for character in text {
            let characterWidth = of(character)
            if used + characterWidth > width - 1 { break }
            result.append(character)
            used += characterWidth
        }
        while result.last == " " { result.removeLast() }
        return result + "…"
    }

    /// `text` followed by spaces up to `width` columns.
    static func pad(_ text: String, to width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - of(text)))
    }
}
