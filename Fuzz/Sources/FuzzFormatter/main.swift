import HeraldTestSupport

// Any bytes through PropertyChecks.formatter (see there for the contract); a violation crashes so
// libFuzzer saves the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFormatter(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let violations = PropertyChecks.formatter(Array(UnsafeBufferPointer(start: start, count: count)))
    precondition(violations.isEmpty, "\(violations)")
    return 0
}
