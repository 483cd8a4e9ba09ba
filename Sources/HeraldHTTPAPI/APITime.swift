import HeraldJSON
import HeraldLocalization

/// How both of Herald's HTTP APIs (the gateway's and the mock's), their webhooks, event streams
/// and the inbox write a moment: RFC 3339 in UTC with milliseconds, `2026-11-27T12:40:54.123Z`.
/// Readable in a terminal, sortable as text, exact to the millisecond the stores keep, and what
/// JavaScript's `Date` and Python's `datetime.fromisoformat` read as they are.
///
/// Inputs that carry APNs' own units keep them (`expiration` is Unix seconds, as the
/// `apns-expiration` header); every other time an API reads (a filter's bounds) is RFC 3339
/// too, with any offset.
package enum APITime {
    /// `milliseconds` since 1970 as `YYYY-MM-DDTHH:MM:SS.mmmZ` (years 0 to 9999; outside them,
    /// clamped to the nearest).
    package static func format(milliseconds: Int64) -> String {
        let clamped = min(max(milliseconds, minimum), maximum)
        let (days, dayMilliseconds) = floorDivide(clamped, 86_400_000)
        let (year, month, day) = CivilDate.civil(fromDaysSinceUnixEpoch: Int(days))
        var text = ""
        text.reserveCapacity(24)
        func digits(_ value: Int64, _ count: Int) {
            var digits = [Character](repeating: "0", count: count)
            var rest = value
            for index in stride(from: count - 1, through: 0, by: -1) {
                digits[index] = Character(Unicode.Scalar(UInt8(48 + rest % 10)))
                rest /= 10
            }
            text.append(contentsOf: digits)
        }
        digits(Int64(year), 4); text += "-"; digits(Int64(month), 2); text += "-"; digits(Int64(day), 2); text += "T"
        digits(dayMilliseconds / 3_600_000, 2); text += ":"; digits(dayMilliseconds / 60_000 % 60, 2); text += ":"
        digits(dayMilliseconds / 1_000 % 60, 2); text += "."; digits(dayMilliseconds % 1_000, 3); text += "Z"
        return text
    }

    /// A JSON string of ``format(milliseconds:)``.
    package static func json(_ milliseconds: Int64) -> JSONValue { .string(format(milliseconds: milliseconds)) }

    /// A JSON string of ``format(milliseconds:)``, or `null`.
    package static func json(_ milliseconds: Int64?) -> JSONValue { milliseconds.map { json($0) } ?? .null }

    /// Milliseconds since 1970 from RFC 3339 (`2026-12-01T09:00:00Z`, `…T09:00:00.5+01:00`;
    /// `t` and `z` in either case, a fraction of any length, cut to milliseconds), or `nil`.
    package static func parse(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ count: Int) -> Int64? {
            guard index + count <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[index..<index + count] {
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            index += count
            return value
        }
        func expect(_ characters: String) -> Bool {
            guard index < bytes.count, characters.utf8.contains(bytes[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2), expect("Tt"),
              let hour = number(2), expect(":"), let minute = number(2), expect(":"), let second = number(2) else { return nil }
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var milliseconds: Int64 = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var scale: Int64 = 100
            let start = index
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                milliseconds += Int64(bytes[index] - 48) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        var offset: Int64 = 0
        if expect("Zz") {
        } else if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            let sign: Int64 = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let hours = number(2), expect(":"), let minutes = number(2), hours < 24, minutes < 60 else { return nil }
            offset = sign * (hours * 60 + minutes) * 60_000
        } else {
            return nil
        }
        guard index == bytes.count else { return nil }
        let days = Int64(CivilDate.daysSinceUnixEpoch(year: Int(year), month: Int(month), day: Int(day)))
        // A leap second (:60) is read as the next second's start.
        return days * 86_400_000 + ((hour * 60 + minute) * 60 + second) * 1_000 + milliseconds - offset
    }

    /// 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z.
    private static let minimum: Int64 = -62_167_219_200_000
    private static let maximum: Int64 = 253_402_300_799_999

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let quotient = value / divisor, remainder = value % divisor
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }

    private static func isLeap(_ year: Int64) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
