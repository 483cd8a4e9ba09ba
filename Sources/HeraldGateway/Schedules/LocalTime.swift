import Foundation

/// A wall-clock time without a zone, as a schedule gives it (`2026-12-01T09:00`), and the
/// instant it is in a zone of the system's time-zone database.
///
/// Where the zone's clock skips the time (a spring-forward gap, such as 02:30 on the night
/// Europe/Paris moves from 02:00 to 03:00), the instant is the end of the gap: the first moment
/// the clock shows a later time (03:00). Where the clock shows the time twice (an autumn
/// overlap), it is the first of the two.
struct LocalTime: Sendable, Hashable, CustomStringConvertible {
    var year: Int
    var month: Int
    var day: Int
    var hour: Int
    var minute: Int
    var second: Int

    /// `YYYY-MM-DDTHH:MM` or `YYYY-MM-DDTHH:MM:SS`, a real date, without a zone.
    init?(parsing text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 16 || bytes.count == 19 else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t"),
              bytes[13] == UInt8(ascii: ":"), bytes.count == 16 || bytes[16] == UInt8(ascii: ":"),
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13), let minute = number(14..<16),
              let second = bytes.count == 19 ? number(17..<19) : 0
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= Self.days(in: month, of: year), hour < 24, minute < 60, second < 60 else { return nil }
        (self.year, self.month, self.day, self.hour, self.minute, self.second) = (year, month, day, hour, minute, second)
    }

    var description: String {
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)-\(two(month))-\(two(day))T\(two(hour)):\(two(minute))" + (second == 0 ? "" : ":\(two(second))")
    }

    /// The zone named `identifier` in the system's time-zone database, or `nil`.
    static func zone(_ identifier: String) -> TimeZone? {
        guard !identifier.isEmpty, identifier.utf8.count <= 64 else { return nil }
        return TimeZone(identifier: identifier)
    }

    /// Seconds since 1970 of this wall-clock time read as UTC.
    var asUTC: Int64 {
        var civil = DateComponents()
        (civil.year, civil.month, civil.day, civil.hour, civil.minute, civil.second) = (year, month, day, hour, minute, second)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return Int64(calendar.date(from: civil)!.timeIntervalSince1970)
    }

    /// The instant (Unix milliseconds) this time is in `zone`: the first of two in an overlap,
    /// the end of the gap in a gap.
    func instant(in zone: TimeZone) -> Int64 {
        let wall = asUTC
        // The offsets in force a day either side cover any transition near this time.
        let offsets = Set([-86_400, 0, 86_400].map { Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(wall + Int64($0))))) })
        let matching = offsets.map { wall - $0 }.filter { Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval($0)))) == wall - $0 }
        if let first = matching.min() { return first * 1_000 }
        // A gap: the clock jumps over this time; the transition is the first moment after it.
        let earliest = wall - (offsets.max() ?? 0) - 1
        if let transition = zone.nextDaylightSavingTimeTransition(after: Date(timeIntervalSince1970: TimeInterval(earliest))) {
            return Int64(transition.timeIntervalSince1970.rounded()) * 1_000
        }
        return (wall - Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(wall))))) * 1_000
    }

    private static func days(in month: Int, of year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

/// When a submission's deliveries are due: at once, at an instant, or at a wall-clock time in
/// each device's zone (devices without one in the app's).
enum Schedule: Sendable, Equatable {
    case now
    case at(Int64)
    case local(LocalTime)

    /// The instant a device of `zone` (the app's `fallback` when `nil` or unknown) is due, at
    /// the earliest `now`: a time that passed is due at once.
    func dueAt(zone: String?, fallback: String, now: Int64) -> Int64 {
        switch self {
        case .now: return now
        case .at(let instant): return max(now, instant)
        case .local(let time):
            let tz = zone.flatMap(LocalTime.zone) ?? LocalTime.zone(fallback) ?? TimeZone(identifier: "UTC")!
            return max(now, time.instant(in: tz))
        }
    }

    /// The latest instant a device may be due (for the retry window and the year's limit).
    var latest: Int64? {
        switch self {
        case .now: return nil
        case .at(let instant): return instant
        // UTC-12 is the last zone to reach a wall-clock time.
        case .local(let time): return (time.asUTC + 12 * 3_600) * 1_000
        }
    }

    /// The earliest instant a device may be due (UTC+14 reaches a wall-clock time first).
    var earliest: Int64? {
        switch self {
        case .now: return nil
        case .at(let instant): return instant
        case .local(let time): return (time.asUTC - 14 * 3_600) * 1_000
        }
    }
}
