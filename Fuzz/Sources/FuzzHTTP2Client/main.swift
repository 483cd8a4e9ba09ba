import HeraldClientTestSupport

// Any bytes as a server's frames through HTTP2SessionChecks.check (the client's HTTP/2 session:
// frame parsing, HPACK decoding, flow control, stream states); a violation crashes so libFuzzer
// saves the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP2Client(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let violations = HTTP2SessionChecks.check(Array(UnsafeBufferPointer(start: start, count: count)))
    precondition(violations.isEmpty, "\(violations)")
    return 0
}
