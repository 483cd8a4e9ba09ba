import ArgumentParser
import Foundation

/// An app's strings and the languages to render them in, shared by `herald preview` and
/// `herald mock`.
struct LocalizationOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The app's bundle or project directory: *.lproj folders, .xcstrings catalogs, Info.plist.", valueName: "DIR"))
    var bundle: String?

    @Option(help: ArgumentHelp("One .strings, .stringsdict or .xcstrings table instead of --bundle.", valueName: "FILE"))
    var strings: String?

    @Option(help: ArgumentHelp("The languages to render in, most preferred first (preview's default: the bundle's development region, or en; the mock's: en).", valueName: "LANGS"))
    var lang: String?

    /// `--lang` as a list (commas separate, spaces around them are dropped); nil when not given.
    var languages: [String]? {
        lang.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }
    }

    func validate() throws {
        if bundle != nil && strings != nil {
            throw ValidationError("--bundle and --strings cannot be used together; give a directory to --bundle or one table to --strings.")
        }
    }
}
