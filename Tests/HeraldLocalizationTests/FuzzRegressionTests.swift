import HeraldTestSupport
import Testing

/// Replays the localization fuzzers' saved inputs, and the fixture tables, through the checks the
/// fuzzers make.
@Suite("Localization fuzz regressions", .ownThreads)
struct LocalizationFuzzRegressionTests {
    @Test("strings inputs", arguments: Fixtures.fuzzInputs("FuzzStrings") + Fixtures.localizationTables)
    func strings(_ path: String) throws {
        #expect(PropertyChecks.stringsFile(try Fixtures.bytes(path)) == [])
    }

    @Test("property-list inputs", arguments: Fixtures.fuzzInputs("FuzzPlist") + Fixtures.localizationTables)
    func propertyList(_ path: String) throws {
        #expect(PropertyChecks.propertyList(try Fixtures.bytes(path)) == [])
    }

    @Test("String Catalog inputs", arguments: Fixtures.fuzzInputs("FuzzXCStrings") + ["localization/Localizable.xcstrings"])
    func catalog(_ path: String) throws {
        #expect(PropertyChecks.stringCatalog(try Fixtures.bytes(path)) == [])
    }

    @Test("formatter inputs", arguments: Fixtures.fuzzInputs("FuzzFormatter") + ["localization/formatter-seed.txt"])
    func formatter(_ path: String) throws {
        #expect(PropertyChecks.formatter(try Fixtures.bytes(path)) == [])
    }

    @Test("preview inputs", arguments: Fixtures.fuzzInputs("FuzzPreview") + Fixtures.seedPayloads + Fixtures.malformedSeedPayloads)
    func preview(_ path: String) throws {
        #expect(PropertyChecks.preview(try Fixtures.bytes(path)) == [])
    }

    @Test("there are inputs to replay")
    func notEmpty() {
        for target in ["FuzzStrings", "FuzzPlist", "FuzzXCStrings", "FuzzFormatter", "FuzzPreview"] {
            #expect(!Fixtures.fuzzInputs(target).isEmpty, "\(target)")
        }
        #expect(Fixtures.localizationTables.count >= 5)
    }
}
