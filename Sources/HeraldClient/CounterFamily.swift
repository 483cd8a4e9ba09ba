import Metrics
import Synchronization

/// The counters of one label, one for each set of dimension values, each made the first time it
/// is counted: what the client, the mock and the gateway count by reason, status or result.
package final class CounterFamily: Sendable {
    private let label: String
    private let dimensions: [String]
    private let factory: any MetricsFactory
    private let counters = Mutex<[[String]: Counter]>([:])

    /// A family of counters named `label`, with one value for each of `dimensions`.
    package init(_ label: String, dimensions: [String], factory: any MetricsFactory) {
        self.label = label
        self.dimensions = dimensions
        self.factory = factory
    }

    /// Adds one to the counter for `values`, one for each dimension in order.
    package func increment(_ values: String...) {
        increment(values, by: 1)
    }

    /// Adds `amount` to the counter for `values`, one for each dimension in order.
    package func increment(_ values: String..., by amount: Int64) {
        increment(values, by: amount)
    }

    private func increment(_ values: [String], by amount: Int64) {
        counter(values).increment(by: amount)
    }

    /// The counter for `values`, one for each dimension in order: for a caller that counts on it
    /// many times.
    package func counter(_ values: String...) -> Counter {
        counter(values)
    }

    private func counter(_ values: [String]) -> Counter {
        precondition(values.count == dimensions.count, "\(label) has \(dimensions.count) dimensions")
        return counters.withLock { counters in
            if let counter = counters[values] { return counter }
            let counter = Counter(label: label, dimensions: Array(zip(dimensions, values)), factory: factory)
            counters[values] = counter
            return counter
        }
    }
}
