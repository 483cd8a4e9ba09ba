import HeraldTestSupport

// Any bytes through the linter with every rule enabled; the first byte picks the request context.
// See PropertyChecks.lint for the contract.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLint(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let context = PropertyChecks.lintContexts[Int(start[0]) % PropertyChecks.lintContexts.count]
    let violations = PropertyChecks.lint(Array(UnsafeBufferPointer(start: start + 1, count: count - 1)), context: context)
    precondition(violations.isEmpty, "\(violations)")
    return 0
}
