import Foundation
@testable import HeraldGateway
import Synchronization
import Testing

/// The console's time series: a fixed ring of ten-second buckets, an hour long, whatever the
/// traffic; each bucket counts per app, and a key sees only its apps.
@Suite struct SendHistoryTests {
    /// A clock the test moves (milliseconds since 1970).
    final class Clock: Sendable {
        let now = Atomic<Int64>(1_800_000_000_000)
        func advance(seconds: Int64) { now.add(seconds * 1_000, ordering: .relaxed) }
        var read: @Sendable () -> Int64 { { self.now.load(ordering: .relaxed) } }
    }

    @Test func bucketsAreTenSecondsAndAnHourLong() {
        let clock = Clock()
        let history = SendHistory(now: clock.read)
        history.record("a") { $0.accepted += 1 }
        history.record("b") { $0.rejected += 2 }
        clock.advance(seconds: 10)
        history.record("a") { $0.accepted += 5 }
        history.queue(waiting: 7)
        let series = history.series(minutes: 60) { _ in true }
        #expect(series.count == 360)
        #expect(series.last?.counts.accepted == 5 && series.last?.queueWaiting == 7)
        #expect(series.dropLast().last?.counts == SendHistory.Counts(accepted: 1, rejected: 2))
        #expect(zip(series, series.dropFirst()).allSatisfy { $1.start - $0.start == 10_000 }, "consecutive ten-second buckets")
        #expect(series.allSatisfy { $0.start % 10_000 == 0 })
        // Only the apps a key may see.
        #expect(history.series(minutes: 1) { $0 == "b" }.reduce(0) { $0 + $1.counts.rejected + $1.counts.accepted } == 2)
        #expect(history.series(minutes: 1) { _ in true }.count == 6)
    }

    /// An hour later the ring has come round: what was recorded then is gone, not added to.
    @Test func theRingForgetsWhatIsOlderThanAnHour() {
        let clock = Clock()
        let history = SendHistory(now: clock.read)
        history.record("a") { $0.submitted += 100 }
        clock.advance(seconds: 3_590)
        #expect(history.series(minutes: 60) { _ in true }.reduce(0) { $0 + $1.counts.submitted } == 100, "still within the hour")
        clock.advance(seconds: 10)
        #expect(history.series(minutes: 60) { _ in true }.reduce(0) { $0 + $1.counts.submitted } == 0, "an hour old: gone")
        // The same slot, reused: it starts from nothing.
        history.record("a") { $0.submitted += 1 }
        #expect(history.series(minutes: 60) { _ in true }.reduce(0) { $0 + $1.counts.submitted } == 1)
        // Hours of traffic keep 360 buckets; an idle gap reads as empty buckets.
        for _ in 0..<1_000 {
            clock.advance(seconds: 7)
            history.record("a") { $0.accepted += 1 }
        }
        clock.advance(seconds: 1_800)
        let series = history.series(minutes: 60) { _ in true }
        #expect(series.count == 360 && series.suffix(180).allSatisfy { $0.counts == SendHistory.Counts() })
    }
}
