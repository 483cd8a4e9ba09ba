/// A setting of a library's configuration that cannot work (the mock's, the gateway's): the
/// setting's name and what it must be. Each configuration's `validate()` throws it, and the
/// servers call `validate()` before they start, so an embedder gets the checks the `herald`
/// commands make.
public struct ConfigurationProblem: Error, CustomStringConvertible, Equatable, Sendable {
    /// The setting (the property's name).
    public var setting: String
    /// What is wrong and what would do.
    public var message: String

    /// A problem with `setting`.
    public init(setting: String, message: String) {
        self.setting = setting
        self.message = message
    }

    /// "setting: message".
    public var description: String { "\(setting): \(message)" }

    /// Throws a problem with `setting` unless `condition` holds.
    public static func require(_ condition: Bool, _ setting: String, _ message: String) throws(ConfigurationProblem) {
        if !condition { throw ConfigurationProblem(setting: setting, message: message) }
    }
}
