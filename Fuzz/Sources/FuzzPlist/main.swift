import HeraldTestSupport

// Any bytes through PropertyChecks.propertyList (see there for the contract); a violation crashes so
// libFuzzer saves the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPlist(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let violations = PropertyChecks.propertyList(Array(UnsafeBufferPointer(start: start, count: count)))
    precondition(violations.isEmpty, "\(violations)")
    return 0
}
