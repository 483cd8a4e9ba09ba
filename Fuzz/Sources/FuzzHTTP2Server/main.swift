import HeraldClientTestSupport

// Any bytes as a client's frames through HTTP2ServerSessionChecks.check (the mock's HTTP/2
// session: the preface, frame parsing, HPACK decoding, request checks, flow control, stream
// states and limits); a violation crashes so libFuzzer saves the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP2Server(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let violations = HTTP2ServerSessionChecks.check(Array(UnsafeBufferPointer(start: start, count: count)))
    precondition(violations.isEmpty, "\(violations)")
    return 0
}
