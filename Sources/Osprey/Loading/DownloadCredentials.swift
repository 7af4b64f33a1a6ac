import Foundation

/// A user name and password sent as HTTP basic authentication (`Authorization: Basic …`).
public struct DownloadCredentials: Sendable, Hashable {
    /// The user name.
    public var user: String
    /// The password.
    public var password: String

    /// Creates credentials for `user` and `password`.
    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// The `Authorization` header value: `Basic` and base64 of `user:password`.
    public var authorizationHeaderValue: String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }
}
