import HeraldProtocol
import NIOCore
import Synchronization

/// The outcome for one token of a batch.
public struct APNsBatchResult: Sendable {
    /// The device token.
    public var token: DeviceToken
    /// Accepted, or why not.
    public var result: Result<APNsResponse, APNsClientError>
}

/// One request sent to many devices, with the results as an `AsyncSequence` in the order they
/// arrive.
///
/// Each token's request gets its own `apns-id`. Requests are sent as results are read, at most `window` ahead, so a batch of a million tokens
/// holds a bounded number of requests and results. Iterate it once.
///
/// ```swift
/// for await outcome in client.send(request, to: tokens) {
///     if case .failure(let error) = outcome.result { print(outcome.token, error) }
/// }
/// ```
public struct APNsBatch: AsyncSequence, Sendable {
    /// Each token's result.
    public typealias Element = APNsBatchResult

    let client: APNsClient
    let request: APNsRequest
    let tokens: [DeviceToken]
    let window: Int

    /// Starts sending on the first `next()`.
    public func makeAsyncIterator() -> Iterator {
        Iterator(state: BatchState(client: client, request: request, tokens: tokens, window: Swift.max(1, window)))
    }

    /// Yields each token's result.
    public struct Iterator: AsyncIteratorProtocol {
        let state: BatchState

        /// The next result, or `nil` after the last token's.
        public mutating func next() async -> APNsBatchResult? {
            await state.next()
        }
    }
}

/// The batch's bookkeeping: which tokens were started, the results not yet read, and the reader
/// waiting for one.
final class BatchState: Sendable {
    private struct State {
        var nextIndex = 0
        var running = 0
        var ready = CircularBuffer<APNsBatchResult>()
        var readyCount = 0
        var reader: UnsafeContinuation<APNsBatchResult?, Never>?
    }

    private let client: APNsClient
    private let request: APNsRequest
    private let tokens: [DeviceToken]
    private let window: Int
    private let state = Mutex(State())

    init(client: APNsClient, request: APNsRequest, tokens: [DeviceToken], window: Int) {
        self.client = client
        self.request = request
        self.tokens = tokens
        self.window = window
    }

    func next() async -> APNsBatchResult? {
        await withUnsafeContinuation { continuation in
            let (answer, start) = state.withLock { state -> (APNsBatchResult??, [Int]) in
                // Keep `window` requests running or unread.
                var start: [Int] = []
                while state.running + state.readyCount < window, state.nextIndex < tokens.count {
                    start.append(state.nextIndex)
                    state.nextIndex += 1
                    state.running += 1
                }
                if let result = state.ready.popFirst() {
                    state.readyCount -= 1
                    return (.some(result), start)
                }
                if state.running == 0, state.nextIndex >= tokens.count { return (.some(nil), start) }
                state.reader = continuation
                return (nil, start)
            }
            for index in start { launch(index) }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// Sends one token's request. Its result comes back on the connection's event loop (or from
    /// the task that retries it), with no task made per token.
    private func launch(_ index: Int) {
        let token = tokens[index]
        var request = self.request.to(token)
        request.headers.apnsID = nil  // each notification gets its own
        client.send(request) { result in
            self.deliver(APNsBatchResult(token: token, result: result))
        }
    }

    private func deliver(_ result: APNsBatchResult) {
        let reader = state.withLock { state -> UnsafeContinuation<APNsBatchResult?, Never>? in
            state.running -= 1
            if let reader = state.reader {
                state.reader = nil
                return reader
            }
            state.ready.append(result)
            state.readyCount += 1
            return nil
        }
        reader?.resume(returning: result)
    }
}
