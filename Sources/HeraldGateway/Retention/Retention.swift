import Logging

/// Keeps the database from growing for ever: every minute (and at once after a start), deletes
/// what is older than ``GatewayConfiguration/retention`` in small batches, each its own short
/// transaction with a pause after it, so sending goes on beside it:
///
/// - the deliveries of notifications whose last delivery became final before the cutoff, then
///   those notifications (with them their idempotency keys: a key is remembered as long as its
///   notification is kept);
/// - webhook events delivered (or dropped after their last attempt) before the cutoff.
///
/// Devices are never pruned, dead tokens included (they are the registry that keeps later
/// submissions from sending to them); nor is a notification that still has deliveries waiting.
/// SQLite reuses the pages freed, so the file stops growing once the oldest notifications go
/// (it does not shrink: `VACUUM` would hold the database while it runs); PostgreSQL's
/// autovacuum does the same for its tables.
struct Retention: Sendable {
    let store: GuardedStore
    let retention: Duration
    let batch: Int
    let metrics: GatewayMetrics
    let logger: Logger
    let now: @Sendable () -> Int64

    /// How long a pass waits between batches: room for claims and outcomes.
    static let pause: Duration = .milliseconds(20)
    /// How often a pass starts.
    static let interval: Duration = .seconds(60)

    /// One pass: batches until nothing older than the retention is left (or `stopping`).
    func pass(stopping: @Sendable () -> Bool) async {
        let cutoff = now() - retention.milliseconds
        var total = Pruned()
        while !stopping() {
            let pruned: Pruned
            do {
                pruned = try await store.prune(before: cutoff, batch: batch)
            } catch {
                if !(error is StoreUnavailable || error is CancellationError || stopping()) { logger.warning("pruning old notifications failed; trying again later", metadata: ["error": "\(error)"]) }
                break
            }
            total.jobs += pruned.jobs
            total.deliveries += pruned.deliveries
            total.webhookEvents += pruned.webhookEvents
            total.activities += pruned.activities
            metrics.pruned("jobs", pruned.jobs)
            metrics.pruned("deliveries", pruned.deliveries)
            metrics.pruned("webhook_events", pruned.webhookEvents)
            metrics.pruned("activities", pruned.activities)
            guard pruned.more else { break }
            try? await Task.sleep(for: Self.pause)
        }
        if total.jobs + total.deliveries + total.webhookEvents + total.activities > 0 {
            logger.info("pruned what is older than the retention", metadata: [
                "notifications": "\(total.jobs)", "deliveries": "\(total.deliveries)", "webhook events": "\(total.webhookEvents)",
                "live activities": "\(total.activities)",
                "retention": "\(retention.secondsText)",
            ])
        }
    }
}
