import HeraldTestSupport

// Any bytes through the payload decoder and encoder; see PropertyChecks.payload.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPayload(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let violations = PropertyChecks.payload(Array(UnsafeBufferPointer(start: start, count: count)))
    precondition(violations.isEmpty, "\(violations)")
    return 0
}
