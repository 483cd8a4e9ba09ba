import HeraldClientTestSupport

// Any bytes as a client's frames through HTTP2ServerSessionChecks.check (the mock's HTTP/2
// session: the preface, frame parsing, HPACK decoding, request checks, flow control, stream
// states and limits); a violation crashes so libFuzzer saves the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP2Server(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))
    let violations = HTTP2ServerSessionChecks.check(bytes)
    precondition(violations.isEmpty, "\(violations)")
    // The same bytes as header blocks: the decoder's recall of literals changes nothing.
    let recall = HPACKRecallChecks.check(bytes)
    precondition(recall.isEmpty, "\(recall)")
    return 0
}
