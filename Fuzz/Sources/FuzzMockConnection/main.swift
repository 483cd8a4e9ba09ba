import HeraldMockTestSupport

// Any bytes as a script of client actions on one of the mock's provider connections, through
// MockConnectionChecks.check (the mock's HTTP/2 pipeline, its judgement of requests, fault
// rules, delays and GOAWAY); a violation crashes so libFuzzer saves the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMockConnection(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let violations = MockConnectionChecks.check(Array(UnsafeBufferPointer(start: start, count: count)))
    precondition(violations.isEmpty, "\(violations)")
    return 0
}
