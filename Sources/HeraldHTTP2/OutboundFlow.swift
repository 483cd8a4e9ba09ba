import NIOCore

/// The sending side's flow control (RFC 9113 §6.9), kept alike by both sessions: the
/// connection's and each stream's send window, the peer's initial window and frame size, and
/// the bodies held back until the peer opens its windows, sent oldest stream first.
struct OutboundFlow {
    private struct Sender {
        var window: Int
        /// The part of the body flow control has held back.
        var held: ByteBuffer?
    }

    private var senders: [Int32: Sender] = [:]
    /// Streams with bytes held back, oldest first.
    private var blocked: [Int32] = []
    private(set) var connectionWindow = 65_535
    private(set) var initialWindow = 65_535
    /// The peer's `SETTINGS_MAX_FRAME_SIZE`.
    var maximumFrameSize = FrameLimits.defaultFrameSize

    /// A stream may send from now on, with the peer's initial window.
    mutating func open(_ id: Int32) {
        senders[id] = Sender(window: initialWindow)
    }

    /// The stream sends no more: what it held back is dropped.
    mutating func close(_ id: Int32) {
        senders.removeValue(forKey: id)
    }

    /// Every stream sends no more.
    mutating func closeAll() {
        senders.removeAll()
        blocked.removeAll()
    }

    /// Whether the stream has body bytes held back.
    func isHolding(_ id: Int32) -> Bool { senders[id]?.held != nil }

    /// Writes `body` as DATA frames, the last with END_STREAM, as far as the windows allow, and
    /// holds back the rest; `true` when all of it is written.
    mutating func send(_ body: ByteBuffer, on id: Int32, into output: inout ByteBuffer) -> Bool {
        guard var sender = senders[id] else { return false }
        var body = body
        write(&body, from: &sender, stream: id, into: &output)
        let done = body.readableBytes == 0
        if !done {
            sender.held = body
            blocked.append(id)
        }
        senders[id] = sender
        return done
    }

    /// A WINDOW_UPDATE for the connection; `false` when it would take the window above 2^31-1.
    mutating func raiseConnectionWindow(by increment: Int) -> Bool {
        guard connectionWindow + increment <= FrameLimits.largestWindow else { return false }
        connectionWindow += increment
        return true
    }

    /// A WINDOW_UPDATE for a stream; `false` when it would take the window above 2^31-1. A
    /// stream that no longer sends is passed over.
    mutating func raiseWindow(of id: Int32, by increment: Int) -> Bool {
        guard let window = senders[id]?.window else { return true }
        guard window + increment <= FrameLimits.largestWindow else { return false }
        senders[id]!.window = window + increment
        return true
    }

    /// The peer's `SETTINGS_INITIAL_WINDOW_SIZE` changed every open stream's window by the
    /// difference (RFC 9113 §6.9.2); `false` when a window would go above 2^31-1.
    mutating func setInitialWindow(_ value: Int) -> Bool {
        let delta = value - initialWindow
        initialWindow = value
        for id in Array(senders.keys) {
            let window = senders[id]!.window + delta
            if window > FrameLimits.largestWindow { return false }
            senders[id]!.window = window
        }
        return true
    }

    /// Sends what the windows now allow of each held-back body, oldest stream first; returns the
    /// streams whose bodies are now all written.
    mutating func resume(into output: inout ByteBuffer) -> [Int32] {
        var finished: [Int32] = []
        var index = 0
        while index < blocked.count, connectionWindow > 0 {
            let id = blocked[index]
            guard var sender = senders[id], var held = sender.held else {
                blocked.remove(at: index)
                continue
            }
            write(&held, from: &sender, stream: id, into: &output)
            if held.readableBytes == 0 {
                sender.held = nil
                blocked.remove(at: index)
                finished.append(id)
            } else {
                sender.held = held
                index += 1
            }
            senders[id] = sender
        }
        return finished
    }

    private mutating func write(_ body: inout ByteBuffer, from sender: inout Sender, stream id: Int32, into output: inout ByteBuffer) {
        while body.readableBytes > 0 {
            let allowed = min(sender.window, connectionWindow, maximumFrameSize)
            if allowed <= 0 { break }
            let chunk = body.readSlice(length: min(allowed, body.readableBytes))!
            output.writeFrameHeader(length: chunk.readableBytes, type: .data, flags: body.readableBytes == 0 ? Flag.endStream : 0, stream: id)
            output.writeImmutableBuffer(chunk)
            sender.window -= chunk.readableBytes
            connectionWindow -= chunk.readableBytes
        }
    }
}
