import HeraldHTTPAPI
import HeraldJSON
import Synchronization

/// The last hour of this process's sending, in ten-second buckets per app: submitted tokens
/// and outcomes (accepted, rejected, retried, expired), with the queue's depth as last seen in
/// each bucket. What the console's charts draw; a fixed number of buckets (360) and, in each,
/// one entry per app that did something in it, so it never grows with traffic.
final class SendHistory: Sendable {
    /// Seconds a bucket covers.
    static let bucketSeconds: Int64 = 10
    /// Buckets kept: an hour.
    static let bucketCount = 360

    /// What one app did in one bucket.
    struct Counts: Sendable, Equatable {
        var submitted = 0, accepted = 0, rejected = 0, retried = 0, expired = 0
    }

    private struct Bucket {
        var start: Int64 = .min
        var apps: [String: Counts] = [:]
        var queueWaiting: Int?
    }

    private let buckets = Mutex<[Bucket]>(Array(repeating: Bucket(), count: SendHistory.bucketCount))
    private let now: @Sendable () -> Int64

    /// `now` gives the time in milliseconds since 1970.
    init(now: @escaping @Sendable () -> Int64) { self.now = now }

    /// Adds to `app`'s counts in the current bucket.
    func record(_ app: String, _ change: (inout Counts) -> Void) {
        let start = Self.bucketStart(now())
        buckets.withLock { buckets in
            let index = Self.index(start)
            if buckets[index].start != start { buckets[index] = Bucket(start: start) }
            change(&buckets[index].apps[app, default: Counts()])
        }
    }

    /// The queue's depth now (every app).
    func queue(waiting: Int) {
        let start = Self.bucketStart(now())
        buckets.withLock { buckets in
            let index = Self.index(start)
            if buckets[index].start != start { buckets[index] = Bucket(start: start) }
            buckets[index].queueWaiting = waiting
        }
    }

    /// The last `minutes` (at most 60), oldest first, one entry per bucket (empty ones
    /// included), counting only the apps `include` admits.
    func series(minutes: Int, include: (String) -> Bool) -> [(start: Int64, counts: Counts, queueWaiting: Int?)] {
        let last = Self.bucketStart(now())
        let count = min(Self.bucketCount, max(1, minutes * 60 / Int(Self.bucketSeconds)))
        return buckets.withLock { buckets in
            (0..<count).reversed().map { back in
                let start = last - Int64(back) * Self.bucketSeconds * 1_000
                let bucket = buckets[Self.index(start)]
                guard bucket.start == start else { return (start, Counts(), nil) }
                var total = Counts()
                for (app, counts) in bucket.apps where include(app) {
                    total.submitted += counts.submitted
                    total.accepted += counts.accepted
                    total.rejected += counts.rejected
                    total.retried += counts.retried
                    total.expired += counts.expired
                }
                return (start, total, bucket.queueWaiting)
            }
        }
    }

    private static func bucketStart(_ milliseconds: Int64) -> Int64 {
        let width = bucketSeconds * 1_000
        return milliseconds - ((milliseconds % width) + width) % width
    }

    private static func index(_ start: Int64) -> Int {
        let slot = (start / (bucketSeconds * 1_000)) % Int64(bucketCount)
        return Int((slot + Int64(bucketCount)) % Int64(bucketCount))
    }
}
