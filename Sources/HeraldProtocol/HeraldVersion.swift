/// Herald's version, from one place: ``semantic`` is the release (CHANGELOG.md's newest entry,
/// checked by a test), and ``commit`` the git commit it was built from, when the build was made
/// from a checkout.
public enum HeraldVersion {
    /// The semantic version of this release (`MAJOR.MINOR.PATCH`).
    public static let semantic = "0.6.0"

    /// The commit the build came from (12 hexadecimal digits), or `nil` when it was not built
    /// from a git checkout.
    public static let commit: String? = buildCommit

    /// `0.6.0` or `0.6.0 (commit 1a2b3c4d5e6f)`: what `herald --version`, the mock's banner and
    /// inbox, and the gateway's `/healthz` say.
    public static var description: String {
        commit.map { "\(semantic) (commit \($0))" } ?? semantic
    }
}
