import Foundation

/// How the server reaches S3-compatible object storage: `s3://` sources, the thumbor S3 loader,
/// the result store and uploads in a bucket all use it.
public struct S3Configuration: Sendable {
    /// An access key pair, with the session token of temporary credentials.
    public struct Credentials: Sendable, Hashable {
        /// The access key id (`AWS_ACCESS_KEY_ID`).
        public var accessKeyID: String
        /// The secret access key (`AWS_SECRET_ACCESS_KEY`).
        public var secretAccessKey: String
        /// The session token of temporary credentials (`AWS_SESSION_TOKEN`). Default `nil`.
        public var sessionToken: String?

        /// Credentials from a key pair and an optional session token (default `nil`).
        public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
            self.accessKeyID = accessKeyID
            self.secretAccessKey = secretAccessKey
            self.sessionToken = sessionToken
        }
    }

    /// The endpoint (`https://s3.us-east-1.amazonaws.com`, `http://minio:9000`); `nil`: AWS's
    /// endpoint of ``region``. Default `nil`.
    public var endpoint: URL?
    /// The region requests are signed for. Default `us-east-1`.
    public var region = "us-east-1"
    /// Path-style addressing (`endpoint/bucket/key`, what MinIO and most S3-compatible servers
    /// want); else virtual-host (`bucket.endpoint/key`, AWS's default). Default `false`.
    public var pathStyle = false
    /// The key pair requests are signed with; `nil`: unsigned (public buckets). Default `nil`
    /// (the CLI fills it from the environment, see ``credentials(environment:)``).
    public var credentials: Credentials?
    /// Host names connected to at other addresses (`name` → address), as async-http-client's
    /// `dnsOverride`: an endpoint reached by virtual-host names its resolver does not know.
    /// Default empty.
    public var hostOverrides: [String: String] = [:]
    /// Whole-request timeout of the object store's requests (result store and uploads; sources use
    /// the download timeout). Default 5 s.
    public var timeout: Duration = .seconds(5)

    /// The defaults.
    public init() {}

    /// The endpoint in use: ``endpoint``, else `https://s3.amazonaws.com` for `us-east-1` and
    /// `https://s3.<region>.amazonaws.com` for the others.
    public var resolvedEndpoint: URL {
        if let endpoint { return endpoint }
        return URL(string: region == "us-east-1" ? "https://s3.amazonaws.com" : "https://s3.\(region).amazonaws.com")!
    }

    /// Credentials as the AWS SDKs find them: `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`
    /// (with `AWS_SESSION_TOKEN`), else the profile `AWS_PROFILE` (default `default`) of the
    /// shared credentials file (`AWS_SHARED_CREDENTIALS_FILE`, default `~/.aws/credentials`);
    /// `nil` when neither has a key pair (anonymous requests, for public buckets).
    public static func credentials(environment: [String: String]) -> Credentials? {
        if let id = environment["AWS_ACCESS_KEY_ID"], let secret = environment["AWS_SECRET_ACCESS_KEY"], !id.isEmpty, !secret.isEmpty {
            return Credentials(
                accessKeyID: id, secretAccessKey: secret, sessionToken: environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 })
        }
        let path =
            environment["AWS_SHARED_CREDENTIALS_FILE"]
            ?? environment["HOME"].map { "\($0)/.aws/credentials" }
        guard let path, let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return credentials(file: text, profile: environment["AWS_PROFILE"] ?? "default")
    }

    /// The key pair of `profile` in the text of a shared credentials file (INI: `[profile]`
    /// sections of `aws_access_key_id`, `aws_secret_access_key`, `aws_session_token`; `#` and `;`
    /// comments); `nil` when the profile has no key pair.
    public static func credentials(file text: String, profile: String) -> Credentials? {
        let values = section(profile, of: text)
        guard let id = values["aws_access_key_id"], let secret = values["aws_secret_access_key"], !id.isEmpty, !secret.isEmpty else { return nil }
        return Credentials(accessKeyID: id, secretAccessKey: secret, sessionToken: values["aws_session_token"])
    }

    /// The region as the AWS SDKs find it: `AWS_REGION`, else `AWS_DEFAULT_REGION`, else the
    /// `region` of the profile `AWS_PROFILE` (default `default`) in the shared config file
    /// (`AWS_CONFIG_FILE`, default `~/.aws/config`); `nil` when none names one.
    public static func region(environment: [String: String]) -> String? {
        for name in ["AWS_REGION", "AWS_DEFAULT_REGION"] {
            if let region = environment[name], !region.isEmpty { return region }
        }
        let path = environment["AWS_CONFIG_FILE"] ?? environment["HOME"].map { "\($0)/.aws/config" }
        guard let path, let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return region(file: text, profile: environment["AWS_PROFILE"] ?? "default")
    }

    /// The `region` of `profile` in the text of a shared config file, where a profile's section is
    /// `[profile NAME]` (`[default]` for `default`, which `[profile default]` may also name);
    /// `nil` when the profile sets none.
    public static func region(file text: String, profile: String) -> String? {
        var region = section("profile \(profile)", of: text)["region"]
        if region == nil, profile == "default" { region = section("default", of: text)["region"] }
        return region.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The `name = value` lines of the section `[name]` of an AWS INI file (names lowercased,
    /// spaces inside the brackets collapsed to one; `#` and `;` comment lines skipped).
    static func section(_ name: String, of text: String) -> [String: String] {
        var current: String?
        var values: [String: String] = [:]
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                current = line.dropFirst().dropLast().split(separator: " ").joined(separator: " ")
                continue
            }
            guard current == name, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            values[key] = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        }
        return values
    }
}
